"""The convolution's shape and planner: how ``poplin.convolution`` splits its work.

A plan cuts the groups, each image's output rows, the output channels of a group and the
input channels of a group into blocks, one ``ConvPartial`` vertex per block. Like PopLibs'
planner it takes the split with the fewest estimated cycles (AMP compute, exchange of the
operands, reduction of input-channel partials) whose temporary memory per tile stays
within ``availableMemoryProportion`` of a tile, else the one needing least memory. A
vertex holds several whole groups (depthwise: many one-channel groups) or a part of one
group, so its channels are always one contiguous range of the input and the output.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from ipu_engine.errors import ShapeError
from ipu_engine.model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.poplin.planner import _splits

log = logging.getLogger("poplibs.poplin")

Pair = tuple[int, int]


@dataclass(frozen=True)
class ConvPlan:
    row_blocks: int  # per image
    out_chan_blocks: int  # per group
    in_chan_blocks: int  # per group
    rows: int  # output rows per block
    out_chans: int  # output channels of a group per block
    in_chans: int  # input channels of a group per block
    cycles: float
    temp_bytes: int
    fits_budget: bool
    group_blocks: int = 1
    groups: int = 1  # groups per block


def _pair(value: int | tuple[int, int], what: str, low: int) -> Pair:
    """An int for both spatial dimensions, or (height, width); each at least ``low``."""
    pair = (value, value) if isinstance(value, int | np.integer) else tuple(value)
    if len(pair) != 2 or any(
        isinstance(v, bool) or not isinstance(v, int | np.integer) for v in pair
    ):
        raise ShapeError(
            f"poplin::convolution: {what} must be an int or (height, width), got {value!r}"
        )
    if min(pair) < low:
        raise ShapeError(f"poplin::convolution: {what} {value!r} must be at least {low}")
    return int(pair[0]), int(pair[1])


def _pads(value: int | tuple) -> tuple[Pair, Pair]:
    """``p``, ``(ph, pw)`` or ``((top, bottom), (left, right))`` as the last form."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return _pair(int(value), "padding", 0), _pair(int(value), "padding", 0)
    try:
        h, w = value
    except (TypeError, ValueError):
        raise ShapeError(
            f"poplin::convolution: padding must be p, (ph, pw) or ((top, bottom), (left, right)), "
            f"got {value!r}"
        ) from None
    return _pair(h, "padding", 0), _pair(w, "padding", 0)


@dataclass(frozen=True)
class ConvShape:
    """A convolution's sizes. ``stride``, ``padding`` and ``dilation`` may be given as an
    int for both dimensions; they are kept as ``(h, w)`` and ``((top, bottom), (left,
    right))``. ``in_chans`` and ``out_chans`` count every group's channels."""

    batch: int
    height: int
    width: int
    in_chans: int
    out_chans: int
    kernel_h: int
    kernel_w: int
    stride: Pair | int = 1
    padding: tuple[Pair, Pair] | Pair | int = 0
    dilation: Pair | int = 1
    groups: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "stride", _pair(self.stride, "stride", 1))
        object.__setattr__(self, "dilation", _pair(self.dilation, "dilation", 1))
        object.__setattr__(self, "padding", _pads(self.padding))
        if self.groups < 1 or self.in_chans % self.groups or self.out_chans % self.groups:
            raise ShapeError(
                f"poplin::convolution: groups {self.groups} must divide the input channels "
                f"{self.in_chans} and the output channels {self.out_chans}"
            )

    @property
    def group_in_chans(self) -> int:
        return self.in_chans // self.groups

    @property
    def group_out_chans(self) -> int:
        return self.out_chans // self.groups

    @property
    def field_h(self) -> int:
        """Input rows one output row sees (the dilated kernel's height)."""
        return self.dilation[0] * (self.kernel_h - 1) + 1  # type: ignore[index]

    @property
    def field_w(self) -> int:
        return self.dilation[1] * (self.kernel_w - 1) + 1  # type: ignore[index]

    @property
    def out_height(self) -> int:
        (top, bottom), _ = self.padding  # type: ignore[misc]
        return (self.height + top + bottom - self.field_h) // self.stride[0] + 1  # type: ignore[index]

    @property
    def out_width(self) -> int:
        _, (left, right) = self.padding  # type: ignore[misc]
        return (self.width + left + right - self.field_w) // self.stride[1] + 1  # type: ignore[index]


def plan_convolution(
    shape: ConvShape,
    elem_size: int,
    dtype_name: str,
    num_tiles: int,
    bytes_per_tile: int,
    available_memory_proportion: float = 0.6,
) -> ConvPlan:
    """The split with the fewest estimated cycles whose operands and partials per tile fit
    ``available_memory_proportion`` of a tile (else the smallest), as poplin plans."""
    s = shape
    oh, ow = s.out_height, s.out_width
    cg, fg = s.group_in_chans, s.group_out_chans
    grids = np.meshgrid(
        _splits(s.groups, num_tiles), _splits(oh, num_tiles), _splits(fg, num_tiles),
        _splits(cg, num_tiles), indexing="ij",
    )  # fmt: skip
    sg, sr, sf, sc = (g.reshape(-1) for g in grids)
    bg = -(-s.groups // sg)
    # several groups per vertex only when each is whole: its channels stay one range
    ok = (s.batch * sg * sr * sf * sc <= num_tiles) & ((bg == 1) | ((sf == 1) & (sc == 1)))
    if not ok.any():
        ok = (sg == 1) & (sr == 1) & (sf == 1) & (sc == 1)
    sg, sr, sf, sc, bg = sg[ok], sr[ok], sf[ok], sc[ok], bg[ok]
    br, bf, bc = -(-oh // sr), -(-fg // sf), -(-cg // sc)
    in_rows = np.minimum((br - 1) * s.stride[0] + s.field_h, s.height)  # type: ignore[index]
    macs_per_cycle = C.MACS_PER_CYCLE.get(dtype_name, C.MACS_PER_CYCLE["float"])
    macs = bg * br * ow * bf * s.kernel_h * s.kernel_w * bc
    compute = macs / macs_per_cycle + C.SUPERVISOR_OVERHEAD_CYCLES
    kernel = s.kernel_h * s.kernel_w
    operand_bytes = bg * (in_rows * s.width * bc + kernel * bc * bf) * elem_size
    exchange = operand_bytes / C.EXCHANGE_BYTES_PER_CYCLE + C.EXCHANGE_LATENCY_CYCLES
    out_elems = bg * br * ow * bf
    reduction = np.where(
        sc > 1,
        out_elems * 4 / C.EXCHANGE_BYTES_PER_CYCLE + out_elems * 0.5 + C.SYNC_CYCLES,
        0,
    )
    cycles = compute + exchange + reduction
    temp = operand_bytes + out_elems * 4
    fits = temp <= available_memory_proportion * bytes_per_tile
    if fits.any():
        choice = int(np.flatnonzero(fits)[np.argmin(cycles[fits])])
    else:
        choice = int(np.argmin(temp))
        log.warning(
            "convolution %s: no plan keeps to the memory budget; using the smallest, %d bytes",
            s,
            int(temp[choice]),
        )
    return ConvPlan(
        int(sr[choice]), int(sf[choice]), int(sc[choice]),
        int(br[choice]), int(bf[choice]), int(bc[choice]),
        float(cycles[choice]), int(temp[choice]), bool(fits[choice]),
        int(sg[choice]), int(bg[choice]),
    )  # fmt: skip
