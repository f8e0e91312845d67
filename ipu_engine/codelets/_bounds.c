/* An element-wise maximum or minimum with one value (ReLU, a Clip's bounds), as numpy's
 * np.maximum(x, c) / np.minimum(x, c) give it bit for bit: x where x > c (x < c) or x is
 * NaN, else c (so max(-0.0, 0.0) is 0.0). numpy runs a scalar operand through its
 * strided loop, one element at a time (~3x slower than its vector loops); here a
 * vectorised compare and select over each contiguous run (a transposed x: 16 rows of out
 * at a time copied in tiles through registers, then bound in cache). */
#include "_kernels.h"

#include <string.h>

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

/* In place: x[i] = bound(x[i]), i < n. */
KERNEL_CLONES static void
bound_in_place(float *x, Py_ssize_t n, float c, int maximum)
{
    if (maximum) {
        for (Py_ssize_t i = 0; i < n; i++) {
            float v = x[i];
            x[i] = (v > c || v != v) ? v : c;
        }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            float v = x[i];
            x[i] = (v < c || v != v) ? v : c;
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

/* A 2-D x read across out's rows (x [i, j] contiguous along i, out along j: an NCHW view
 * of an NHWC activation), x and out apart: 16 rows of out at a time are copied from x
 * in 16 x 16 tiles transposed in registers, then bound in place while they are in
 * cache -- one pass over memory, where a copy into rows then a bound was two. */
KERNEL_CLONES static void
bound_transposed(const Strided *x, const Strided *out, float c, int maximum)
{
    Py_ssize_t ni = x->shape[0], nj = x->shape[1];
    Py_ssize_t xsj = x->strides[1], osi = out->strides[0];
    const Py_ssize_t item = sizeof(float);
    for (Py_ssize_t i0 = 0; i0 < ni; i0 += 16) {
        Py_ssize_t rows = ni - i0 < 16 ? ni - i0 : 16;
        for (Py_ssize_t j0 = 0; j0 < nj; j0 += 16) {
            Py_ssize_t cols = nj - j0 < 16 ? nj - j0 : 16;
            const char *src = x->data + i0 * item + j0 * xsj;
            char *dst = out->data + i0 * osi + j0 * item;
            if (rows < 16 || cols < 16) { /* an edge: element by element */
                for (Py_ssize_t i = 0; i < rows; i++)
                    for (Py_ssize_t j = 0; j < cols; j++)
                        *(float *)(dst + i * osi + j * item) =
                            *(const float *)(src + i * item + j * xsj);
                continue;
            }
            Row16 tile[16];
            for (int k = 0; k < 16; k++)
                memcpy(&tile[k], src + k * xsj, sizeof(Row16)); /* x[i0.., j0 + k] */
            transpose16(tile);
            for (int k = 0; k < 16; k++)
                memcpy(dst + k * osi, &tile[k], sizeof(Row16)); /* out[i0 + k, j0..] */
        }
        for (Py_ssize_t i = 0; i < rows; i++)
            bound_in_place((float *)(out->data + (i0 + i) * osi), nj, c, maximum);
    }
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
    if (ndim == 2 && x->strides[0] == (Py_ssize_t)sizeof(float) &&
        os == (Py_ssize_t)sizeof(float) && xs != (Py_ssize_t)sizeof(float) &&
        x->data != out->data) {
        bound_transposed(x, out, c, maximum); /* x and out apart: the caller's contract */
        return;
    }
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
        else if (contiguous)
            bound_in_place((float *)dst, n, c, maximum);
        else
            for (Py_ssize_t i = 0; i < n; i++)
                *(float *)(dst + i * os) = bound_one(*(const float *)(src + i * xs), c, maximum);
        if (!strided_next_outer(index, x->shape, inner))
            return;
    }
}
