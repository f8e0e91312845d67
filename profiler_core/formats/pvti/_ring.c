/* profiler_core.formats.pvti._ring: RingBase, the C half of ring.py's RecordRing -- the
 * preallocated buffer of fixed-size records, its claim counter and its relieve limit, so that
 * C code (ipu_engine.pvti's tracepoints, through _ring.h) appends a record with a few stores
 * and Python code with one call of put(). Taking records out stays in ring.py (numpy). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "_ring.h"

static int
ring_init(PvtiRing *self, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"nbytes", "relieve", NULL};
    Py_ssize_t nbytes;
    PyObject *relieve;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "nO:RingBase", names, &nbytes, &relieve))
        return -1;
    if (self->data != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "RingBase: already initialised");
        return -1;
    }
    if (nbytes < PVTI_RECORD_SIZE || (nbytes & (nbytes - 1)) != 0) {
        PyErr_Format(PyExc_ValueError,
                     "RingBase: nbytes must be a power of two of at least %d, got %zd",
                     PVTI_RECORD_SIZE, nbytes);
        return -1;
    }
    PyObject *buf = PyByteArray_FromStringAndSize(NULL, nbytes);
    if (buf == NULL)
        return -1;
    memset(PyByteArray_AS_STRING(buf), 0, (size_t)nbytes);
    /* Held for the ring's life: the bytearray can then never be resized under the C
     * pointer (Python code reads it with numpy, never resizes it). */
    if (PyObject_GetBuffer(buf, &self->view, PyBUF_WRITABLE) < 0) {
        Py_DECREF(buf);
        return -1;
    }
    self->buf = buf;
    self->data = self->view.buf;
    self->mask = nbytes - 1;
    self->claimed = 0;
    self->limit_at = INT64_MAX;
    Py_INCREF(relieve);
    Py_XSETREF(self->relieve, relieve);
    return 0;
}

static int
ring_traverse(PvtiRing *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->relieve);
    return 0;
}

static int
ring_clear(PvtiRing *self)
{
    Py_CLEAR(self->relieve);
    return 0;
}

static void
ring_dealloc(PvtiRing *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    ring_clear(self);
    if (self->data != NULL) {
        PyBuffer_Release(&self->view);
        self->data = NULL;
    }
    Py_CLEAR(self->buf);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

/* put(start_ns, end_ns, tid, point, depth): one record; calls relieve() when the ring asks. */
static PyObject *
ring_put(PvtiRing *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError, "put() takes 5 arguments (%zd given)", nargs);
        return NULL;
    }
    if (self->data == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "RingBase: not initialised");
        return NULL;
    }
    long long v[5];
    for (int k = 0; k < 5; k++) {
        v[k] = PyLong_AsLongLong(args[k]);
        if (v[k] == -1 && PyErr_Occurred())
            return NULL;
    }
    if (v[3] < INT32_MIN || v[3] > INT32_MAX || v[4] < INT32_MIN || v[4] > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "put(): point and depth must fit 32 bits");
        return NULL;
    }
    if (pvti_ring_put(self, v[0], v[1], v[2], (int32_t)v[3], (int32_t)v[4]))
        return PyObject_CallNoArgs(self->relieve);
    Py_RETURN_NONE;
}

static PyMethodDef ring_methods[] = {
    {"put", (PyCFunction)(void (*)(void))ring_put, METH_FASTCALL,
     "put(start_ns, end_ns, tid, point, depth): one record (calls relieve() when due)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef ring_members[] = {
    {"buf", T_OBJECT, offsetof(PvtiRing, buf), READONLY, "the records (a bytearray)"},
    {"claimed", T_LONGLONG, offsetof(PvtiRing, claimed), READONLY,
     "the byte offset the next record takes (every record before it is claimed)"},
    {"limit_at", T_LONGLONG, offsetof(PvtiRing, limit_at), 0,
     "a record claimed at this byte offset or later calls relieve()"},
    {"relieve", T_OBJECT, offsetof(PvtiRing, relieve), 0, "called when the ring fills"},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot ring_slots[] = {
    {Py_tp_doc, "The C half of a RecordRing: records, claim counter, relieve limit."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, ring_init},
    {Py_tp_dealloc, ring_dealloc},
    {Py_tp_traverse, ring_traverse},
    {Py_tp_clear, ring_clear},
    {Py_tp_methods, ring_methods},
    {Py_tp_members, ring_members},
    {0, NULL},
};

static PyType_Spec ring_spec = {
    .name = "profiler_core.formats.pvti._ring.RingBase",
    .basicsize = sizeof(PvtiRing),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = ring_slots,
};

static int
ring_exec(PyObject *module)
{
    PyObject *type = PyType_FromModuleAndSpec(module, &ring_spec, NULL);
    if (type == NULL)
        return -1;
    int rc = PyModule_AddObjectRef(module, "RingBase", type);
    Py_DECREF(type);
    if (rc < 0)
        return -1;
    return PyModule_AddIntConstant(module, "RECORD_SIZE", PVTI_RECORD_SIZE);
}

static PyModuleDef_Slot ring_module_slots[] = {
    {Py_mod_exec, ring_exec},
    {0, NULL},
};

static struct PyModuleDef ring_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "profiler_core.formats.pvti._ring",
    .m_doc = "The C half of the tracepoints' record ring (see ring.py).",
    .m_size = 0,
    .m_slots = ring_module_slots,
};

PyMODINIT_FUNC
PyInit__ring(void)
{
    return PyModuleDef_Init(&ring_module);
}
