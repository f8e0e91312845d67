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

#endif
