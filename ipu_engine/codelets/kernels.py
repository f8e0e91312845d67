"""The built-in codelets' native kernels (``_kernels.c`` and its files): what numpy would
do in many passes or many small calls, done in one pass over strided views of engine
memory -- a depthwise convolution's sums, a reduce's partials, a maximum or minimum with
one value (ReLU, Clip), a bias added to strided rows; the strided copy is the engine's
(``poplar/strided.py``). Each computes what the vertices compute, in the same float32
operations and order (built without fused multiply-adds);
``tests/ipu_engine/test_native_kernels.py`` holds them to numpy references. There is no
Python fallback: C is the path."""

from __future__ import annotations

from profiler_core.native import native_module

_kernels = native_module("ipu_engine.codelets._kernels", "the codelets' kernels are a C module")

#: ``depthwise(x, w, bias, out, top, left, stride_h, stride_w, dilation_h, dilation_w)``:
#: x [*lead, H, W, G], w [*lead, KH, KW, G, F], bias [*lead, G, F] or None, out [*lead,
#: G, F, rows, cols], float32 (at most 8 lead dimensions).
depthwise = _kernels.depthwise
#: ``sum_partials(partials [D, N], out [N])``, float32: out = partial 0 + 1 + 2 ...
sum_partials = _kernels.sum_partials
#: ``bound(x, out, c, maximum)``: ``out = np.maximum(x, c)`` (or ``np.minimum``) bit for
#: bit, float32, ``out`` either ``x`` itself or apart from it (a transposed 2-D ``x`` is
#: read in 16 x 16 tiles).
bound = _kernels.bound
#: ``add_into(out, other)``: ``out += other``, float32, one shape (``other`` may be a
#: broadcast view: a bias over rows), each row one vectorised run.
add_into = _kernels.add_into

#: Lead dimensions ``depthwise`` takes.
MAX_LEAD_DIMS = 8
