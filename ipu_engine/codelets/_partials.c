/* A reduce's partials summed in one pass: each output is its first partial plus its
 * second, plus its third, ... in that order, as the numpy path adds them partial by
 * partial (no identity added first: 0.0 + -0.0 would lose the sign of an exact -0.0
 * sum). 64 outputs at a time are kept in vector registers while every partial of them is
 * added, so memory is read once and written once, instead of a pass over the outputs per
 * partial. */
#include "_kernels.h"

#include <string.h>

#define LANES 16

typedef float Lanes __attribute__((vector_size(LANES * sizeof(float))));

/* A vector of LANES floats at ``at`` (any alignment) into ``v``. */
#define LOAD(v, at) memcpy(&(v), (at), sizeof(Lanes))

KERNEL_CLONES static void
sum_contiguous(char *out, const char *first, Py_ssize_t shift, Py_ssize_t depth, Py_ssize_t n)
{
    const Py_ssize_t step = LANES * sizeof(float);
    Py_ssize_t i = 0;
    for (; i + 4 * LANES <= n; i += 4 * LANES) {
        const char *at = first + i * sizeof(float);
        Lanes a0, a1, a2, a3, v0, v1, v2, v3;
        LOAD(a0, at), LOAD(a1, at + step), LOAD(a2, at + 2 * step), LOAD(a3, at + 3 * step);
        for (Py_ssize_t p = 1; p < depth; p++) {
            at += shift;
            LOAD(v0, at), LOAD(v1, at + step), LOAD(v2, at + 2 * step), LOAD(v3, at + 3 * step);
            a0 = a0 + v0;
            a1 = a1 + v1;
            a2 = a2 + v2;
            a3 = a3 + v3;
        }
        char *dst = out + i * sizeof(float);
        memcpy(dst, &a0, sizeof(a0));
        memcpy(dst + step, &a1, sizeof(a1));
        memcpy(dst + 2 * step, &a2, sizeof(a2));
        memcpy(dst + 3 * step, &a3, sizeof(a3));
    }
    for (; i < n; i++) {
        const char *at = first + i * sizeof(float);
        float acc = *(const float *)at;
        for (Py_ssize_t p = 1; p < depth; p++)
            acc = acc + *(const float *)(at + p * shift);
        ((float *)out)[i] = acc;
    }
}

void
sum_partials(const Strided *partials, const Strided *out)
{
    Py_ssize_t depth = partials->shape[0], size = partials->shape[1];
    Py_ssize_t step = partials->strides[1], shift = partials->strides[0];
    if (step == (Py_ssize_t)sizeof(float) && out->strides[0] == (Py_ssize_t)sizeof(float)) {
        sum_contiguous(out->data, partials->data, shift, depth, size);
        return;
    }
    for (Py_ssize_t i = 0; i < size; i++) { /* strided: element by element */
        const char *at = partials->data + i * step;
        float acc = *(const float *)at;
        for (Py_ssize_t p = 1; p < depth; p++)
            acc = acc + *(const float *)(at + p * shift);
        *(float *)(out->data + i * out->strides[0]) = acc;
    }
}
