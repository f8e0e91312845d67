/* Strided arrays through the buffer protocol: see _strided.h. */
#include "_strided.h"

#include <string.h>

int
strided_array(PyObject *obj, Strided *out, int ndim, char format, int writable, int optional,
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
    if ((ndim >= 0 && b->ndim != ndim) || b->ndim > STRIDED_MAX_DIMS) {
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
strided_release(Strided *array)
{
    if (array->data != NULL || array->buffer.obj != NULL)
        PyBuffer_Release(&array->buffer);
    array->data = NULL;
}

int
strided_same_dims(const Strided *a, int a0, const Strided *b, int b0, int count, const char *what)
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
