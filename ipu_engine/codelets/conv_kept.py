"""A convolution compute set's calls kept from one run to the next, and its products joined.

When every group of alike vertices of a compute set ran as calls whose arguments are all
views of engine memory -- BLAS products of 1x1 kernels (``conv_gemm``), depthwise kernel
calls (``conv_grouped``) -- the next run makes the same calls on the same views, which read
memory's values then, and skips the Python that found and shaped them (the plan is kept
only while memory is the same arrays). Before they are kept, products that multiply the
same patches by weights whose columns continue each other, into outputs whose columns
continue each other, are joined into one product: the pointwise convolution of the
MobileNet block has 12- and 13-channel output blocks side by side (the plan's split),
whose products of 12 and 52 columns become one of 64 -- BLAS runs wider products faster,
and the sums are the same products (in BLAS's order, as before: float32 rounding). So are
windowed products whose window copies are the same (ResNet-50's 7x7 convolution made its
12,208 x 147 patches twice a run, for 60 and for 4 output channels).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ipu_engine.codelets import plan_parts, team
from ipu_engine.codelets.blas_threads import one_blas_thread
from ipu_engine.codelets.conv_products import Operands, product, windowed
from ipu_engine.poplar import workers
from ipu_engine.poplar.arrays import memory_view
from ipu_engine.poplar.vertex import VertexBatch

_LOG, _PLAN = "kept_calls_log", "kept_calls_plan"

Call = tuple[Callable[..., Any], tuple]


def run_plan(batch: VertexBatch, pools: tuple[np.ndarray, ...]) -> bool:
    """Make the compute set's kept calls when memory is still the arrays they view; whether
    they ran (else the compute set runs group by group, logging its calls)."""
    plan = batch.cache.get(_PLAN)
    if plan is None or any(a is not b for a, b in zip(plan[0], pools, strict=True)):
        batch.cache[_LOG] = []
        return False
    _run_kept(plan[1])
    batch.repeat(functools.partial(_run_kept, plan[1]))  # the next runs: this call alone
    return True


def _run_kept(pieces: workers.Pieces) -> None:
    if pieces.native is not None:  # the team's run keeps BLAS on one thread itself
        workers.run_pieces(pieces)
        return
    with one_blas_thread():  # BLAS products on several cores at once
        workers.run_pieces(pieces)


def log_call(batch: VertexBatch, fn: Callable[..., Any], args: tuple) -> None:
    """A call of this run made of views of memory."""
    calls = batch.cache.get(_LOG)
    if calls is not None:
        calls.append((fn, args))


def missed(batch: VertexBatch) -> None:
    """A group of this run computed otherwise (a copy among its operands): no plan."""
    batch.cache[_LOG] = None


def finish(batch: VertexBatch, pools: tuple[np.ndarray, ...]) -> None:
    """Keep this run's calls as the plan when every group logged its calls, its products
    joined where they continue each other, then cut into pieces for the cores
    (``plan_parts``);
    ``pools``: in, weights, out (, bias)."""
    calls = batch.cache.pop(_LOG, None)
    if calls:
        joined, cores = _joined(calls, pools), workers.allowed()
        pieces = plan_parts.pieces_of(joined, cores, team.MIN_SPLIT_SECONDS)
        native = team.compiled(pieces)
        if native is None:  # a call C does not compute alike: the Python pieces
            pieces = plan_parts.pieces_of(joined, cores)
        else:
            pieces = dataclasses.replace(pieces, native=native)
        batch.cache[_PLAN] = (pools, pieces)


def _joined(calls: list[Call], pools: tuple[np.ndarray, ...]) -> list[Call]:
    """``calls`` with the products of the same patches (the same window copies, for
    windowed products) joined where their columns continue each other."""
    others, by_patches = [], {}
    for call in calls:
        key = _patches_key(call)
        if key is None:
            others.append(call)
        else:
            by_patches.setdefault(key, []).append(call)
    products: list[Call] = []
    for alike in by_patches.values():
        alike.sort(key=lambda call: _address(_operands(call)[3]))
        joined = [alike[0]]
        for call in alike[1:]:
            both = _join(_operands(joined[-1]), _operands(call), pools)
            if both is None:
                joined.append(call)
            else:  # the first call's patches (and window copies), both calls' columns
                fn, args = joined[-1]
                joined[-1] = (fn, both if fn is product else (*args[:2], *both))
        products.extend(joined)
    return products + others


def _operands(call: Call) -> Operands:
    fn, args = call
    return args if fn is product else args[2:]


def _patches_key(call: Call) -> tuple | None:
    """What calls of the same patches share: the patches' memory (a product's), or the
    copies that make them (a windowed product's, when its weights are memory's own: made
    weights are not joined); None for other calls."""
    fn, args = call
    if fn is product:
        patches = args[0]
        return (_address(patches), patches.shape, patches.strides, args[2] is None)
    if fn is not windowed:
        return None
    copies, patches = args[0], args[2]
    if not all(np.may_share_memory(target, patches) for target, _ in copies):
        return None
    sources = tuple((_address(s), s.shape, s.strides, s.dtype.str) for _, s in copies)
    return (sources, patches.shape, patches.strides, args[4] is None)


def _join(a: Operands, b: Operands, pools: tuple[np.ndarray, ...]) -> Operands | None:
    """One product of ``a``'s and ``b``'s columns, when ``b``'s weights, bias rows and
    outputs continue ``a``'s in memory; else None."""
    pairs = [(a[1], b[1], pools[1]), (a[3], b[3], pools[2])]
    if a[2] is not None:
        pairs.append((a[2], b[2], pools[3]))
    if not all(_continues(first, then) for first, then, _ in pairs):
        return None
    weights, direct, *bias = (_wider(first, then, pool) for first, then, pool in pairs)
    return a[0], weights, bias[0] if bias else None, direct


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _continues(first: np.ndarray, then: np.ndarray) -> bool:
    """Whether ``then``'s columns follow ``first``'s in one layout (its rows continue)."""
    outer = zip(first.shape[:-1], first.strides[:-1], then.strides[:-1], strict=True)
    return (
        first.shape[:-1] == then.shape[:-1]
        and all(a == b for n, a, b in outer if n > 1)  # a dimension of one has any stride
        and first.strides[-1] == then.strides[-1] == first.itemsize
        and _address(then) == _address(first) + first.shape[-1] * first.itemsize
    )


def _wider(first: np.ndarray, then: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """The view of ``first``'s and ``then``'s columns together, in ``pool``."""
    item = pool.itemsize
    start = (_address(first) - _address(pool)) // item
    shape = (*first.shape[:-1], first.shape[-1] + then.shape[-1])
    return memory_view(pool, start, shape, tuple(s // item for s in first.strides))
