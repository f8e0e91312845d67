/* An element-wise maximum or minimum with one value (ReLU, a Clip's bounds), as numpy's
 * np.maximum(x, c) / np.minimum(x, c) give it bit for bit: x where x > c (x < c) or x is
 * NaN, else c (so max(-0.0, 0.0) is 0.0). numpy runs a scalar operand through its
 * strided loop, one element at a time (~3x slower than its vector loops); here a
 * vectorised compare and select over each contiguous run. */
#include "_kernels.h"

KERNEL_CLONES static void
bound_run(float *restrict out, const float *restrict x, Py_ssize_t n, float c, int maximum)
{
    if (maximum) {
        for (Py_ssize_t i = 0; i < n; i++) {
            float v = x[i];
            out[i] = (v > c || v != v) ? v : c;
        }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            float v = x[i];
            out[i] = (v < c || v != v) ? v : c;
        }
    }
}

/* The same for an element at a time, in place or strided. */
static inline float
bound_one(float v, float c, int maximum)
{
    if (maximum)
        return (v > c || v != v) ? v : c;
    return (v < c || v != v) ? v : c;
}

void
bound(const Strided *x, const Strided *out, float c, int maximum)
{
    int ndim = x->ndim, inner = ndim - 1;
    Py_ssize_t total = 1;
    for (int k = 0; k < ndim; k++)
        total *= x->shape[k];
    if (total == 0)
        return;
    if (ndim == 0) {
        *(float *)out->data = bound_one(*(const float *)x->data, c, maximum);
        return;
    }
    Py_ssize_t n = x->shape[inner], xs = x->strides[inner], os = out->strides[inner];
    int contiguous = xs == (Py_ssize_t)sizeof(float) && os == (Py_ssize_t)sizeof(float);
    int same = x->data == out->data;
    Py_ssize_t index[STRIDED_MAX_DIMS] = {0};
    for (;;) {
        Py_ssize_t xo = 0, oo = 0;
        for (int k = 0; k < inner; k++) {
            xo += index[k] * x->strides[k];
            oo += index[k] * out->strides[k];
        }
        const char *src = x->data + xo;
        char *dst = out->data + oo;
        if (contiguous && !same)
            bound_run((float *)dst, (const float *)src, n, c, maximum);
        else
            for (Py_ssize_t i = 0; i < n; i++)
                *(float *)(dst + i * os) = bound_one(*(const float *)(src + i * xs), c, maximum);
        int k = inner - 1; /* the next index of the outer axes, last fastest */
        for (; k >= 0; k--) {
            if (++index[k] < x->shape[k])
                break;
            index[k] = 0;
        }
        if (k < 0)
            return;
    }
}
