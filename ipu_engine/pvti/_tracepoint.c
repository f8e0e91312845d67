/* ipu_engine.pvti._tracepoint: the tracepoints' hot path in C (issue 42). A traced
 * `with Tracepoint(channel, label):` is a dict lookup (the channel's Tracepoint of that
 * label), two clock reads, a push and a pop on the thread's stack of open spans (C arrays),
 * and one 64-byte record appended to the writer's ring (profiler_core's _ring.h); nothing
 * is allocated per event. tracepoint.py and session.py subclass these types and keep the
 * checks, error messages and the rare paths (a new label, a new thread) in Python. This file
 * is the module and the Tracepoint type; see _tracepoint.h for the rest. */
#include "_tracepoint.h"

PvtiRing *pvti_current_ring;
static PyTypeObject *ring_type; /* profiler_core.formats.pvti._ring.RingBase */
static PyObject *make_name;     /* "_make" */

/* -- Tracepoint ------------------------------------------------------------------ */

/* Tracepoint(channel, label): the channel's Tracepoint of that label when it has one (the
 * hot path), else whatever the class's _make classmethod returns (checks, a new one). */
static PyObject *
tracepoint_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (kwds == NULL && PyTuple_GET_SIZE(args) == 2) {
        PyObject *channel = PyTuple_GET_ITEM(args, 0);
        PyObject *label = PyTuple_GET_ITEM(args, 1);
        if (PyObject_TypeCheck(channel, &PvtiChannelType) && PyUnicode_Check(label)) {
            PyObject *known = ((PvtiChannel *)channel)->tracepoints;
            PyObject *found = PyDict_GetItemWithError(known, label);
            if (found != NULL)
                return Py_NewRef(found);
            if (PyErr_Occurred())
                return NULL;
        }
    }
    PyObject *make = PyObject_GetAttr((PyObject *)type, make_name);
    if (make == NULL)
        return NULL;
    PyObject *made = PyObject_Call(make, args, kwds);
    Py_DECREF(make);
    return made;
}

/* _alloc(channel, label, point): a new Tracepoint of this class, unchecked but for types. */
static PyObject *
tracepoint_alloc(PyTypeObject *type, PyObject *args)
{
    PyObject *channel, *label;
    int point;
    if (!PyArg_ParseTuple(args, "O!Ui:_alloc", &PvtiChannelType, &channel, &label, &point))
        return NULL;
    PvtiTracepoint *self = (PvtiTracepoint *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->channel = (PvtiChannel *)Py_NewRef(channel);
    self->label = Py_NewRef(label);
    self->point = point;
    return (PyObject *)self;
}

static PyObject *
tracepoint_enter(PvtiTracepoint *self, PyObject *unused)
{
    if (pvti_span_begin(self) < 0)
        return NULL;
    return Py_NewRef(self);
}

static PyObject *
tracepoint_exit(PvtiTracepoint *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (pvti_span_end(self) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static int
tracepoint_traverse(PvtiTracepoint *self, visitproc visit, void *arg)
{
    Py_VISIT(self->channel);
    Py_VISIT(self->label);
    return 0;
}

static int
tracepoint_clear(PvtiTracepoint *self)
{
    Py_CLEAR(self->channel);
    Py_CLEAR(self->label);
    return 0;
}

static void
tracepoint_dealloc(PvtiTracepoint *self)
{
    PyObject_GC_UnTrack(self);
    tracepoint_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
tracepoint_get_point(PvtiTracepoint *self, void *unused)
{
    return PyLong_FromLong(self->point);
}

static PyMethodDef tracepoint_methods[] = {
    {"__enter__", (PyCFunction)tracepoint_enter, METH_NOARGS, "Begin the span."},
    {"__exit__", (PyCFunction)(void (*)(void))tracepoint_exit, METH_FASTCALL,
     "End the span: one record in the writer's ring."},
    {"_alloc", (PyCFunction)tracepoint_alloc, METH_VARARGS | METH_CLASS,
     "_alloc(channel, label, point): a new Tracepoint (the checks are _make's)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef tracepoint_members[] = {
    {"channel", T_OBJECT, offsetof(PvtiTracepoint, channel), READONLY, "its TraceChannel"},
    {"label", T_OBJECT, offsetof(PvtiTracepoint, label), READONLY, "its label"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef tracepoint_getset[] = {
    {"point", (getter)tracepoint_get_point, NULL, "its records' point number (a span's)",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PvtiTracepointType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ipu_engine.pvti._tracepoint.TracepointBase",
    /* the signature line is what inspect.signature(Tracepoint) reads */
    .tp_doc = "TracepointBase(channel, label)\n--\n\n"
              "A span's hot path: __enter__ and __exit__ (see Tracepoint).",
    .tp_basicsize = sizeof(PvtiTracepoint),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = tracepoint_new,
    .tp_dealloc = (destructor)tracepoint_dealloc,
    .tp_traverse = (traverseproc)tracepoint_traverse,
    .tp_clear = (inquiry)tracepoint_clear,
    .tp_methods = tracepoint_methods,
    .tp_members = tracepoint_members,
    .tp_getset = tracepoint_getset,
};

/* -- module functions ------------------------------------------------------------- */

static PyObject *
set_ring(PyObject *module, PyObject *ring)
{
    if (ring == Py_None) {
        Py_CLEAR(pvti_current_ring);
        Py_RETURN_NONE;
    }
    if (!PyObject_TypeCheck(ring, ring_type) || ((PvtiRing *)ring)->data == NULL) {
        PyErr_Format(PyExc_TypeError, "set_ring: expected an initialised RingBase, got %R",
                     ring);
        return NULL;
    }
    Py_INCREF(ring);
    Py_XSETREF(pvti_current_ring, (PvtiRing *)ring);
    Py_RETURN_NONE;
}

static PyObject *
thread_stack(PyObject *module, PyObject *unused)
{
    PvtiStack *st = pvti_current_stack(1);
    if (st == NULL)
        return NULL;
    PyObject *ring = pvti_current_ring ? (PyObject *)pvti_current_ring : Py_None;
    if (st->ring != ring)
        pvti_stack_reset(st, ring);
    return Py_NewRef(st);
}

/* end(channel): the calling thread's innermost open span, if it is on `channel`, ends. */
static PyObject *
end(PyObject *module, PyObject *channel)
{
    PvtiRing *ring = pvti_current_ring;
    if (ring == NULL)
        Py_RETURN_NONE;
    PvtiStack *st = pvti_current_stack(0);
    if (st == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    Py_ssize_t d = st->depth - 1;
    if (d < 0 || st->ring != (PyObject *)ring)
        Py_RETURN_NONE;
    PvtiTracepoint *top = st->points[d];
    if ((PyObject *)top->channel != channel)
        Py_RETURN_NONE;
    int full = pvti_record(ring, st, d, pvti_now_ns());
    st->depth = d;
    st->points[d] = NULL;
    Py_DECREF(top);
    if (full && pvti_relieve(ring) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* instant(tracepoint): an instant event of its label at the thread's current depth. */
static PyObject *
instant(PyObject *module, PyObject *arg)
{
    if (!PyObject_TypeCheck(arg, &PvtiTracepointType)) {
        PyErr_Format(PyExc_TypeError, "instant: expected a Tracepoint, got %R", arg);
        return NULL;
    }
    PvtiTracepoint *tp = (PvtiTracepoint *)arg;
    PvtiRing *ring = pvti_current_ring;
    if (ring == NULL || !tp->channel->enabled)
        Py_RETURN_NONE;
    PvtiStack *st = pvti_current_stack(1);
    if (st == NULL)
        return NULL;
    if (st->ring != (PyObject *)ring)
        pvti_stack_reset(st, (PyObject *)ring);
    int64_t t = pvti_now_ns();
    if (pvti_ring_put(ring, t, t, st->tid, tp->point + 1, (int32_t)st->depth) &&
        pvti_relieve(ring) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
monotonic_ns(PyObject *module, PyObject *unused)
{
    return PyLong_FromLongLong(pvti_now_ns());
}

static PyMethodDef module_methods[] = {
    {"set_ring", set_ring, METH_O, "The ring tracepoints record into (None: not recording)."},
    {"set_stack_hook", pvti_set_stack_hook, METH_O, "Called with each thread's new stack."},
    {"thread_stack", thread_stack, METH_NOARGS,
     "The calling thread's stack for the current ring (made on first use)."},
    {"end", end, METH_O, "End the thread's innermost span if it is on this channel."},
    {"instant", instant, METH_O, "An instant event of this tracepoint's label."},
    {"monotonic_ns", monotonic_ns, METH_NOARGS, "The clock of the records."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ipu_engine.pvti._tracepoint",
    .m_doc = "The tracepoints' hot path in C (see tracepoint.py).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__tracepoint(void)
{
    PyObject *ring_module = PyImport_ImportModule("profiler_core.formats.pvti._ring");
    if (ring_module == NULL)
        return NULL;
    ring_type = (PyTypeObject *)PyObject_GetAttrString(ring_module, "RingBase");
    Py_DECREF(ring_module);
    if (ring_type == NULL)
        return NULL;
    if (!PyType_Check(ring_type) || ring_type->tp_basicsize != sizeof(PvtiRing)) {
        PyErr_SetString(PyExc_ImportError,
                        "ipu_engine.pvti._tracepoint was built against another _ring.h "
                        "than profiler_core's RingBase: rebuild both (pip install -e .)");
        return NULL;
    }
    make_name = PyUnicode_InternFromString("_make");
    if (make_name == NULL)
        return NULL;
    if (pvti_stack_ready() < 0 || PyType_Ready(&PvtiChannelType) < 0 ||
        PyType_Ready(&PvtiTracepointType) < 0 || PyType_Ready(&PvtiTracedCallType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "ThreadStack", (PyObject *)&PvtiStackType) < 0 ||
        PyModule_AddObjectRef(m, "ChannelBase", (PyObject *)&PvtiChannelType) < 0 ||
        PyModule_AddObjectRef(m, "TracepointBase", (PyObject *)&PvtiTracepointType) < 0 ||
        PyModule_AddObjectRef(m, "TracedCall", (PyObject *)&PvtiTracedCallType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
