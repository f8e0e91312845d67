"""The same memory and cycle facts at three levels: the model, each IPU, each tile."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from profiler_core.insights.context import InsightsContext
from profiler_core.insights.findings import Evidence


@dataclass(frozen=True)
class LevelFacts:
    """``model``: labelled numbers; ``ipus`` and ``tiles``: equal-length columns by name."""

    model: tuple[Evidence, ...]
    ipus: dict[str, np.ndarray]
    tiles: dict[str, np.ndarray]


def level_facts(ctx: InsightsContext) -> LevelFacts:
    table, fit = ctx.table, ctx.fit
    total = table.total(True)
    n_ipus, per_ipu = table.num_ipus, table.tiles_per_ipu
    capacity = table.bytes_per_tile * table.num_tiles
    model = [
        Evidence("IPUs", n_ipus),
        Evidence("Tiles", table.num_tiles, "tiles"),
        Evidence("Memory used", int(total.sum()), "bytes"),
        Evidence("Memory of the device", capacity, "bytes"),
        Evidence("Used", 100.0 * total.sum() / capacity, "%"),
        Evidence("Tiles over the limit", len(fit.tiles_over), "tiles"),
        Evidence("Fullest tile", str(fit.fullest_tile)),
        Evidence("Headroom of the fullest tile", fit.headroom_bytes, "bytes"),
    ]
    by_ipu = total.reshape(n_ipus, per_ipu)
    over = np.zeros(table.num_tiles, dtype=bool)
    over[fit.tiles_over] = True
    ipus: dict[str, np.ndarray] = {
        "IPU": np.arange(n_ipus),
        "Memory (bytes)": by_ipu.sum(axis=1),
        "Used (%)": np.round(100.0 * by_ipu.sum(axis=1) / (table.bytes_per_tile * per_ipu), 2),
        "Fullest tile": np.argmax(by_ipu, axis=1) + np.arange(n_ipus) * per_ipu,
        "Fullest tile (bytes)": by_ipu.max(axis=1),
        "Mean tile (bytes)": np.round(by_ipu.mean(axis=1)).astype(np.int64),
        "Tiles over": over.reshape(n_ipus, per_ipu).sum(axis=1),
    }
    tiles: dict[str, np.ndarray] = {
        "Tile": np.arange(table.num_tiles),
        "IPU": np.arange(table.num_tiles) // per_ipu,
        "Memory (bytes)": total,
        "Headroom (bytes)": table.bytes_per_tile - total,
    }
    if not ctx.missing("graph"):
        graph = ctx.report.graph
        vertices = np.zeros(table.num_tiles, dtype=np.int64)
        np.add.at(vertices, graph.vc_tile, graph.vc_count)
        tiles["Vertices"] = vertices
        model.append(Evidence("Variables", int(graph.num_variables)))
        model.append(Evidence("Vertices", int(vertices.sum())))
    if not ctx.missing("liveness"):
        live = ctx.liveness
        model.append(Evidence("Always-live bytes", live.always_live_bytes, "bytes"))
        model.append(Evidence("Peak live bytes", live.peak_bytes, "bytes"))
        model.append(Evidence("Peak step", str(live.peak_step)))
    if not ctx.missing("programs") and not ctx.missing("execution"):
        programs = ctx.report.programs
        runs = ctx.executions_per_step
        cycles = programs.step_cycles * runs[:, None]
        model.append(Evidence("Cycles (every run)", int(cycles.max(axis=1).sum()), "cycles"))
        ipus["Active cycles"] = cycles.sum(axis=0).astype(np.int64)
        compute = np.zeros(table.num_tiles, dtype=np.int64)
        cs_runs = np.zeros(len(ctx.report.graph.cs_name), dtype=np.int64)
        steps = np.flatnonzero(programs.step_cs >= 0)
        np.add.at(cs_runs, programs.step_cs[steps], runs[steps])
        weights = programs.cst_cycles.astype(np.int64) * cs_runs[programs.cst_cs]
        np.add.at(compute, programs.cst_tile, weights)
        tiles["Compute cycles"] = compute
    return LevelFacts(tuple(model), ipus, tiles)
