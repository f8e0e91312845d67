/* profiler_core.trace._walk: the two linear passes of nesting.py that numpy can only do in
 * several sorts (issue 42: 10M events spent ~2.5 s in them).
 *
 * thread_order(): the walk order (by thread, start, longest first; ties in index order,
 * as np.lexsort's stable sort gives them) found by a counting sort of the threads, when
 * each thread's events are already in (start, longest first) order in the columns -- the
 * usual trace, written in time order per thread. False when they are not (the caller then
 * sorts with numpy).
 *
 * stack_depths(): the stack walk of nesting.stacked_depths over events in walk order, one
 * pass with a stack of open ends -- the same depths, crossing spans or not.
 *
 * Both take C-contiguous numpy buffers of the dtypes nesting.py keeps (int32 threads, int64
 * ns) and check every length and index they read. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    Py_buffer view;
    int held;
} Held;

static int
get(PyObject *obj, Held *h, const char *format, Py_ssize_t itemsize, int writable,
    const char *what)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &h->view, flags) < 0)
        return -1;
    h->held = 1;
    const char *f = h->view.format ? h->view.format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@')
        f++;
    if (h->view.itemsize != itemsize || h->view.ndim != 1 || strchr(format, f[0]) == NULL ||
        f[1] != 0) {
        PyErr_Format(PyExc_TypeError, "%s: expected a 1-d array of %zd-byte items (%s)", what,
                     itemsize, format);
        return -1;
    }
    return 0;
}

/* The columns both passes read, h[0..2]: thread (int32), start and end (int64) of one
 * length, which is returned (-1 with a Python error set). */
static Py_ssize_t
get_columns(PyObject *const *args, Held *h, const char *what)
{
    if (get(args[0], &h[0], "i", 4, 0, "thread") < 0 ||
        get(args[1], &h[1], "lq", 8, 0, "start") < 0 ||
        get(args[2], &h[2], "lq", 8, 0, "end") < 0)
        return -1;
    Py_ssize_t n = h[0].view.len / 4;
    if (h[1].view.len != 8 * n || h[2].view.len != 8 * n) {
        PyErr_Format(PyExc_ValueError, "%s: columns of different lengths", what);
        return -1;
    }
    return n;
}

static void
release(Held *h, int n)
{
    for (int k = 0; k < n; k++)
        if (h[k].held)
            PyBuffer_Release(&h[k].view);
}

/* thread_order(thread: int32, start: int64, end: int64, out: int32 | int64) -> bool */
static PyObject *
thread_order(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "thread_order(thread, start, end, out)");
        return NULL;
    }
    Held h[4];
    memset(h, 0, sizeof(h));
    PyObject *result = NULL;
    Py_ssize_t *next = NULL;
    Py_ssize_t n = get_columns(args, h, "thread_order");
    if (n < 0)
        goto done;
    if (PyObject_GetBuffer(args[3], &h[3].view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT |
                                                     PyBUF_WRITABLE) < 0)
        goto done;
    h[3].held = 1;
    Py_ssize_t out_size = h[3].view.itemsize;
    if (h[3].view.len != out_size * n || (out_size != 4 && out_size != 8) ||
        (out_size == 4 && n > INT32_MAX)) {
        PyErr_SetString(PyExc_ValueError, "thread_order: columns of different lengths");
        goto done;
    }
    const int32_t *thread = h[0].view.buf;
    const int64_t *start = h[1].view.buf, *end = h[2].view.buf;
    int32_t top = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (thread[i] < 0) {
            result = Py_NewRef(Py_False); /* not a track index: numpy sorts it */
            goto done;
        }
        if (thread[i] > top)
            top = thread[i];
    }
    if ((Py_ssize_t)top + 1 > n + 1024) { /* sparse thread numbers: numpy sorts them */
        result = Py_NewRef(Py_False);
        goto done;
    }
    Py_ssize_t threads = (Py_ssize_t)top + 1;
    next = PyMem_Calloc((size_t)threads + 1, sizeof(Py_ssize_t));
    /* per thread: its first slot in the order, then the last event placed there */
    Py_ssize_t *last = PyMem_Malloc(((size_t)threads + 1) * sizeof(Py_ssize_t));
    if (next == NULL || last == NULL) {
        PyMem_Free(last);
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        next[thread[i] + 1]++;
    for (Py_ssize_t t = 0; t < threads; t++) {
        next[t + 1] += next[t];
        last[t] = -1;
    }
    int sorted = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t t = thread[i];
        Py_ssize_t j = last[t];
        /* (start, -end) must not decrease within the thread: ties keep index order */
        if (j >= 0 && (start[i] < start[j] || (start[i] == start[j] && end[i] > end[j]))) {
            sorted = 0;
            break;
        }
        last[t] = i;
        Py_ssize_t slot = next[t]++;
        if (out_size == 4)
            ((int32_t *)h[3].view.buf)[slot] = (int32_t)i;
        else
            ((int64_t *)h[3].view.buf)[slot] = (int64_t)i;
    }
    PyMem_Free(last);
    result = Py_NewRef(sorted ? Py_True : Py_False);
done:
    PyMem_Free(next);
    release(h, 4);
    return result;
}

/* stack_depths(thread: int32, start: int64, end: int64, out: int32): the events in walk
 * order; out[k] = how many spans of its thread still enclose event k. */
static PyObject *
stack_depths(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "stack_depths(thread, start, end, out)");
        return NULL;
    }
    Held h[4];
    memset(h, 0, sizeof(h));
    PyObject *result = NULL;
    int64_t *stack = NULL;
    Py_ssize_t n = get_columns(args, h, "stack_depths");
    if (n < 0 || get(args[3], &h[3], "i", 4, 1, "out") < 0)
        goto done;
    if (h[3].view.len != 4 * n) {
        PyErr_SetString(PyExc_ValueError, "stack_depths: columns of different lengths");
        goto done;
    }
    const int32_t *thread = h[0].view.buf;
    const int64_t *start = h[1].view.buf, *end = h[2].view.buf;
    int32_t *out = h[3].view.buf;
    Py_ssize_t cap = 64, top = 0;
    stack = PyMem_Malloc(sizeof(int64_t) * (size_t)cap);
    if (stack == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        int64_t s = start[k], e = end[k];
        if (k == 0 || thread[k] != thread[k - 1])
            top = 0;
        /* ends at or before s close, but an instant at s keeps the spans ending at s */
        while (top > 0 && stack[top - 1] <= s && !(stack[top - 1] == s && e == s))
            top--;
        out[k] = (int32_t)(top < INT32_MAX ? top : INT32_MAX);
        if (e > s) {
            if (top == cap) {
                cap *= 2;
                int64_t *grown = PyMem_Realloc(stack, sizeof(int64_t) * (size_t)cap);
                if (grown == NULL) {
                    PyErr_NoMemory();
                    goto done;
                }
                stack = grown;
            }
            stack[top++] = e;
        }
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(stack);
    release(h, 4);
    return result;
}

static PyMethodDef walk_methods[] = {
    {"thread_order", (PyCFunction)(void (*)(void))thread_order, METH_FASTCALL,
     "thread_order(thread, start, end, out) -> bool: the walk order into out when each "
     "thread's events are in (start, longest first) order already."},
    {"stack_depths", (PyCFunction)(void (*)(void))stack_depths, METH_FASTCALL,
     "stack_depths(thread, start, end, out): the stack walk's depths of events in walk "
     "order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef walk_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "profiler_core.trace._walk",
    .m_doc = "Linear passes of the nesting walk (see nesting.py).",
    .m_size = 0,
    .m_methods = walk_methods,
};

PyMODINIT_FUNC
PyInit__walk(void)
{
    return PyModule_Create(&walk_module);
}
