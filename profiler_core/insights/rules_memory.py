"""Insights rules about memory: why a tile is full and what to change. Each rule is a pure
function of an ``InsightsContext`` returning its findings (none when it does not apply)."""

from __future__ import annotations

import numpy as np

from profiler_core.analysis.debug_groups import op_call_owners
from profiler_core.analysis.liveness import variables_live_at
from profiler_core.analysis.memory import variables_on_tiles
from profiler_core.insights.context import InsightsContext
from profiler_core.insights.findings import Evidence, Finding, Severity, SourceRef
from profiler_core.insights.planned_ops import advice as planned_advice
from profiler_core.insights.planned_ops import planned_op
from profiler_core.insights.sources import source_ref
from profiler_core.model.kinds import MemoryCategory

TEMPORARIES_SHARE = 0.4  # one operation's share of the peak's live bytes
EXCHANGE_SHARE = 0.3  # exchange buffers' share of the fullest tile
TILE_IMBALANCE = 2.0  # fullest tile / mean tile of an IPU
IPU_IMBALANCE = 1.5  # fullest IPU / mean IPU
CODE_SHARE = 0.15  # vertex code's share of the tile with the most code
CODE_MIN_TYPES = 8
DATA_SHARE = 0.5  # tile imbalance: variables' share of the excess to advise moving them
DATA_CATEGORIES = (
    MemoryCategory.ALWAYS_LIVE_VARIABLES,
    MemoryCategory.NOT_ALWAYS_LIVE_VARIABLES,
    MemoryCategory.CONSTANTS,
)


def _severity(ctx: InsightsContext) -> Severity:
    """A memory cause is an error when the program does not fit, a warning when it is tight."""
    if not ctx.fit.fits:
        return Severity.ERROR
    return Severity.WARNING if ctx.memory_tight else Severity.INFO


def _headroom(ctx: InsightsContext) -> int | None:
    """The fullest tile's free bytes when memory is not the problem (advice then goes the
    other way: memory for cycles); None when it is (the program does not fit, or its
    fullest tile is within 10% of the limit)."""
    return None if ctx.memory_tight else ctx.fit.headroom_bytes


def _pct(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def over_limit(ctx: InsightsContext) -> list[Finding]:
    """The symptom: tiles over their memory (weight 0, so its causes are listed first)."""
    fit = ctx.fit
    if fit.fits:
        return []
    return [
        Finding(
            rule="over-limit",
            severity=Severity.ERROR,
            title=f"{len(fit.tiles_over):,} tiles are over their memory",
            evidence=(
                Evidence("Tiles over", len(fit.tiles_over), "tiles"),
                Evidence("Fullest tile", str(fit.fullest_tile)),
                Evidence("Over by", fit.worst_excess, "bytes"),
                Evidence("Tile memory", fit.bytes_per_tile, "bytes"),
            ),
            suggestion="Poplar refuses this program (Out of memory on tile "
            f"{fit.fullest_tile}). Act on the other findings, largest first.",
            tiles=tuple(fit.tiles_over[:64].tolist()),
        )
    ]


def temporaries_at_peak(ctx: InsightsContext) -> list[Finding]:
    """One operation's not-always-live variables dominate the liveness peak."""
    table = ctx.liveness
    step = table.peak_step
    if step < 0 or table.peak_bytes <= 0:
        return []
    live = variables_live_at(ctx.report, step, debug=ctx.debug)
    if not len(live):
        return []
    graph = ctx.report.graph
    owners = op_call_owners(ctx.debug, graph.var_debug[live.var])
    groups, inverse = np.unique(owners, return_inverse=True)
    per_group = np.zeros(len(groups), dtype=np.int64)
    np.add.at(per_group, inverse.reshape(-1), live.bytes)
    top = int(np.argmax(per_group))
    share = per_group[top] / table.peak_bytes
    if share < TEMPORARIES_SHARE:
        return []
    rows = np.flatnonzero(inverse.reshape(-1) == top)
    biggest = int(rows[0])  # live variables are largest first
    source = source_ref(ctx.debug, int(graph.var_debug[live.var[biggest]]))
    who = source.operation or live.names[biggest]
    step_name = graph.strings[int(table.step_name[step])]
    return [
        Finding(
            rule="temporaries-at-peak",
            severity=_severity(ctx),
            title=f"{who}'s temporaries ({live.names[biggest]}) are {100 * share:.0f}% of the "
            "liveness peak",
            evidence=(
                Evidence("Operation's live bytes at the peak", int(per_group[top]), "bytes"),
                Evidence("Largest", f"{live.names[biggest]}, {int(live.bytes[biggest]):,} bytes"),
                Evidence("Peak live bytes", table.peak_bytes, "bytes"),
                Evidence("Share of the peak", 100 * share, "%"),
                Evidence("Peak step", f"{step} ({step_name})"),
            ),
            suggestion=_temporaries_advice(ctx, int(groups[top]), who),
            source=source,
            weight=float(share),
        )
    ]


def _temporaries_advice(ctx: InsightsContext, call: int, who: str) -> str:
    planned = planned_op(ctx.debug, call)
    if planned is not None:
        return planned_advice(
            [planned], ctx.fit.bytes_per_tile, "fewer partials live at once", _headroom(ctx)
        )
    # no option of the op changes how many of its results are live: say what they are
    return (
        f"These are {who}'s results and intermediate values, live together at this step "
        "until their last reader runs; its library op has no option that plans them."
    )


def exchange_buffers(ctx: InsightsContext) -> list[Finding]:
    """Exchange buffers take a large share of the fullest tile."""
    fit, table = ctx.fit, ctx.table
    tile = fit.fullest_tile
    buffers = int(table.by_category[MemoryCategory.EXCHANGE_BUFFERS, tile])
    share = buffers / fit.fullest_bytes if fit.fullest_bytes else 0.0
    if share < EXCHANGE_SHARE:
        return []
    source, step_text, calls = _largest_exchange(ctx, tile)
    planned = [op for op in (planned_op(ctx.debug, c) for c in calls) if op is not None]
    if planned and len(planned) == len(calls):
        advice = planned_advice(
            planned, fit.bytes_per_tile, "less data received per tile at once", _headroom(ctx)
        )
    else:
        who = source.operation or "the operation"
        advice = (
            f"Exchange buffers hold data on its way to the tile's vertices. {who}'s vertices "
            "run where its output is mapped: map its operands like its output and they "
            "need no exchange."
        )
    return [
        Finding(
            rule="exchange-buffers",
            severity=_severity(ctx),
            title=f"Exchange buffers are {100 * share:.0f}% of tile {tile}, the fullest",
            evidence=(
                Evidence("Exchange buffers", buffers, "bytes"),
                Evidence("Tile memory used", fit.fullest_bytes, "bytes"),
                Evidence("Share", 100 * share, "%"),
                Evidence("Largest exchange into the tile", step_text or "unknown"),
            ),
            suggestion=advice,
            source=source,
            weight=float(share),
            tiles=(tile,),
        )
    ]


def _largest_exchange(ctx: InsightsContext, tile: int) -> tuple[SourceRef, str, list[int]]:
    """The exchange step moving the most bytes into ``tile``, its operation, and the op
    calls of every exchange step moving that many (ties: layers of one shape)."""
    if ctx.missing("programs"):
        return SourceRef(), "", []
    programs = ctx.report.programs
    rows = np.flatnonzero(programs.exch_tile == tile)
    if not rows.size:
        return SourceRef(), "", []
    moved = programs.exch_bytes_in[rows] + programs.exch_bytes_out[rows]
    row = int(rows[np.argmax(moved)])
    step = int(programs.exch_step[row])
    name = ctx.report.graph.strings[int(programs.step_name[step])]
    source = source_ref(ctx.debug, int(programs.step_debug[step]))
    tied = programs.step_debug[programs.exch_step[rows[moved == moved.max()]]]
    calls = [] if ctx.debug is None else op_call_owners(ctx.debug, tied).tolist()
    calls = list(dict.fromkeys(c for c in calls if c >= 0))  # distinct, in step order
    return source, f"step {step} ({name}), {int(moved.max()):,} bytes", calls


def tile_imbalance(ctx: InsightsContext) -> list[Finding]:
    """An IPU's fullest tile far above its mean tile: memory not spread over the tiles."""
    table = ctx.table
    total = table.total(True).reshape(table.num_ipus, table.tiles_per_ipu)
    mean = total.mean(axis=1)
    peak = total.max(axis=1)
    ratio = np.divide(peak, mean, out=np.zeros_like(mean), where=mean > 0)
    ipu = int(np.argmax(ratio))
    if ratio[ipu] < TILE_IMBALANCE:
        return []
    tile = ipu * table.tiles_per_ipu + int(np.argmax(total[ipu]))
    source, largest = _largest_variable(ctx, tile)
    first = ipu * table.tiles_per_ipu
    per_category = np.asarray(table.by_category, dtype=np.float64)
    excess = per_category[:, tile] - per_category[:, first : first + table.tiles_per_ipu].mean(1)
    excess = np.maximum(excess, 0)
    data = float(excess[list(DATA_CATEGORIES)].sum())
    if data >= DATA_SHARE * float(excess.sum()) and largest:
        suggestion = (
            f"Most of the tile's excess over the mean tile is data: spread {largest.split(',')[0]} "
            "and the other large tensors on this tile over more tiles (map them linearly, or "
            "let the op choose its layout with createInput)."
        )
    else:
        top = [MemoryCategory(int(c)).label.lower() for c in np.argsort(-excess)[:2]]
        suggestion = (
            f"Most of the tile's {float(excess.sum()):,.0f} bytes above the mean tile are "
            f"{top[0]} and {top[1]}, the cost of the vertices and programs that run on it, "
            "not tensors: mapping tensors elsewhere would not even it out."
        )
    return [
        Finding(
            rule="tile-memory-imbalance",
            severity=_severity(ctx),
            title=f"Memory is unevenly spread on IPU {ipu}: tile {tile} holds "
            f"{ratio[ipu]:.1f}x the mean tile",
            evidence=(
                Evidence("Fullest tile", int(peak[ipu]), "bytes"),
                Evidence("Mean tile", float(mean[ipu]), "bytes"),
                Evidence("Max / mean", float(ratio[ipu])),
                Evidence("Largest variable on the tile", largest or "unknown"),
            ),
            suggestion=suggestion,
            source=source,
            weight=float(1 - mean[ipu] / peak[ipu]),
            tiles=(tile,),
        )
    ]


def _largest_variable(ctx: InsightsContext, tile: int) -> tuple[SourceRef, str]:
    if ctx.missing("graph"):
        return SourceRef(), ""
    found = variables_on_tiles(ctx.report, np.array([tile]), debug=ctx.debug)
    if not len(found):
        return SourceRef(), ""
    graph = ctx.report.graph
    source = source_ref(ctx.debug, int(graph.var_debug[found.var[0]]))
    return source, f"{found.names[0]}, {int(found.bytes[0]):,} bytes"


def ipu_imbalance(ctx: InsightsContext) -> list[Finding]:
    """One IPU of a sharded model far fuller than the others."""
    table = ctx.table
    if table.num_ipus < 2:
        return []
    per_ipu = table.per_ipu(True).sum(axis=1)
    mean = float(per_ipu.mean())
    ipu = int(np.argmax(per_ipu))
    ratio = per_ipu[ipu] / mean if mean else 0.0
    if ratio < IPU_IMBALANCE:
        return []
    first = ipu * table.tiles_per_ipu
    return [
        Finding(
            rule="ipu-imbalance",
            severity=Severity.ERROR if not ctx.fit.fits else Severity.WARNING,
            title=f"IPU {ipu} holds {ratio:.1f}x the memory of the mean IPU",
            evidence=(
                Evidence("IPU memory", int(per_ipu[ipu]), "bytes"),
                Evidence("Mean IPU", mean, "bytes"),
                Evidence("Emptiest IPU", int(per_ipu.min()), "bytes"),
            ),
            suggestion="Move layers from this IPU to the emptier ones (change the sharding "
            "or pipeline split points) so every IPU holds a similar share.",
            weight=float(1 - 1 / ratio),
            tiles=tuple(range(first, first + min(table.tiles_per_ipu, 64))),
        )
    ]


def vertex_code(ctx: InsightsContext) -> list[Finding]:
    """Code size on a tile dominated by many vertex types."""
    table = ctx.table
    code = table.by_category[MemoryCategory.VERTEX_CODE]
    tile = int(np.argmax(code))
    total = int(table.total(True)[tile])
    share = code[tile] / total if total else 0.0
    graph = ctx.report.graph
    types = np.unique(graph.vc_type[graph.vc_tile == tile]).size
    if share < CODE_SHARE or types < CODE_MIN_TYPES:
        return []
    return [
        Finding(
            rule="vertex-code",
            severity=_severity(ctx),
            title=f"Vertex code is {100 * share:.0f}% of tile {tile}: {types} vertex types",
            evidence=(
                Evidence("Vertex code", int(code[tile]), "bytes"),
                Evidence("Vertex types on the tile", int(types)),
                Evidence("Tile memory used", total, "bytes"),
            ),
            suggestion=f"Each vertex type's code is stored once on every tile that runs it: "
            f"these {types} types are the fixed cost of the operations whose vertices run on "
            "this tile.",
            weight=float(share),
            tiles=(tile,),
        )
    ]
