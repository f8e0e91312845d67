/* TracedCall(tracepoint, func): what `@Tracepoint(channel, label)` and `@instrument_fn`
 * return -- calls `func` inside a span of `tracepoint`, ended also when `func` raises. It
 * binds as a method the way a function does and has a __dict__ for functools.wraps'
 * attributes (tracepoint.py copies them); a call is a vectorcall, no Python frame. */
#include "_tracepoint.h"

typedef struct {
    PyObject_HEAD
    PvtiTracepoint *tracepoint;
    PyObject *func;
    PyObject *dict;
    PyObject *weakreflist;
    vectorcallfunc vectorcall;
} TracedCall;

static PyObject *
traced_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    TracedCall *self = (TracedCall *)op;
    PvtiTracepoint *tp = self->tracepoint;
    Py_INCREF(tp); /* the span's end needs it even if the call drops this TracedCall */
    if (pvti_span_begin(tp) < 0) {
        Py_DECREF(tp);
        return NULL;
    }
    PyObject *result = PyObject_Vectorcall(self->func, args, nargsf, kwnames);
    if (result == NULL) {
        /* as `finally:` does: the span ends, and an error ending it has the call's as
         * its context */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (pvti_span_end(tp) < 0) {
            PyErr_NormalizeException(&type, &value, &tb);
            if (tb != NULL)
                PyException_SetTraceback(value, tb);
            PyObject *type2, *value2, *tb2;
            PyErr_Fetch(&type2, &value2, &tb2);
            PyErr_NormalizeException(&type2, &value2, &tb2);
            PyException_SetContext(value2, value); /* steals value */
            Py_XDECREF(type);
            Py_XDECREF(tb);
            PyErr_Restore(type2, value2, tb2);
        }
        else {
            PyErr_Restore(type, value, tb);
        }
    }
    else if (pvti_span_end(tp) < 0) {
        Py_CLEAR(result);
    }
    Py_DECREF(tp);
    return result;
}

static PyObject *
traced_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *tracepoint, *func;
    if (!_PyArg_NoKeywords("TracedCall", kwds) ||
        !PyArg_ParseTuple(args, "O!O:TracedCall", &PvtiTracepointType, &tracepoint, &func))
        return NULL;
    if (!PyCallable_Check(func)) {
        PyErr_Format(PyExc_TypeError, "TracedCall: %R is not callable", func);
        return NULL;
    }
    TracedCall *self = (TracedCall *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->tracepoint = (PvtiTracepoint *)Py_NewRef(tracepoint);
    self->func = Py_NewRef(func);
    self->vectorcall = traced_vectorcall;
    return (PyObject *)self;
}

/* As a function binds: looked up on an instance, a method of that instance. */
static PyObject *
traced_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

/* Pickled by its name, as the function it replaces in its module would be. */
static PyObject *
traced_reduce(PyObject *self, PyObject *unused)
{
    return PyObject_GetAttrString(self, "__qualname__");
}

static PyObject *
traced_repr(TracedCall *self)
{
    return PyUnicode_FromFormat("<traced %R>", self->func);
}

static int
traced_traverse(TracedCall *self, visitproc visit, void *arg)
{
    Py_VISIT(self->tracepoint);
    Py_VISIT(self->func);
    Py_VISIT(self->dict);
    return 0;
}

static int
traced_clear(TracedCall *self)
{
    Py_CLEAR(self->tracepoint);
    Py_CLEAR(self->func);
    Py_CLEAR(self->dict);
    return 0;
}

static void
traced_dealloc(TracedCall *self)
{
    PyObject_GC_UnTrack(self);
    if (self->weakreflist != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    traced_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef traced_methods[] = {
    {"__reduce__", traced_reduce, METH_NOARGS, "Pickled by its qualified name."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef traced_members[] = {
    {"tracepoint", T_OBJECT, offsetof(TracedCall, tracepoint), READONLY, "its Tracepoint"},
    {"__dictoffset__", T_PYSSIZET, offsetof(TracedCall, dict), READONLY, NULL},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(TracedCall, weakreflist), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(TracedCall, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef traced_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PvtiTracedCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ipu_engine.pvti._tracepoint.TracedCall",
    .tp_doc = "TracedCall(tracepoint, func)\n--\n\n"
              "Calls func inside a span of tracepoint (what a traced function is).",
    .tp_basicsize = sizeof(TracedCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = traced_new,
    .tp_dealloc = (destructor)traced_dealloc,
    .tp_traverse = (traverseproc)traced_traverse,
    .tp_clear = (inquiry)traced_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(TracedCall, vectorcall),
    .tp_descr_get = traced_get,
    .tp_dictoffset = offsetof(TracedCall, dict),
    .tp_weaklistoffset = offsetof(TracedCall, weakreflist),
    .tp_repr = (reprfunc)traced_repr,
    .tp_methods = traced_methods,
    .tp_members = traced_members,
    .tp_getset = traced_getset,
};
