/* The team's steps (_team_steps.c): what a compiled plan's pieces are made of -- a BLAS
 * product, a bias added, a copy, blanks zeroed, a depthwise convolution, an element-wise
 * operation, a bound, partials summed -- each computing what the Python call it stands
 * for computes, to the bit. _team.c runs them on every core. */
#ifndef IPU_TEAM_H
#define IPU_TEAM_H

#include "_kernels.h"

#include <stdint.h>

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
typedef int64_t BlasInt; /* numpy's OpenBLAS is built with 64-bit integers (ILP64) */
typedef void (*SgemmFn)(int order, int trans_a, int trans_b, BlasInt m, BlasInt n, BlasInt k,
                        float alpha, const float *a, BlasInt lda, const float *b, BlasInt ldb,
                        float beta, float *c, BlasInt ldc);

extern SgemmFn sgemm; /* numpy's cblas_sgemm (set_sgemm), or NULL */

enum { GEMM, ADD, COPY, ZERO, DEPTHWISE, BINARY, BOUND, PARTIALS };
enum { OP_ADD, OP_SUBTRACT, OP_MULTIPLY, OP_DIVIDE };

typedef struct {
    int trans_a, trans_b;
    BlasInt m, n, k, lda, ldb, ldc;
    const float *a, *b;
    float *c;
} Gemm;

typedef struct {
    char *rows;
    Py_ssize_t count, step; /* rows, bytes between them */
    int64_t *at;            /* the zeros' element indexes within a row */
    Py_ssize_t zeros;
} Zeros;

typedef struct {
    int kind;
    union {
        Gemm gemm;
        struct {
            Strided a, b; /* ADD: out, other; COPY: destination, source */
        } pair;
        Zeros zero;
        struct {
            Strided x, w, bias, out;
            DepthwiseGeometry geometry;
            int has_bias;
        } depthwise;
        struct {
            Strided out, a, b; /* BINARY: out = a op b; BOUND: out = max(a, c) / min */
            int op;            /* BINARY: OP_*; BOUND: 1 for the maximum */
            float c;
        } map;
    } u;
} Step;

/* Fills ``s`` from ``item`` (kind, *arguments), keeping the arguments alive in the list
 * ``kept``; 0, or -1 with a Python error where C would not compute what Python does. */
int team_step_compile(Step *s, PyObject *item, PyObject *kept);
/* 0, or -1 when a step could not allocate memory (a depthwise convolution's plane). */
int team_step_run(const Step *s);
void team_step_free(Step *s);
const char *team_step_name(int kind);

#endif
