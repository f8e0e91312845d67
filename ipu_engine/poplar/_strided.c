/* ipu_engine.poplar._strided: engine memory copied between strided views in C (the
 * kernel: _strided_copy.c), arguments checked first so a wrong call is a Python error,
 * never a read or write outside an array. See _strided.h. */
#include "_strided.h"

#include <string.h>

/* copy(dst, src): dst[...] = src, both of one shape and item size. */
static PyObject *
py_copy(PyObject *module, PyObject *args)
{
    PyObject *d, *s;
    if (!PyArg_ParseTuple(args, "OO:copy", &d, &s))
        return NULL;
    Strided dst, src;
    if (strided_array(d, &dst, -1, 0, 1, 0, "copy: dst") < 0)
        return NULL;
    if (strided_array(s, &src, dst.ndim, 0, 0, 0, "copy: src") < 0) {
        strided_release(&dst);
        return NULL;
    }
    int ok = 0;
    if (src.itemsize != dst.itemsize || strcmp(src.buffer.format, dst.buffer.format) != 0)
        PyErr_SetString(PyExc_TypeError, "copy: src and dst hold items of different types");
    else if (strided_same_dims(&dst, 0, &src, 0, dst.ndim, "copy: src") == 0) {
        Py_BEGIN_ALLOW_THREADS
        strided_copy(&dst, &src);
        Py_END_ALLOW_THREADS
        ok = 1;
    }
    strided_release(&dst);
    strided_release(&src);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"copy", py_copy, METH_VARARGS, "copy(dst, src): dst[...] = src, in tiles"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "ipu_engine.poplar._strided",
    "Engine memory copied between strided views (see _strided.h).",
    -1,
    methods,
};

PyMODINIT_FUNC
PyInit__strided(void)
{
    return PyModule_Create(&module_def);
}
