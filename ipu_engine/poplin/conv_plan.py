"""The convolution's shape and planner: how ``poplin.convolution`` splits its work.

A plan cuts the groups, each image's output rows, the output channels of a group and the
input channels of a group into blocks, one ``ConvPartial`` vertex per block. Like PopLibs'
planner it takes the split with the fewest estimated cycles (AMP compute, exchange of the
operands, reduction of input-channel partials) whose temporary memory per tile stays
within ``availableMemoryProportion`` of a tile, else the one needing least memory. When no
parallel split fits, each group's output channels are computed in serial slices (the same
channels of every group in one slice, so a slice is a grouped convolution of the same input
with fewer channels per group), as ``planner.choose_serial_plan`` does for matmul rows. A
vertex holds several whole groups (depthwise: many one-channel groups) or a part of one
group, so its channels are always one contiguous range of the input and the output.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ipu_engine.common.arguments import instance_arg, name_arg, number_arg, pair_arg
from ipu_engine.common.errors import GraphError, ShapeError
from ipu_engine.poplar.cost_model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.poplin.planner import _counts, choose_serial_plan
from ipu_engine.poputil.splits import split_counts

Pair = tuple[int, int]


@dataclass(frozen=True)
class ConvPlan:
    row_blocks: int  # per image
    out_chan_blocks: int  # per group
    in_chan_blocks: int  # per group
    rows: int  # output rows per block
    out_chans: int  # output channels of a group per block
    in_chans: int  # input channels of a group per block
    cycles: float  # of every serial slice
    temp_bytes: int  # per tile, for one serial slice (the slices reuse it)
    fits_budget: bool
    group_blocks: int = 1
    groups: int = 1  # groups per block
    serial: int = 1  # slices of each group's output channels computed one after the other
    slice_chans: int = 0  # output channels of a group per serial slice (the last: fewer)


def _pair(value: int | tuple[int, int], what: str, low: int) -> Pair:
    """An int for both spatial dimensions, or (height, width); each at least ``low``."""
    return pair_arg(value, f"poplin::convolution: {what}", low, ShapeError)


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


def _slice_plans(
    s: ConvShape, elem_size: int, dtype_name: str, num_tiles: int
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Every parallel split of one slice of output channels: (its blocks, cycles, temporary
    bytes per tile -- the input rows and weights it receives, and its float partials)."""
    oh, ow = s.out_height, s.out_width
    cg, fg = s.group_in_chans, s.group_out_chans
    grids = np.meshgrid(
        split_counts(s.groups, num_tiles), split_counts(oh, num_tiles), split_counts(fg, num_tiles),
        split_counts(cg, num_tiles), indexing="ij",
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
    split = {
        "row_blocks": sr, "out_chan_blocks": sf, "in_chan_blocks": sc, "rows": br,
        "out_chans": bf, "in_chans": bc, "group_blocks": sg, "groups": bg,
    }  # fmt: skip
    return split, compute + exchange + reduction, operand_bytes + out_elems * 4


def plan_convolution(
    shape: ConvShape,
    elem_size: int,
    dtype_name: str,
    num_tiles: int,
    bytes_per_tile: int,
    available_memory_proportion: float = 0.6,
) -> ConvPlan:
    """The split with the fewest estimated cycles whose operands and partials per tile fit
    ``available_memory_proportion`` of a tile (else the smallest), as poplin plans: when
    no parallel split fits, each group's output channels are computed in serial slices."""
    shape = instance_arg(shape, ConvShape, "plan_convolution: the shape", GraphError)
    elem_size, num_tiles, bytes_per_tile = _counts(
        "plan_convolution", elem_size=elem_size, num_tiles=num_tiles, bytes_per_tile=bytes_per_tile
    )
    name_arg(dtype_name, "plan_convolution: dtype_name")
    available_memory_proportion = number_arg(
        available_memory_proportion, "plan_convolution: available_memory_proportion"
    )
    budget = available_memory_proportion * bytes_per_tile

    def candidates(chans: int) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        one_slice = dataclasses.replace(shape, out_chans=shape.groups * chans)
        return _slice_plans(one_slice, elem_size, dtype_name, num_tiles)

    choice = choose_serial_plan(
        shape.group_out_chans, candidates, budget, f"convolution {shape}",
        available_memory_proportion,
    )  # fmt: skip
    return ConvPlan(
        **choice.split,
        cycles=choice.cycles,
        temp_bytes=choice.temp_bytes,
        fits_budget=choice.fits_budget,
        serial=choice.serial,
        slice_chans=choice.slice_size,
    )
