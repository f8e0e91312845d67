"""A compute set's kept calls cut into pieces that the machine's cores take in turn.

The calls of a kept plan (``conv_kept``) write apart and read nothing another writes, as
the vertices they stand for. A BLAS product is cut by its depth (a layer per BLAS call
either way) or, one layer deep, by its rows (whole rows of at least ``MIN_ROWS``: OpenBLAS
sums a row the same in a taller product, only a one-row product takes another path), so
each piece computes its elements as the whole call does, to the bit. A windowed product
(``conv_products.windowed``) is cut by its depth, each piece with its layers' copies; a
depthwise kernel's call by its lead axis or its groups. The pieces, longest first, are
then taken by the caller and the helpers in turn (``workers.run_pieces``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ipu_engine.codelets import kernels
from ipu_engine.codelets.conv_products import Operands, product, windowed
from ipu_engine.poplar import workers

Call = tuple[Callable[..., Any], tuple]

#: Rows below which a one-layer product is not cut (see the module's note).
MIN_ROWS = 64
#: Rough speeds of one core: BLAS multiply-adds (ResNet-50's products ran 25-45 G a second),
#: and bytes a memory-bound call touches (the MobileNet block's depthwise call, 1.6 MB in
#: 0.19 ms: estimated at 4 GB/s it was split, and ran slower side by side with onnxruntime).
_MACS_PER_SECOND = 40e9
_BYTES_PER_SECOND = 8e9


def pieces_of(calls: list[Call], count: int, min_seconds: float | None = None) -> workers.Pieces:
    """``calls`` cut into pieces for ``count`` cores (``workers.run_pieces``), longest
    first; whole, in the plan's order, when the plan is under ``min_seconds`` (default
    ``workers.MIN_SPLIT_SECONDS``)."""
    least = workers.MIN_SPLIT_SECONDS if min_seconds is None else min_seconds
    if count < 2 or seconds(calls) < least:
        return workers.Pieces(tuple(calls), tuple(map(_seconds, calls)))
    pieces = [piece for call in calls for piece in _pieces(call, count)]
    pieces.sort(key=_seconds, reverse=True)
    return workers.Pieces(tuple(pieces), tuple(map(_seconds, pieces)))


def seconds(calls: list[Call] | tuple[Call, ...]) -> float:
    """The estimated time of ``calls``."""
    return sum(map(_seconds, calls))


def _seconds(call: Call) -> float:
    fn, args = call
    if fn is windowed:  # its blanks and copies, then its product
        made = sum(target.nbytes for target, _ in args[0]) * 2
        made += 0 if args[1] is None else args[1][1].size * 4 * args[2].shape[0]
        return made / _BYTES_PER_SECOND + _seconds((product, args[2:]))
    if fn is product:
        patches, weights = args[0], args[1]
        return float(np.prod(patches.shape)) * weights.shape[-1] / _MACS_PER_SECOND
    touched = sum(a.nbytes for a in args if isinstance(a, np.ndarray))
    return touched / _BYTES_PER_SECOND


def _pieces(call: Call, count: int) -> list[Call]:
    """A product as up to ``count`` pieces (by depth, else by rows), a windowed product by
    depth (its copies with it); other calls whole."""
    fn, args = call
    if fn is windowed:
        copies, blanks, operands = args[0], args[1], args[2:]
        depth = operands[0].shape[0]
        if depth < 2:
            return [call]
        return [
            (
                windowed,
                (
                    tuple((t[part], s[part]) for t, s in copies),
                    None if blanks is None else (blanks[0][part], blanks[1]),
                    *_layers(operands, part),
                ),
            )
            for part in workers.split(depth, count)
        ]
    if fn is kernels.depthwise:
        return [(fn, args) for args in _depthwise_pieces(args, count)]
    if fn is not product:
        return [call]
    patches, weights, bias, direct = args
    depth, rows = patches.shape[0], patches.shape[2]
    if depth >= 2:
        return [(product, _layers(args, part)) for part in workers.split(depth, count)]
    cuts = min(count, rows // MIN_ROWS)
    if cuts < 2:
        return [call]
    return [
        (product, (patches[:, :, part], weights, bias, direct[:, :, part]))
        for part in workers.split(rows, cuts)
    ]


def _depthwise_pieces(args: tuple, count: int) -> list[tuple]:
    """A depthwise call's arguments cut by its first lead axis, else by its groups (each
    group's sums are its own: the same to the bit)."""
    x, w, bias, out, *geometry = args
    lead = x.ndim - 3
    if lead and x.shape[0] >= 2:
        cuts = [(p,) for p in workers.split(x.shape[0], count)]
        at = {"x": 0, "w": 0, "bias": 0, "out": 0}
    elif x.shape[-1] >= 2:
        cuts = [(p,) for p in workers.split(x.shape[-1], count)]
        at = {"x": x.ndim - 1, "w": lead + 2, "bias": lead, "out": lead}
    else:
        return [args]

    def cut(a: np.ndarray | None, axis: int, part: slice) -> np.ndarray | None:
        return None if a is None else a[(slice(None),) * axis + (part,)]

    return [
        (cut(x, at["x"], part), cut(w, at["w"], part), cut(bias, at["bias"], part),
         cut(out, at["out"], part), *geometry)
        for (part,) in cuts
    ]  # fmt: skip


def _layers(args: Operands, part: slice) -> Operands:
    """The product's operands of layers ``part`` (an operand broadcast over the depth,
    one layer of it, is kept whole)."""
    depth = args[0].shape[0]
    patches, weights, bias, direct = (
        a if a is None or a.shape[0] != depth else a[part] for a in args
    )
    return patches, weights, bias, direct
