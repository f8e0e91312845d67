/* out += other (float32, one shape, other any strides: a bias broadcast over rows has
 * stride 0), as numpy's ``out += other`` gives it. numpy walks a strided output whose
 * rows are short (a convolution's output-channel block: 52 of every 64 elements) with
 * a call of its inner loop per row; here each row is one vectorised run. */
#include "_kernels.h"

KERNEL_CLONES static void
add_run(float *restrict out, const float *restrict other, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        out[i] = out[i] + other[i];
}

void
add_into(const Strided *out, const Strided *other)
{
    int ndim = out->ndim, inner = ndim - 1;
    Py_ssize_t total = 1;
    for (int k = 0; k < ndim; k++)
        total *= out->shape[k];
    if (total == 0)
        return;
    if (ndim == 0) {
        *(float *)out->data = *(float *)out->data + *(const float *)other->data;
        return;
    }
    Py_ssize_t n = out->shape[inner], os = out->strides[inner], ps = other->strides[inner];
    int runs = os == (Py_ssize_t)sizeof(float) && ps == (Py_ssize_t)sizeof(float);
    Py_ssize_t index[STRIDED_MAX_DIMS] = {0};
    for (;;) {
        Py_ssize_t oo = 0, po = 0;
        for (int k = 0; k < inner; k++) {
            oo += index[k] * out->strides[k];
            po += index[k] * other->strides[k];
        }
        char *dst = out->data + oo;
        const char *src = other->data + po;
        if (runs)
            add_run((float *)dst, (const float *)src, n);
        else
            for (Py_ssize_t i = 0; i < n; i++)
                *(float *)(dst + i * os) = *(float *)(dst + i * os) + *(const float *)(src + i * ps);
        if (!strided_next_outer(index, out->shape, inner))
            return;
    }
}
