/* The built-in codelets' native kernels: what numpy does in many passes or many calls,
 * done in one pass over strided views of engine memory (issue 39). _kernels.c is the
 * module and the argument checks; _depthwise.c the depthwise convolution's sums,
 * _partials.c a reduce's partials summed, _bounds.c a maximum or minimum with one value,
 * _add.c a bias added to strided rows, _team.c a kept plan run on every core. Arrays are the engine's strided views
 * (ipu_engine/poplar/_strided.h).
 *
 * Every kernel computes what the numpy path it replaces computes, element by element in
 * the same order of float32 operations: the extension is built with -ffp-contract=off, so
 * a multiply followed by an add is never fused into one rounding (an FMA) where the
 * vertex rounds twice. */
#ifndef IPU_CODELET_KERNELS_H
#define IPU_CODELET_KERNELS_H

#include "_strided.h"

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

/* out = np.maximum(x, c) (``maximum``) or np.minimum(x, c), bit for bit, float32; x and
 * out of one shape, out either x itself or apart from it. */
void bound(const Strided *x, const Strided *out, float c, int maximum);

/* out += other, float32, one shape (other may have zero strides: broadcast). */
void add_into(const Strided *out, const Strided *other);

/* The team (_team.c): a kept plan's steps run on every core without the GIL; adds
 * TeamPlan, team_plan, set_sgemm and team_helpers to the module. 0, or -1 with an error. */
int team_init(PyObject *module);

#endif
