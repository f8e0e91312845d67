/* profiler_core.trace._chrome_scan: the native kernel of the Chrome JSON import (issue 42).
 *
 * Scanner.scan() reads a buffer of the traceEvents array (as json_events._Events hands it:
 * it starts at the array's depth, outside strings) event by event, straight into column
 * buffers the caller preallocated: no Python object per event or field. The common events
 * (X spans, i/I thread instants, s/t/f flow points whose fields are plain: numbers, ints,
 * strings, an args object) are read into the columns; any other well-formed
 * event is marked OTHER with its byte span, for the per-event path to read as json.loads
 * does. Anything the kernel does not read exactly as json.loads would -- NaN, invalid or
 * surrogate UTF-8, control characters in strings, an item that is not an object, nesting
 * deeper than its limit, malformed JSON -- refuses the whole buffer (scan() returns None)
 * and the caller reads it as before. Every read is bounds-checked: running out of buffer
 * inside an event means the event is incomplete (it is left for the next buffer).
 *
 * Numbers are the values Python's float() gives: an exact fast path for mantissas of up to
 * 19 digits and decimal exponents within +-19 (exact 128-bit integer arithmetic, rounded
 * half to even), PyOS_string_to_double -- Python's own float parser -- for the rest.
 *
 * This file is the Scanner type; _chrome_event.c reads and classes one event,
 * _chrome_intern.c interns names and threads, _json_text.c and _json_number.c read JSON's
 * values (declarations in _chrome_scan.h). */
#include "_chrome_scan.h"

#include <structmember.h>
#include <string.h>

static const Py_ssize_t ITEMSIZE[C_COUNT] = {1, 1, 8, 8, 8, 8, 4, 4, 4, 8, 8, 8, 8, 8};

/* -- the type ----------------------------------------------------------------------------- */

static int
scanner_init(Scanner *self, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"max_depth", NULL};
    int max_depth = 200;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|i:Scanner", names, &max_depth))
        return -1;
    if (self->strings != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner: already initialised");
        return -1;
    }
    self->max_depth = max_depth;
    self->strings = PyList_New(0);
    self->pairs = PyList_New(0);
    if (self->strings == NULL || self->pairs == NULL)
        return -1;
    if (table_init(&self->strings_table) < 0 || table_init(&self->pairs_table) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static int
scanner_traverse(Scanner *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->strings);
    Py_VISIT(self->pairs);
    return 0;
}

static int
scanner_clear(Scanner *self)
{
    Py_CLEAR(self->strings);
    Py_CLEAR(self->pairs);
    return 0;
}

static void
scanner_dealloc(Scanner *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    scanner_clear(self);
    PyMem_Free(self->strings_table.slots);
    PyMem_Free(self->pairs_table.slots);
    PyMem_Free(self->arena);
    PyMem_Free(self->str_off);
    PyMem_Free(self->str_len);
    PyMem_Free(self->pair_key);
    PyMem_Free(self->scratch);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

/* scan(buf, columns, argbuf) -> (events, keep_from, array_end, args_used) or None. */
static PyObject *
scanner_scan(Scanner *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "scan() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    if (self->strings == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner: not initialised");
        return NULL;
    }
    if (!PyTuple_Check(args[1]) || PyTuple_GET_SIZE(args[1]) != C_COUNT) {
        PyErr_Format(PyExc_TypeError, "scan(): columns must be a tuple of %d buffers", C_COUNT);
        return NULL;
    }
    Py_buffer in, views[C_COUNT], argview;
    int got = 0, have_in = 0, have_args = 0;
    PyObject *result = NULL;
    if (PyObject_GetBuffer(args[0], &in, PyBUF_SIMPLE) < 0)
        return NULL;
    have_in = 1;
    const uint8_t *buf = in.buf, *end = buf + in.len;
    Py_ssize_t cap = in.len / 2 + 1; /* the most events a buffer can hold: {} each */
    for (; got < C_COUNT; got++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(args[1], got), &views[got],
                               PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
            goto done;
        if (views[got].len < cap * ITEMSIZE[got]) {
            got++;
            PyErr_Format(PyExc_ValueError, "scan(): column %d holds %zd bytes, %zd needed",
                         got - 1, views[got - 1].len, cap * ITEMSIZE[got - 1]);
            goto done;
        }
    }
    if (PyObject_GetBuffer(args[2], &argview, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
        goto done;
    have_args = 1;
    if (argview.len < in.len) {
        PyErr_SetString(PyExc_ValueError, "scan(): argbuf smaller than the buffer");
        goto done;
    }
    Columns c = {
        .cls = views[C_CLS].buf, .flags = views[C_FLAGS].buf,
        .ts_i = views[C_TS_I].buf, .ts_f = views[C_TS_F].buf,
        .end_i = views[C_END_I].buf, .end_f = views[C_END_F].buf,
        .name = views[C_NAME].buf, .cat = views[C_CAT].buf, .pair = views[C_PAIR].buf,
        .id = views[C_ID].buf, .args_at = views[C_ARGS_AT].buf,
        .args_len = views[C_ARGS_LEN].buf, .start = views[C_START].buf,
        .stop = views[C_STOP].buf, .argbuf = argview.buf, .args_used = 0,
    };
    int limit = self->max_depth < DEPTH_LIMIT ? self->max_depth : DEPTH_LIMIT;
    const uint8_t *p = buf;
    Py_ssize_t n = 0, keep_from = 0, array_end = -1;
    Event ev;
    for (;;) {
        while (p < end && (IS_WS[*p] || *p == ','))
            p++;
        if (p == end)
            break;
        if (*p == ']') {
            array_end = p - buf;
            break;
        }
        if (*p != '{' || n >= cap || limit < 1)
            goto refused;
        const uint8_t *at = p;
        int rc = parse_event(&p, end, limit, &ev);
        if (rc < 0)
            goto done;
        if (rc == SCAN_INCOMPLETE) {
            keep_from = at - buf;
            break;
        }
        if (rc == SCAN_BAD)
            goto refused;
        if (classify(self, &ev, &c, n) < 0)
            goto done;
        c.start[n] = at - buf;
        c.stop[n] = p - buf;
        n++;
        keep_from = p - buf;
    }
    result = Py_BuildValue("(nnnn)", n, keep_from, array_end, c.args_used);
    goto done;
refused:
    result = Py_NewRef(Py_None);
done:
    if (have_in)
        PyBuffer_Release(&in);
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&views[k]);
    if (have_args)
        PyBuffer_Release(&argview);
    return result;
}

static PyMethodDef scanner_methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scanner_scan, METH_FASTCALL,
     "scan(buf, columns, argbuf): the events complete in buf read into the columns; "
     "(events, keep_from, array_end, args_used), or None when buf is not read here."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef scanner_members[] = {
    {"strings", T_OBJECT, offsetof(Scanner, strings), READONLY,
     "the names and categories met, by id (a list of str)"},
    {"pairs", T_OBJECT, offsetof(Scanner, pairs), READONLY,
     "the (pid, tid) pairs met, by id (a list of tuples)"},
    {"max_depth", T_INT, offsetof(Scanner, max_depth), READONLY, "the nesting limit"},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot scanner_slots[] = {
    {Py_tp_doc, "Scanner(max_depth=200): reads Chrome trace events into columns."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, scanner_init},
    {Py_tp_dealloc, scanner_dealloc},
    {Py_tp_traverse, scanner_traverse},
    {Py_tp_clear, scanner_clear},
    {Py_tp_methods, scanner_methods},
    {Py_tp_members, scanner_members},
    {0, NULL},
};

static PyType_Spec scanner_spec = {
    .name = "profiler_core.trace._chrome_scan.Scanner",
    .basicsize = sizeof(Scanner),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = scanner_slots,
};

/* parse_float(text) -> float | None: the kernel's number reader on one JSON number (for
 * the tests: every value must be Python's float() of the same text). */
static PyObject *
parse_float(PyObject *module, PyObject *arg)
{
    Py_buffer in;
    if (PyObject_GetBuffer(arg, &in, PyBUF_SIMPLE) < 0)
        return NULL;
    /* a delimiter after the number: the parser needs one to know the number ended */
    uint8_t *text = PyMem_Malloc((size_t)in.len + 1);
    if (text == NULL) {
        PyBuffer_Release(&in);
        return PyErr_NoMemory();
    }
    memcpy(text, in.buf, (size_t)in.len);
    text[in.len] = ',';
    const uint8_t *p = text;
    Number num;
    int rc = in.len > 0 ? parse_number(&p, text + in.len + 1, &num, 1) : SCAN_BAD;
    int whole = p == text + in.len;
    PyMem_Free(text);
    PyBuffer_Release(&in);
    if (rc < 0)
        return NULL;
    if (rc != SCAN_OK || !whole || !num.ok)
        Py_RETURN_NONE;
    if (num.is_int)
        return PyLong_FromLongLong(num.i);
    return PyFloat_FromDouble(num.f);
}

static PyMethodDef module_methods[] = {
    {"parse_float", parse_float, METH_O,
     "parse_float(text: bytes) -> int | float | None: one JSON number as the kernel reads it."},
    {NULL, NULL, 0, NULL},
};

static int
module_exec(PyObject *module)
{
    init_tables();
    PyObject *type = PyType_FromModuleAndSpec(module, &scanner_spec, NULL);
    if (type == NULL)
        return -1;
    int rc = PyModule_AddObjectRef(module, "Scanner", type);
    Py_DECREF(type);
    if (rc < 0)
        return -1;
    if (PyModule_AddIntConstant(module, "OTHER", CLS_OTHER) < 0 ||
        PyModule_AddIntConstant(module, "COLUMNS", C_COUNT) < 0 ||
        PyModule_AddIntConstant(module, "DEPTH_LIMIT", DEPTH_LIMIT) < 0)
        return -1;
    return 0;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef chrome_scan_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "profiler_core.trace._chrome_scan",
    .m_doc = "The native kernel of the Chrome JSON import (see chrome_native.py).",
    .m_size = 0,
    .m_slots = module_slots,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__chrome_scan(void)
{
    return PyModuleDef_Init(&chrome_scan_module);
}
