/* A reduce's partials summed in one pass: each output is its first partial plus its
 * second, plus its third, ... in that order, as the numpy path adds them partial by
 * partial (no identity added first: 0.0 + -0.0 would lose the sign of an exact -0.0
 * sum). Block by block of outputs, so that a block's sums stay in the first level of
 * cache while every partial of it is added, instead of one pass over memory per partial. */
#include "_kernels.h"

#include <string.h>

#define BLOCK 1024

KERNEL_CLONES static void
add_run(float *restrict acc, const float *restrict run, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        acc[i] = acc[i] + run[i];
}

void
sum_partials(const Strided *partials, const Strided *out)
{
    Py_ssize_t depth = partials->shape[0], size = partials->shape[1];
    Py_ssize_t step = partials->strides[1], shift = partials->strides[0];
    float acc[BLOCK], run[BLOCK];
    for (Py_ssize_t lo = 0; lo < size; lo += BLOCK) {
        Py_ssize_t n = size - lo < BLOCK ? size - lo : BLOCK;
        for (Py_ssize_t p = 0; p < depth; p++) {
            const char *src = partials->data + p * shift + lo * step;
            const float *values = (const float *)src;
            if (step != (Py_ssize_t)sizeof(float)) { /* gathered into a run first */
                for (Py_ssize_t i = 0; i < n; i++)
                    run[i] = *(const float *)(src + i * step);
                values = run;
            }
            if (p == 0)
                memcpy(acc, values, (size_t)n * sizeof(float));
            else
                add_run(acc, values, n);
        }
        char *dst = out->data + lo * out->strides[0];
        if (out->strides[0] == (Py_ssize_t)sizeof(float))
            memcpy(dst, acc, (size_t)n * sizeof(float));
        else
            for (Py_ssize_t i = 0; i < n; i++)
                *(float *)(dst + i * out->strides[0]) = acc[i];
    }
}
