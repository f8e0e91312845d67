/* ipu_engine.pvti._tracepoint: the tracepoints' hot path in C (issue 42). A traced
 * `with Tracepoint(channel, label):` is a dict lookup (the channel's Tracepoint of that
 * label), two clock reads, a push and a pop on the thread's stack of open spans (C arrays),
 * and one 64-byte record appended to the writer's ring (profiler_core's _ring.h); nothing
 * is allocated per event. tracepoint.py and session.py subclass these types and keep the
 * checks, error messages and the rare paths (a new label, a new thread) in Python. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <time.h>

#include "_ring.h"

/* -- types ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *name;
    PyObject *tracepoints; /* label -> Tracepoint */
    char enabled;
} Channel;

typedef struct {
    PyObject_HEAD
    Channel *channel;
    PyObject *label;
    int32_t point; /* 2 * the (channel, label) id; + 1 for an instant */
} Tracepoint;

typedef struct {
    PyObject_HEAD
    PyObject *weakreflist;
    int64_t tid;
    PyObject *ring; /* the ring the open entries belong to (None: none yet) */
    Py_ssize_t depth, cap;
    Tracepoint **points; /* entry k: points[k] begun at starts[k] at depth depths[k] */
    int64_t *starts;
    int32_t *depths;
} Stack;

static PyTypeObject ChannelType, TracepointType, StackType;

/* -- the process's state (the hot path reads these) --------------------------------- */

static PyTypeObject *ring_type;  /* profiler_core.formats.pvti._ring.RingBase */
static PvtiRing *current_ring;   /* the writer's ring while recording, else NULL */
static PyObject *stack_hook;     /* called with each new thread's stack (registers it) */
static PyObject *stack_key;      /* the thread-state dict's key of the thread's stack */
static PyObject *make_name;      /* "_make" */
/* The last thread's stack, borrowed from its thread-state dict: a thread-state id is never
 * reused, so while the id matches the calling thread, its dict still holds the stack. */
static uint64_t cached_thread;
static Stack *cached_stack;

static inline int64_t
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* time.monotonic_ns()'s clock */
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* -- Stack ----------------------------------------------------------------------- */

static void
stack_reset(Stack *st, PyObject *ring)
{
    Py_ssize_t n = st->depth;
    st->depth = 0;
    for (Py_ssize_t k = 0; k < n; k++)
        Py_CLEAR(st->points[k]);
    Py_INCREF(ring);
    Py_SETREF(st->ring, ring);
}

static int
stack_grow(Stack *st)
{
    Py_ssize_t cap = st->cap ? 2 * st->cap : 32;
    Tracepoint **points = PyMem_Realloc(st->points, cap * sizeof(*points));
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

static Stack *
stack_new(void)
{
    Stack *st = PyObject_New(Stack, &StackType);
    if (st == NULL)
        return NULL;
    st->weakreflist = NULL;
    st->tid = (int64_t)PyThread_get_thread_native_id();
    st->ring = current_ring ? (PyObject *)current_ring : Py_None;
    Py_INCREF(st->ring);
    st->depth = st->cap = 0;
    st->points = NULL;
    st->starts = NULL;
    st->depths = NULL;
    if (stack_grow(st) < 0) {
        Py_DECREF(st);
        return NULL;
    }
    return st;
}

static void
stack_dealloc(Stack *st)
{
    if (st->weakreflist != NULL)
        PyObject_ClearWeakRefs((PyObject *)st);
    for (Py_ssize_t k = 0; k < st->depth; k++)
        Py_CLEAR(st->points[k]);
    Py_CLEAR(st->ring);
    PyMem_Free(st->points);
    PyMem_Free(st->starts);
    PyMem_Free(st->depths);
    PyObject_Free(st);
}

/* The calling thread's stack; made (and handed to the hook) when `create`, else NULL when
 * it has none. NULL with an exception set on failure. */
static Stack *
current_stack(int create)
{
    PyThreadState *tstate = PyThreadState_Get();
    uint64_t id = PyThreadState_GetID(tstate);
    if (cached_stack != NULL && id == cached_thread)
        return cached_stack;
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
        Stack *st = stack_new();
        if (st == NULL)
            return NULL;
        if (PyDict_SetItem(dict, stack_key, (PyObject *)st) < 0) {
            Py_DECREF(st);
            return NULL;
        }
        if (stack_hook != NULL) {
            PyObject *r = PyObject_CallOneArg(stack_hook, (PyObject *)st);
            if (r == NULL) {
                Py_DECREF(st);
                return NULL;
            }
            Py_DECREF(r);
        }
        Py_DECREF(st); /* the thread's dict keeps it */
        found = (PyObject *)st;
    }
    cached_thread = id;
    cached_stack = (Stack *)found;
    return cached_stack;
}

/* Entry k ends before the entries above it (interleaved coroutines): they move down and
 * keep the depths they began at. */
static void
stack_remove(Stack *st, Py_ssize_t k)
{
    Tracepoint *gone = st->points[k];
    Py_ssize_t above = st->depth - k - 1;
    memmove(st->points + k, st->points + k + 1, above * sizeof(*st->points));
    memmove(st->starts + k, st->starts + k + 1, above * sizeof(*st->starts));
    memmove(st->depths + k, st->depths + k + 1, above * sizeof(*st->depths));
    st->depth -= 1;
    st->points[st->depth] = NULL;
    Py_DECREF(gone);
}

static PyObject *
stack_entries(Stack *st, PyObject *unused)
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
stack_get_depth(Stack *st, void *unused)
{
    return PyLong_FromSsize_t(st->depth);
}

static PyMethodDef stack_methods[] = {
    {"entries", (PyCFunction)stack_entries, METH_NOARGS,
     "(tracepoint, start_ns, depth) of the open entries, outermost first."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef stack_members[] = {
    {"tid", T_LONGLONG, offsetof(Stack, tid), READONLY, "the OS thread id"},
    {"ring", T_OBJECT, offsetof(Stack, ring), READONLY, "the ring its entries belong to"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef stack_getset[] = {
    {"depth", (getter)stack_get_depth, NULL, "how many spans are open", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject StackType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ipu_engine.pvti._tracepoint.ThreadStack",
    .tp_doc = "One thread's open tracepoints (made by the tracepoints, one per thread).",
    .tp_basicsize = sizeof(Stack),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)stack_dealloc,
    .tp_weaklistoffset = offsetof(Stack, weakreflist),
    .tp_methods = stack_methods,
    .tp_members = stack_members,
    .tp_getset = stack_getset,
};

/* -- recording --------------------------------------------------------------------- */

static int
relieve(PvtiRing *ring)
{
    Py_INCREF(ring); /* the relieve may stop the recording (set_ring(None)) */
    PyObject *r = PyObject_CallNoArgs(ring->relieve);
    Py_DECREF(ring);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* Entry k of the stack as a finished span; the entry stays (the caller removes it). */
static inline int
record(PvtiRing *ring, Stack *st, Py_ssize_t k, int64_t end_ns)
{
    return pvti_ring_put(ring, st->starts[k], end_ns, st->tid, st->points[k]->point,
                         st->depths[k]);
}

/* -- Channel ----------------------------------------------------------------------- */

static PyObject *
channel_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    Channel *self = (Channel *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->tracepoints = PyDict_New();
    if (self->tracepoints == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->name = Py_None;
    Py_INCREF(Py_None);
    self->enabled = 1;
    return (PyObject *)self;
}

static int
channel_traverse(Channel *self, visitproc visit, void *arg)
{
    Py_VISIT(self->name);
    Py_VISIT(self->tracepoints);
    return 0;
}

static int
channel_clear(Channel *self)
{
    Py_CLEAR(self->name);
    Py_CLEAR(self->tracepoints);
    return 0;
}

static void
channel_dealloc(Channel *self)
{
    PyObject_GC_UnTrack(self);
    channel_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef channel_members[] = {
    {"name", T_OBJECT, offsetof(Channel, name), 0, "the channel's name"},
    {"enabled", T_BOOL, offsetof(Channel, enabled), 0, "whether its tracepoints record"},
    {"tracepoints", T_OBJECT, offsetof(Channel, tracepoints), READONLY,
     "label -> its Tracepoint"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject ChannelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ipu_engine.pvti._tracepoint.ChannelBase",
    .tp_doc = "A trace channel's fields as the hot path reads them (see TraceChannel).",
    .tp_basicsize = sizeof(Channel),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = channel_new,
    .tp_dealloc = (destructor)channel_dealloc,
    .tp_traverse = (traverseproc)channel_traverse,
    .tp_clear = (inquiry)channel_clear,
    .tp_members = channel_members,
};

/* -- Tracepoint ------------------------------------------------------------------ */

/* Tracepoint(channel, label): the channel's Tracepoint of that label when it has one (the
 * hot path), else whatever the class's _make classmethod returns (checks, a new one). */
static PyObject *
tracepoint_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (kwds == NULL && PyTuple_GET_SIZE(args) == 2) {
        PyObject *channel = PyTuple_GET_ITEM(args, 0);
        PyObject *label = PyTuple_GET_ITEM(args, 1);
        if (PyObject_TypeCheck(channel, &ChannelType) && PyUnicode_Check(label)) {
            PyObject *known = ((Channel *)channel)->tracepoints;
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
    if (!PyArg_ParseTuple(args, "O!Ui:_alloc", &ChannelType, &channel, &label, &point))
        return NULL;
    Tracepoint *self = (Tracepoint *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->channel = (Channel *)Py_NewRef(channel);
    self->label = Py_NewRef(label);
    self->point = point;
    return (PyObject *)self;
}

static PyObject *
tracepoint_enter(Tracepoint *self, PyObject *unused)
{
    PvtiRing *ring = current_ring;
    if (ring != NULL && self->channel->enabled) {
        Stack *st = current_stack(1);
        if (st == NULL)
            return NULL;
        if (st->ring != (PyObject *)ring)
            stack_reset(st, (PyObject *)ring); /* spans left from an earlier writer go */
        Py_ssize_t d = st->depth;
        if (d == st->cap && stack_grow(st) < 0)
            return NULL;
        st->starts[d] = now_ns();
        st->points[d] = (Tracepoint *)Py_NewRef(self);
        st->depths[d] = (int32_t)d;
        st->depth = d + 1;
    }
    return Py_NewRef(self);
}

static PyObject *
tracepoint_exit(Tracepoint *self, PyObject *const *args, Py_ssize_t nargs)
{
    PvtiRing *ring = current_ring;
    if (ring == NULL)
        Py_RETURN_NONE;
    Stack *st = current_stack(0);
    if (st == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    Py_ssize_t d = st->depth - 1;
    if (d < 0 || st->ring != (PyObject *)ring)
        Py_RETURN_NONE;
    int full;
    if (st->points[d] == self) {
        /* Recorded before popped: a commit (which holds the GIL) sees it open or done. */
        full = record(ring, st, d, now_ns());
        st->depth = d;
        st->points[d] = NULL;
        Py_DECREF(self);
    }
    else {
        /* Ended below the top (spans of interleaved coroutines end out of order). */
        Py_ssize_t k = d;
        while (k >= 0 && st->points[k] != self)
            k--;
        if (k < 0)
            Py_RETURN_NONE;
        full = record(ring, st, k, now_ns());
        stack_remove(st, k);
    }
    if (full && relieve(ring) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static int
tracepoint_traverse(Tracepoint *self, visitproc visit, void *arg)
{
    Py_VISIT(self->channel);
    Py_VISIT(self->label);
    return 0;
}

static int
tracepoint_clear(Tracepoint *self)
{
    Py_CLEAR(self->channel);
    Py_CLEAR(self->label);
    return 0;
}

static void
tracepoint_dealloc(Tracepoint *self)
{
    PyObject_GC_UnTrack(self);
    tracepoint_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
tracepoint_get_point(Tracepoint *self, void *unused)
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
    {"channel", T_OBJECT, offsetof(Tracepoint, channel), READONLY, "its TraceChannel"},
    {"label", T_OBJECT, offsetof(Tracepoint, label), READONLY, "its label"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef tracepoint_getset[] = {
    {"point", (getter)tracepoint_get_point, NULL, "its records' point number (a span's)",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject TracepointType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ipu_engine.pvti._tracepoint.TracepointBase",
    /* the signature line is what inspect.signature(Tracepoint) reads */
    .tp_doc = "TracepointBase(channel, label)\n--\n\n"
              "A span's hot path: __enter__ and __exit__ (see Tracepoint).",
    .tp_basicsize = sizeof(Tracepoint),
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
        Py_CLEAR(current_ring);
        Py_RETURN_NONE;
    }
    if (!PyObject_TypeCheck(ring, ring_type) || ((PvtiRing *)ring)->data == NULL) {
        PyErr_Format(PyExc_TypeError, "set_ring: expected an initialised RingBase, got %R",
                     ring);
        return NULL;
    }
    Py_INCREF(ring);
    Py_XSETREF(current_ring, (PvtiRing *)ring);
    Py_RETURN_NONE;
}

static PyObject *
set_stack_hook(PyObject *module, PyObject *hook)
{
    Py_INCREF(hook);
    Py_XSETREF(stack_hook, hook == Py_None ? NULL : hook);
    if (hook == Py_None)
        Py_DECREF(hook);
    Py_RETURN_NONE;
}

static PyObject *
thread_stack(PyObject *module, PyObject *unused)
{
    Stack *st = current_stack(1);
    if (st == NULL)
        return NULL;
    PyObject *ring = current_ring ? (PyObject *)current_ring : Py_None;
    if (st->ring != ring)
        stack_reset(st, ring);
    return Py_NewRef(st);
}

/* end(channel): the calling thread's innermost open span, if it is on `channel`, ends. */
static PyObject *
end(PyObject *module, PyObject *channel)
{
    PvtiRing *ring = current_ring;
    if (ring == NULL)
        Py_RETURN_NONE;
    Stack *st = current_stack(0);
    if (st == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    Py_ssize_t d = st->depth - 1;
    if (d < 0 || st->ring != (PyObject *)ring)
        Py_RETURN_NONE;
    Tracepoint *top = st->points[d];
    if ((PyObject *)top->channel != channel)
        Py_RETURN_NONE;
    int full = record(ring, st, d, now_ns());
    st->depth = d;
    st->points[d] = NULL;
    Py_DECREF(top);
    if (full && relieve(ring) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* instant(tracepoint): an instant event of its label at the thread's current depth. */
static PyObject *
instant(PyObject *module, PyObject *arg)
{
    if (!PyObject_TypeCheck(arg, &TracepointType)) {
        PyErr_Format(PyExc_TypeError, "instant: expected a Tracepoint, got %R", arg);
        return NULL;
    }
    Tracepoint *tp = (Tracepoint *)arg;
    PvtiRing *ring = current_ring;
    if (ring == NULL || !tp->channel->enabled)
        Py_RETURN_NONE;
    Stack *st = current_stack(1);
    if (st == NULL)
        return NULL;
    if (st->ring != (PyObject *)ring)
        stack_reset(st, (PyObject *)ring);
    int64_t t = now_ns();
    if (pvti_ring_put(ring, t, t, st->tid, tp->point + 1, (int32_t)st->depth) &&
        relieve(ring) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
monotonic_ns(PyObject *module, PyObject *unused)
{
    return PyLong_FromLongLong(now_ns());
}

static PyMethodDef module_methods[] = {
    {"set_ring", set_ring, METH_O, "The ring tracepoints record into (None: not recording)."},
    {"set_stack_hook", set_stack_hook, METH_O, "Called with each thread's new stack."},
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
    stack_key = PyUnicode_InternFromString("ipu_engine.pvti._tracepoint.stack");
    make_name = PyUnicode_InternFromString("_make");
    if (stack_key == NULL || make_name == NULL)
        return NULL;
    if (PyType_Ready(&StackType) < 0 || PyType_Ready(&ChannelType) < 0 ||
        PyType_Ready(&TracepointType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "ThreadStack", (PyObject *)&StackType) < 0 ||
        PyModule_AddObjectRef(m, "ChannelBase", (PyObject *)&ChannelType) < 0 ||
        PyModule_AddObjectRef(m, "TracepointBase", (PyObject *)&TracepointType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
