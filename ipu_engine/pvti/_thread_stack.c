/* Each thread's stack of open spans: C arrays kept in the thread state's dict (so it goes
 * when the thread ends), handed once to the stack hook (session.py names the thread and
 * lists the stack for the open_spans table). */
#include "_tracepoint.h"

uint64_t pvti_cached_thread;
PvtiStack *pvti_cached_stack;
static PyObject *stack_hook; /* called with each new thread's stack (registers it) */
static PyObject *stack_key;  /* the thread-state dict's key of the thread's stack */

void
pvti_stack_reset(PvtiStack *st, PyObject *ring)
{
    Py_ssize_t n = st->depth;
    st->depth = 0;
    for (Py_ssize_t k = 0; k < n; k++)
        Py_CLEAR(st->points[k]);
    Py_INCREF(ring);
    Py_SETREF(st->ring, ring);
}

int
pvti_stack_grow(PvtiStack *st)
{
    Py_ssize_t cap = st->cap ? 2 * st->cap : 32;
    PvtiTracepoint **points = PyMem_Realloc(st->points, cap * sizeof(*points));
    if (points == NULL)
        goto fail;
    st->points = points;
    int64_t *starts = PyMem_Realloc(st->starts, cap * sizeof(*starts));
    if (starts == NULL)
        goto fail;
    st->starts = starts;
    int32_t *depths = PyMem_Realloc(st->depths, cap * sizeof(*depths));
    if (depths == NULL)
        goto fail;
    st->depths = depths;
    st->cap = cap;
    return 0;
fail:
    PyErr_NoMemory();
    return -1;
}

/* Entry k ends before the entries above it (interleaved coroutines): they move down and
 * keep the depths they began at. */
void
pvti_stack_remove(PvtiStack *st, Py_ssize_t k)
{
    PvtiTracepoint *gone = st->points[k];
    Py_ssize_t above = st->depth - k - 1;
    memmove(st->points + k, st->points + k + 1, above * sizeof(*st->points));
    memmove(st->starts + k, st->starts + k + 1, above * sizeof(*st->starts));
    memmove(st->depths + k, st->depths + k + 1, above * sizeof(*st->depths));
    st->depth -= 1;
    st->points[st->depth] = NULL;
    Py_DECREF(gone);
}

static PvtiStack *
stack_new(void)
{
    PvtiStack *st = PyObject_New(PvtiStack, &PvtiStackType);
    if (st == NULL)
        return NULL;
    st->weakreflist = NULL;
    st->tid = (int64_t)PyThread_get_thread_native_id();
    st->ring = pvti_current_ring ? (PyObject *)pvti_current_ring : Py_None;
    Py_INCREF(st->ring);
    st->depth = st->cap = 0;
    st->points = NULL;
    st->starts = NULL;
    st->depths = NULL;
    if (pvti_stack_grow(st) < 0) {
        Py_DECREF(st);
        return NULL;
    }
    return st;
}

PvtiStack *
pvti_stack_lookup(int create)
{
    uint64_t id = PyThreadState_GetID(PyThreadState_Get());
    PyObject *dict = PyThreadState_GetDict();
    if (dict == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "pvti: this thread has no state dict");
        return NULL;
    }
    PyObject *found = PyDict_GetItemWithError(dict, stack_key);
    if (found == NULL) {
        if (PyErr_Occurred() || !create)
            return NULL;
        PvtiStack *st = stack_new();
        if (st == NULL)
            return NULL;
        if (PyDict_SetItem(dict, stack_key, (PyObject *)st) < 0) {
            Py_DECREF(st);
            return NULL;
        }
        Py_DECREF(st); /* the thread's dict keeps it */
        if (stack_hook != NULL) {
            PyObject *r = PyObject_CallOneArg(stack_hook, (PyObject *)st);
            if (r == NULL)
                return NULL;
            Py_DECREF(r);
        }
        found = (PyObject *)st;
    }
    pvti_cached_thread = id;
    pvti_cached_stack = (PvtiStack *)found;
    return pvti_cached_stack;
}

PyObject *
pvti_set_stack_hook(PyObject *module, PyObject *hook)
{
    Py_CLEAR(stack_hook);
    if (hook != Py_None)
        stack_hook = Py_NewRef(hook);
    Py_RETURN_NONE;
}

static void
stack_dealloc(PvtiStack *st)
{
    if (st->weakreflist != NULL)
        PyObject_ClearWeakRefs((PyObject *)st);
    if (st == pvti_cached_stack)
        pvti_cached_stack = NULL;
    for (Py_ssize_t k = 0; k < st->depth; k++)
        Py_CLEAR(st->points[k]);
    Py_CLEAR(st->ring);
    PyMem_Free(st->points);
    PyMem_Free(st->starts);
    PyMem_Free(st->depths);
    PyObject_Free(st);
}

static PyObject *
stack_entries(PvtiStack *st, PyObject *unused)
{
    PyObject *out = PyList_New(st->depth);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < st->depth; k++) {
        PyObject *entry = Py_BuildValue("(OLi)", (PyObject *)st->points[k],
                                        (long long)st->starts[k], (int)st->depths[k]);
        if (entry == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, k, entry);
    }
    return out;
}

static PyObject *
stack_get_depth(PvtiStack *st, void *unused)
{
    return PyLong_FromSsize_t(st->depth);
}

static PyMethodDef stack_methods[] = {
    {"entries", (PyCFunction)stack_entries, METH_NOARGS,
     "(tracepoint, start_ns, depth) of the open entries, outermost first."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef stack_members[] = {
    {"tid", T_LONGLONG, offsetof(PvtiStack, tid), READONLY, "the OS thread id"},
    {"ring", T_OBJECT, offsetof(PvtiStack, ring), READONLY, "the ring its entries belong to"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef stack_getset[] = {
    {"depth", (getter)stack_get_depth, NULL, "how many spans are open", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PvtiStackType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ipu_engine.pvti._tracepoint.ThreadStack",
    .tp_doc = "One thread's open tracepoints (made by the tracepoints, one per thread).",
    .tp_basicsize = sizeof(PvtiStack),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)stack_dealloc,
    .tp_weaklistoffset = offsetof(PvtiStack, weakreflist),
    .tp_methods = stack_methods,
    .tp_members = stack_members,
    .tp_getset = stack_getset,
};

int
pvti_stack_ready(void)
{
    stack_key = PyUnicode_InternFromString("ipu_engine.pvti._tracepoint.stack");
    if (stack_key == NULL)
        return -1;
    return PyType_Ready(&PvtiStackType);
}
