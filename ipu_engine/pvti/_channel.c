/* A trace channel's fields as the hot path reads them: TraceChannel (session.py) is this
 * type's subclass, with the checks of its arguments. */
#include "_tracepoint.h"

static PyObject *
channel_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PvtiChannel *self = (PvtiChannel *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->tracepoints = PyDict_New();
    if (self->tracepoints == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->name = Py_NewRef(Py_None);
    self->enabled = 1;
    return (PyObject *)self;
}

static int
channel_traverse(PvtiChannel *self, visitproc visit, void *arg)
{
    Py_VISIT(self->name);
    Py_VISIT(self->tracepoints);
    return 0;
}

static int
channel_clear(PvtiChannel *self)
{
    Py_CLEAR(self->name);
    Py_CLEAR(self->tracepoints);
    return 0;
}

static void
channel_dealloc(PvtiChannel *self)
{
    PyObject_GC_UnTrack(self);
    channel_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef channel_members[] = {
    {"name", T_OBJECT, offsetof(PvtiChannel, name), 0, "the channel's name"},
    {"enabled", T_BOOL, offsetof(PvtiChannel, enabled), 0, "whether its tracepoints record"},
    {"tracepoints", T_OBJECT, offsetof(PvtiChannel, tracepoints), READONLY,
     "label -> its Tracepoint"},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject PvtiChannelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ipu_engine.pvti._tracepoint.ChannelBase",
    .tp_doc = "A trace channel's fields as the hot path reads them (see TraceChannel).",
    .tp_basicsize = sizeof(PvtiChannel),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = channel_new,
    .tp_dealloc = (destructor)channel_dealloc,
    .tp_traverse = (traverseproc)channel_traverse,
    .tp_clear = (inquiry)channel_clear,
    .tp_members = channel_members,
};
