/* ipu_engine.codelets._kernels: the module, and each kernel's arguments checked before it
 * runs (shapes that agree, float32 where it computes in float32, writable outputs), so a
 * wrong call is a Python error, never a read outside an array. See _kernels.h. */
#include "_kernels.h"

#include <string.h>

int
kernels_array(PyObject *obj, Strided *out, int ndim, char format, int writable, int optional,
              const char *what)
{
    memset(out, 0, sizeof(*out));
    if (obj == Py_None && optional)
        return 0;
    int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &out->buffer, flags) < 0) {
        PyErr_Format(PyExc_TypeError, "%s: a%s strided array is needed", what,
                     writable ? " writable" : "");
        return -1;
    }
    const Py_buffer *b = &out->buffer;
    const char *fmt = b->format ? b->format : "B";
    if (*fmt == '<' || *fmt == '=' || *fmt == '@')
        fmt++;
    if (format && (fmt[0] != format || fmt[1] != '\0')) {
        PyErr_Format(PyExc_TypeError, "%s: items of type '%c' are needed, not '%s'", what, format,
                     b->format);
        goto fail;
    }
    if ((ndim >= 0 && b->ndim != ndim) || b->ndim > KERNELS_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s: %d dimensions are needed, not %d", what, ndim,
                     b->ndim);
        goto fail;
    }
    out->data = b->buf;
    out->ndim = b->ndim;
    out->itemsize = b->itemsize;
    for (int k = 0; k < b->ndim; k++) {
        out->shape[k] = b->shape[k];
        out->strides[k] = b->strides ? b->strides[k] : 0;
    }
    if (!b->strides) { /* C-contiguous */
        Py_ssize_t step = b->itemsize;
        for (int k = b->ndim - 1; k >= 0; k--) {
            out->strides[k] = step;
            step *= b->shape[k];
        }
    }
    return 0;
fail:
    PyBuffer_Release(&out->buffer);
    out->data = NULL;
    return -1;
}

void
kernels_release(Strided *array)
{
    if (array->data != NULL || array->buffer.obj != NULL)
        PyBuffer_Release(&array->buffer);
    array->data = NULL;
}

static int
same_dims(const Strided *a, int a0, const Strided *b, int b0, int count, const char *what)
{
    for (int k = 0; k < count; k++) {
        if (a->shape[a0 + k] != b->shape[b0 + k]) {
            PyErr_Format(PyExc_ValueError, "%s: dimension %d is %zd, not %zd", what, b0 + k,
                         b->shape[b0 + k], a->shape[a0 + k]);
            return -1;
        }
    }
    return 0;
}

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
    if (kernels_array(xo, &x, -1, 'f', 0, 0, "depthwise: x") < 0)
        return NULL;
    int lead = x.ndim - 3, ok = 0;
    if (lead < 0 || lead + 4 > KERNELS_MAX_DIMS) {
        PyErr_SetString(PyExc_ValueError, "depthwise: x is [*lead, H, W, G], at most 8 lead dimensions");
        goto done;
    }
    if (kernels_array(wo, &w, lead + 4, 'f', 0, 0, "depthwise: w") < 0 ||
        kernels_array(bo, &bias, lead + 2, 'f', 0, 1, "depthwise: bias") < 0 ||
        kernels_array(oo, &out, lead + 4, 'f', 1, 0, "depthwise: out") < 0)
        goto done;
    if (same_dims(&x, 0, &w, 0, lead, "depthwise: w") < 0 ||
        same_dims(&x, 0, &out, 0, lead, "depthwise: out") < 0 ||
        same_dims(&x, lead + 2, &w, lead + 2, 1, "depthwise: w's groups") < 0 ||
        same_dims(&w, lead + 2, &out, lead, 2, "depthwise: out's groups and channels") < 0)
        goto done;
    if (bias.data && (same_dims(&x, 0, &bias, 0, lead, "depthwise: bias") < 0 ||
                      same_dims(&w, lead + 2, &bias, lead, 2, "depthwise: bias's groups") < 0))
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
    kernels_release(&x);
    kernels_release(&w);
    kernels_release(&bias);
    kernels_release(&out);
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
    if (kernels_array(po, &partials, 2, 'f', 0, 0, "sum_partials: partials") < 0)
        return NULL;
    if (kernels_array(oo, &out, 1, 'f', 1, 0, "sum_partials: out") < 0) {
        kernels_release(&partials);
        return NULL;
    }
    int ok = 0;
    if (partials.shape[0] < 1)
        PyErr_SetString(PyExc_ValueError, "sum_partials: at least one partial is needed");
    else if (same_dims(&partials, 1, &out, 0, 1, "sum_partials: out") == 0) {
        Py_BEGIN_ALLOW_THREADS
        sum_partials(&partials, &out);
        Py_END_ALLOW_THREADS
        ok = 1;
    }
    kernels_release(&partials);
    kernels_release(&out);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* copy(dst, src): dst[...] = src, both of one shape and item size. */
static PyObject *
py_copy(PyObject *module, PyObject *args)
{
    PyObject *d, *s;
    if (!PyArg_ParseTuple(args, "OO:copy", &d, &s))
        return NULL;
    Strided dst, src;
    if (kernels_array(d, &dst, -1, 0, 1, 0, "copy: dst") < 0)
        return NULL;
    if (kernels_array(s, &src, dst.ndim, 0, 0, 0, "copy: src") < 0) {
        kernels_release(&dst);
        return NULL;
    }
    int ok = 0;
    if (src.itemsize != dst.itemsize || strcmp(src.buffer.format, dst.buffer.format) != 0)
        PyErr_SetString(PyExc_TypeError, "copy: src and dst hold items of different types");
    else if (same_dims(&dst, 0, &src, 0, dst.ndim, "copy: src") == 0) {
        Py_BEGIN_ALLOW_THREADS
        strided_copy(&dst, &src);
        Py_END_ALLOW_THREADS
        ok = 1;
    }
    kernels_release(&dst);
    kernels_release(&src);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"depthwise", py_depthwise, METH_VARARGS,
     "depthwise(x, w, bias, out, top, left, stride_h, stride_w, dilation_h, dilation_w)"},
    {"sum_partials", py_sum_partials, METH_VARARGS, "sum_partials(partials, out)"},
    {"copy", py_copy, METH_VARARGS, "copy(dst, src)"},
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
    return PyModule_Create(&module_def);
}
