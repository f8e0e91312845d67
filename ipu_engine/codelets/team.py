"""A kept plan's pieces run on every core without the GIL (``_team.c``).

A compute set's kept calls (``conv_kept``) cut into pieces (``plan_parts``) are compiled
once into steps C runs alone: the BLAS products through numpy's own OpenBLAS (its
``cblas_sgemm``, by address, with the arguments numpy's matmul gives it), the biases added
to rows, the window copies, the blanks zeroed, the depthwise sums -- and so are the
memory-bound steps, a range of the output's rows a piece (``rows_plan``: element-wise
operations, ReLU and Clip's bounds, a reduction's partials). Each compute set then
releases the GIL once; the caller and native helper threads take the pieces in turn, and a
helper that has just run a piece watches for the next compute set's for a short while
instead of sleeping. With Python helpers (``workers``) a hand-over cost ~50 us -- a
sleeping thread woken, then the GIL -- so work under 0.4 ms stayed on one core; here it
is a few microseconds, and work of a tenth of that is shared.

A plan is compiled only when every call is one of these and C computes what the Python
call does to the bit (numpy would make the same BLAS call); otherwise it stays Python.
Without numpy's OpenBLAS product found (``available``) the team is off.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ipu_engine.codelets import kernels, ops_table
from ipu_engine.codelets.blas_threads import one_blas_thread, openblas_libraries
from ipu_engine.codelets.conv_products import product, windowed
from ipu_engine.poplar import workers

_kernels = kernels._kernels

#: Work (estimated seconds) below which a compiled plan runs on the calling thread alone:
#: waking a sleeping helper costs the caller a system call, a watching one nothing.
MIN_SPLIT_SECONDS = 40e-6

# numpy's OpenBLAS as scipy-openblas names its 64-bit-integer CBLAS product
_SGEMM_NAMES = ("scipy_cblas_sgemm64_", "cblas_sgemm64_")

Call = tuple[Any, tuple]
Step = tuple


@functools.cache
def available() -> bool:
    """Whether numpy's BLAS product was found (ILP64 OpenBLAS, as numpy's wheels carry)
    and handed to the team; without it no plan is compiled."""
    address = _sgemm_address()
    if address is None:
        return False
    _kernels.set_sgemm(address)
    return True


def _sgemm_address() -> int | None:
    for lib in openblas_libraries():
        for name in _SGEMM_NAMES:
            fn = getattr(lib, name, None)
            if fn is not None:
                return ctypes.cast(fn, ctypes.c_void_p).value
    return None


class TeamPieces:
    """A plan's pieces compiled for the team, with their estimated seconds."""

    __slots__ = ("blas", "plan", "seconds")

    def __init__(self, plan: Any, seconds: float) -> None:
        self.plan, self.seconds = plan, seconds
        self.blas = any("gemm" in piece for piece in plan.steps)

    @property
    def steps(self) -> list[tuple[str, ...]]:
        """Each piece's steps by kind (``gemm``, ``add``, ``copy``, ``zero``,
        ``depthwise``, ``binary``, ``bound``, ``partials``)."""
        return self.plan.steps

    def run(self, threads: int, others: Sequence[TeamPieces] = ()) -> None:
        """This plan's pieces and ``others``' on up to ``threads`` threads (one when the
        work is small), OpenBLAS on one thread in each."""
        total = self.seconds + sum(o.seconds for o in others)
        if total < MIN_SPLIT_SECONDS:
            threads = 1
        if not (self.blas or any(o.blas for o in others)):
            self.plan.run(threads, *(o.plan for o in others))
            return
        with one_blas_thread():
            self.plan.run(threads, *(o.plan for o in others))


def compiled(pieces: workers.Pieces) -> TeamPieces | None:
    """``pieces`` as a team plan, or None when a call is not one C computes alike."""
    if not available():
        return None
    steps = []
    for call in pieces.calls:
        found = _steps(call)
        if found is None:
            return None
        steps.append(found)
    try:
        plan = _kernels.team_plan(steps)
    except (ValueError, TypeError):  # numpy would take another path: stay Python
        return None
    return TeamPieces(plan, pieces.total)


def _steps(call: Call) -> list[Step] | None:
    fn, args = call
    if fn is product:
        return _product_steps(*args)
    if fn is windowed:
        copies, blanks, *operands = args
        steps: list[Step] = []
        if blanks is not None:
            layers, zeros = blanks
            steps.append(("zero", layers, np.ascontiguousarray(zeros, np.int64)))
        steps.extend(("copy", target, source) for target, source in copies)
        return steps + _product_steps(*operands)
    if fn is kernels.depthwise:
        return [("depthwise", *args)]
    return None


def _product_steps(
    patches: np.ndarray, weights: np.ndarray, b: np.ndarray | None, direct: np.ndarray
) -> list[Step]:
    """``np.matmul(patches, weights, out=direct)`` as its layers' products (the calls
    numpy's loop makes, its operands broadcast over the output's layers as matmul
    broadcasts them), then the bias added."""
    lead = direct.shape[:-2]
    patches = np.broadcast_to(patches, (*lead, *patches.shape[-2:]))
    weights = np.broadcast_to(weights, (*lead, *weights.shape[-2:]))
    steps: list[Step] = [("gemm", patches[at], weights[at], direct[at]) for at in np.ndindex(*lead)]
    if b is not None:
        steps.append(("add", direct, np.broadcast_to(b, direct.shape)))
    return steps


# numpy's float32 operations a "binary" step makes alike (one IEEE operation an element)
_BINARY = {np.add: 0, np.subtract: 1, np.multiply: 2, np.divide: 3}
#: Rough speed of one core on memory-bound steps (bytes read and written a second).
_BYTES_PER_SECOND = 8e9


def rows_plan(steps_of: Callable[[slice], list[Step]], rows: int, nbytes: int) -> TeamPieces | None:
    """Work over ``rows`` independent rows as a team plan of a few pieces of rows (four a
    core: a helper that wakes late still takes its share), ``steps_of(rows)`` each; None
    when C would not compute it alike. Pieces of many rows start at multiples of 16 (a
    transposing copy's tiles)."""
    if not available() or rows < 1:
        return None
    parts = workers.split(rows, 4 * workers.allowed())
    if rows >= 64:  # each start moved down to a multiple of 16
        bounds = [16 * (part.start // 16) for part in parts] + [rows]
        parts = [slice(a, b) for a, b in itertools.pairwise(bounds) if b > a]
    try:
        plan = _kernels.team_plan([steps_of(part) for part in parts])
    except (ValueError, TypeError):
        return None
    return TeamPieces(plan, nbytes / _BYTES_PER_SECOND)


def map_steps(fn: Any, args: Sequence[np.ndarray], out: np.ndarray) -> Callable | None:
    """``fn(*args, out=out)`` as the steps of a range of the output's rows (args of the
    output's shape): numpy's add, subtract, multiply or divide of two float32 arrays, or
    a ReLU (``ops_table``'s, ``kernels.bound``'s bits); None for any other."""
    arrays = [*args, out]
    if any(a.dtype != np.float32 or a.shape != out.shape for a in arrays) or out.ndim < 1:
        return None
    if not all(ops_table.same_view(a, out) or apart(a, out) for a in args):
        return None  # numpy copies an operand that overlaps the output first
    if fn in _BINARY and len(args) == 2:
        op = _BINARY[fn]
        return lambda r: [("binary", op, out[r], args[0][r], args[1][r])]
    if fn is ops_table.relu and len(args) == 1:
        return lambda r: [("bound", args[0][r], out[r], 0.0, True)]
    return None


def apart(a: np.ndarray, out: np.ndarray) -> bool:
    """Whether no element of ``a`` is one of ``out`` (engine memory interleaves tensors
    tile by tile, so their bounds overlap where their elements do not)."""
    try:
        return not np.shares_memory(a, out, max_work=100_000)
    except np.exceptions.TooHardError:
        return False
