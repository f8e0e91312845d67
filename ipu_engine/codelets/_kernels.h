/* The built-in codelets' native kernels: what numpy does in many passes or many calls,
 * done in one pass over strided views of engine memory (issue 39). _kernels.c is the
 * module and the argument checks; _depthwise.c the depthwise convolution's sums,
 * _partials.c a reduce's partials summed, _strided.c a cache-blocked strided copy.
 *
 * Every kernel computes what the numpy path it replaces computes, element by element in
 * the same order of float32 operations: the extension is built with -ffp-contract=off, so
 * a multiply followed by an add is never fused into one rounding (an FMA) where the
 * vertex rounds twice. */
#ifndef IPU_CODELET_KERNELS_H
#define IPU_CODELET_KERNELS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define KERNELS_MAX_DIMS 12

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
    Py_ssize_t shape[KERNELS_MAX_DIMS];
    Py_ssize_t strides[KERNELS_MAX_DIMS];
} Strided;

/* Fills ``out`` from ``obj`` (None only when ``optional``: then out->data is NULL):
 * ``ndim`` dimensions (-1: any up to KERNELS_MAX_DIMS), item type ``format`` ('f', 'e';
 * 0: any), writable when asked. On failure a Python error naming ``what`` is set and -1
 * returned; on success kernels_release must follow. */
int kernels_array(PyObject *obj, Strided *out, int ndim, char format, int writable,
                  int optional, const char *what);
void kernels_release(Strided *array);

/* out[..., g, f, r, c] = bias[..., g, f] + the kernel positions' products, in the
 * vertex's order, of a zero-padded x[..., h, w, g] by w[..., kh, kw, g, f]: the sums of
 * a depthwise convolution (one input channel per group), float32. */
typedef struct {
    Py_ssize_t top, left;         /* zero rows above, zero columns left of the input */
    Py_ssize_t stride_h, stride_w;
    Py_ssize_t dilation_h, dilation_w;
} DepthwiseGeometry;

int depthwise_sums(const Strided *x, const Strided *w, const Strided *bias, const Strided *out,
                   const DepthwiseGeometry *geometry);

/* out[i] = ((partials[0, i] + partials[1, i]) + partials[2, i]) + ..., float32. */
void sum_partials(const Strided *partials, const Strided *out);

/* dst[...] = src[...] (same shape and item size), in tiles when the two are laid out in
 * different orders (a transpose), so that both are read and written a cache line at a
 * time. */
void strided_copy(const Strided *dst, const Strided *src);

#endif
