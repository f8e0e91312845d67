/* ipu_engine.codelets._kernels: the module, and each kernel's arguments checked before it
 * runs (shapes that agree, float32 where it computes in float32, writable outputs), so a
 * wrong call is a Python error, never a read outside an array. See _kernels.h; the
 * strided arrays are the engine's (ipu_engine/poplar/_strided.h). */
#include "_kernels.h"

#include <string.h>

/* depthwise(x, w, bias, out, top, left, stride_h, stride_w, dilation_h, dilation_w):
 * x [*lead, H, W, G], w [*lead, KH, KW, G, F], bias [*lead, G, F] or None,
 * out [*lead, G, F, rows, cols], all float32. */
static PyObject *
py_depthwise(PyObject *module, PyObject *args)
{
    PyObject *xo, *wo, *bo, *oo;
    DepthwiseGeometry geo;
    if (!PyArg_ParseTuple(args, "OOOOnnnnnn:depthwise", &xo, &wo, &bo, &oo, &geo.top, &geo.left,
                          &geo.stride_h, &geo.stride_w, &geo.dilation_h, &geo.dilation_w))
        return NULL;
    Strided x, w, bias, out;
    memset(&w, 0, sizeof(w));
    memset(&bias, 0, sizeof(bias));
    memset(&out, 0, sizeof(out));
    if (strided_array(xo, &x, -1, 'f', 0, 0, "depthwise: x") < 0)
        return NULL;
    int lead = x.ndim - 3, ok = 0;
    if (lead < 0 || lead + 4 > STRIDED_MAX_DIMS) {
        PyErr_SetString(PyExc_ValueError, "depthwise: x is [*lead, H, W, G], at most 8 lead dimensions");
        goto done;
    }
    if (strided_array(wo, &w, lead + 4, 'f', 0, 0, "depthwise: w") < 0 ||
        strided_array(bo, &bias, lead + 2, 'f', 0, 1, "depthwise: bias") < 0 ||
        strided_array(oo, &out, lead + 4, 'f', 1, 0, "depthwise: out") < 0)
        goto done;
    if (strided_same_dims(&x, 0, &w, 0, lead, "depthwise: w") < 0 ||
        strided_same_dims(&x, 0, &out, 0, lead, "depthwise: out") < 0 ||
        strided_same_dims(&x, lead + 2, &w, lead + 2, 1, "depthwise: w's groups") < 0 ||
        strided_same_dims(&w, lead + 2, &out, lead, 2, "depthwise: out's groups and channels") < 0)
        goto done;
    if (bias.data && (strided_same_dims(&x, 0, &bias, 0, lead, "depthwise: bias") < 0 ||
                      strided_same_dims(&w, lead + 2, &bias, lead, 2, "depthwise: bias's groups") < 0))
        goto done;
    if (geo.top < 0 || geo.left < 0 || geo.stride_h < 1 || geo.stride_w < 1 ||
        geo.dilation_h < 1 || geo.dilation_w < 1) {
        PyErr_SetString(PyExc_ValueError, "depthwise: padding >= 0, strides and dilations >= 1");
        goto done;
    }
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = depthwise_sums(&x, &w, bias.data ? &bias : NULL, &out, &geo);
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    ok = 1;
done:
    strided_release(&x);
    strided_release(&w);
    strided_release(&bias);
    strided_release(&out);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* sum_partials(partials, out): partials [D, N], out [N], float32, D >= 1. */
static PyObject *
py_sum_partials(PyObject *module, PyObject *args)
{
    PyObject *po, *oo;
    if (!PyArg_ParseTuple(args, "OO:sum_partials", &po, &oo))
        return NULL;
    Strided partials, out;
    if (strided_array(po, &partials, 2, 'f', 0, 0, "sum_partials: partials") < 0)
        return NULL;
    if (strided_array(oo, &out, 1, 'f', 1, 0, "sum_partials: out") < 0) {
        strided_release(&partials);
        return NULL;
    }
    int ok = 0;
    if (partials.shape[0] < 1)
        PyErr_SetString(PyExc_ValueError, "sum_partials: at least one partial is needed");
    else if (strided_same_dims(&partials, 1, &out, 0, 1, "sum_partials: out") == 0) {
        Py_BEGIN_ALLOW_THREADS
        sum_partials(&partials, &out);
        Py_END_ALLOW_THREADS
        ok = 1;
    }
    strided_release(&partials);
    strided_release(&out);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* bound(x, out, c, maximum): out = np.maximum(x, c) if maximum else np.minimum(x, c). */
static PyObject *
py_bound(PyObject *module, PyObject *args)
{
    PyObject *xo, *oo;
    float c;
    int maximum;
    if (!PyArg_ParseTuple(args, "OOfp:bound", &xo, &oo, &c, &maximum))
        return NULL;
    Strided x, out;
    if (strided_array(xo, &x, -1, 'f', 0, 0, "bound: x") < 0)
        return NULL;
    if (strided_array(oo, &out, x.ndim, 'f', 1, 0, "bound: out") < 0) {
        strided_release(&x);
        return NULL;
    }
    int ok = strided_same_dims(&x, 0, &out, 0, x.ndim, "bound: out") == 0;
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        bound(&x, &out, c, maximum);
        Py_END_ALLOW_THREADS
    }
    strided_release(&x);
    strided_release(&out);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* add_into(out, other): out += other, float32, one shape. */
static PyObject *
py_add_into(PyObject *module, PyObject *args)
{
    PyObject *oo, *po;
    if (!PyArg_ParseTuple(args, "OO:add_into", &oo, &po))
        return NULL;
    Strided out, other;
    if (strided_array(oo, &out, -1, 'f', 1, 0, "add_into: out") < 0)
        return NULL;
    if (strided_array(po, &other, out.ndim, 'f', 0, 0, "add_into: other") < 0) {
        strided_release(&out);
        return NULL;
    }
    int ok = strided_same_dims(&out, 0, &other, 0, out.ndim, "add_into: other") == 0;
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        add_into(&out, &other);
        Py_END_ALLOW_THREADS
    }
    strided_release(&out);
    strided_release(&other);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"depthwise", py_depthwise, METH_VARARGS,
     "depthwise(x, w, bias, out, top, left, stride_h, stride_w, dilation_h, dilation_w)"},
    {"sum_partials", py_sum_partials, METH_VARARGS, "sum_partials(partials, out)"},
    {"bound", py_bound, METH_VARARGS, "bound(x, out, c, maximum)"},
    {"add_into", py_add_into, METH_VARARGS, "add_into(out, other): out += other"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "ipu_engine.codelets._kernels",
    "The built-in codelets' native kernels (see _kernels.h).",
    -1,
    methods,
};

PyMODINIT_FUNC
PyInit__kernels(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (module != NULL && team_init(module) < 0)
        Py_CLEAR(module);
    return module;
}
