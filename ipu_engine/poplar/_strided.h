/* Strided arrays in C: engine memory's views (numpy arrays) taken through the buffer
 * protocol, with their byte strides, for the native kernels of the engine (_strided.c:
 * ipu_engine.poplar._strided, a strided copy) and of the built-in codelets (which
 * compile _strided_array.c too: ipu_engine.codelets._kernels). */
#ifndef IPU_STRIDED_H
#define IPU_STRIDED_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define STRIDED_MAX_DIMS 12

/* Vectorised for the machine it runs on where the compiler can choose at load time
 * (GCC's function clones on x86-64 Linux); elsewhere built for the baseline. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define KERNEL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KERNEL_CLONES
#endif

/* A strided array taken through the buffer protocol: byte strides, any sign. */
typedef struct {
    Py_buffer buffer;
    char *data;
    int ndim;
    Py_ssize_t itemsize;
    Py_ssize_t shape[STRIDED_MAX_DIMS];
    Py_ssize_t strides[STRIDED_MAX_DIMS];
} Strided;

/* Fills ``out`` from ``obj`` (None only when ``optional``: then out->data is NULL):
 * ``ndim`` dimensions (-1: any up to STRIDED_MAX_DIMS), item type ``format`` ('f', 'e';
 * 0: any), writable when asked. On failure a Python error naming ``what`` is set and -1
 * returned; on success strided_release must follow. */
int strided_array(PyObject *obj, Strided *out, int ndim, char format, int writable,
                  int optional, const char *what);
void strided_release(Strided *array);

/* 0 when a's dimensions [a0, a0 + count) equal b's [b0, b0 + count), else -1 with a
 * Python error naming ``what``. */
int strided_same_dims(const Strided *a, int a0, const Strided *b, int b0, int count,
                      const char *what);

/* dst[...] = src[...] (same shape and item size), in tiles when the two are laid out in
 * different orders (a transpose), so that both are read and written a cache line at a
 * time. */
void strided_copy(const Strided *dst, const Strided *src);

/* Steps ``index`` over the outer axes [0, inner) of ``shape``, the last fastest: 0 once
 * every index has been visited. */
static inline int
strided_next_outer(Py_ssize_t *index, const Py_ssize_t *shape, int inner)
{
    for (int k = inner - 1; k >= 0; k--) {
        if (++index[k] < shape[k])
            return 1;
        index[k] = 0;
    }
    return 0;
}

typedef float Row16 __attribute__((vector_size(16 * sizeof(float))));
typedef int32_t Lane16 __attribute__((vector_size(16 * sizeof(int32_t))));

#define LOW8 {0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23}
#define HIGH8 {8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31}
#define LOW4 {0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27}
#define HIGH4 {4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31}
#define LOW2 {0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29}
#define HIGH2 {2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31}
#define LOW1 {0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30}
#define HIGH1 {1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31}

/* One butterfly stage: the off-diagonal d x d blocks of every 2d x 2d block swapped. */
#define STAGE(r, d, low, high)                                                             \
    for (int i = 0; i < 16; i++) {                                                         \
        if (i & (d))                                                                       \
            continue;                                                                      \
        Row16 a = r[i], b = r[i + (d)];                                                    \
        r[i] = __builtin_shuffle(a, b, (Lane16)low);                                       \
        r[i + (d)] = __builtin_shuffle(a, b, (Lane16)high);                                \
    }

/* r[i][j] <-> r[j][i] for a 16 x 16 tile of 4-byte items in registers: four butterfly
 * stages (a strided copy's transposes, a depthwise convolution's NHWC writes). */
static inline __attribute__((always_inline)) void
transpose16(Row16 *r)
{
    STAGE(r, 8, LOW8, HIGH8)
    STAGE(r, 4, LOW4, HIGH4)
    STAGE(r, 2, LOW2, HIGH2)
    STAGE(r, 1, LOW1, HIGH1)
}

#endif
