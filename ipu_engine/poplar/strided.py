"""Engine memory copied between strided views in C (``_strided.c``): ``copy(dst, src)`` is
``dst[...] = src`` for two arrays of one shape and item type, walked in 16 x 16 tiles of
their innermost axes (a transpose of 4-byte items through registers), where numpy reads or
writes one of them a cache line per element. Used where engine memory is read in another
order than it lies: an NCHW view of an NHWC activation streamed to the host, an
element-wise operand read across its output's rows. There is no Python fallback."""

from __future__ import annotations

from profiler_core.native import native_module

_strided = native_module("ipu_engine.poplar._strided", "engine memory's strided copy is a C module")

copy = _strided.copy
