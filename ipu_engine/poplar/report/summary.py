"""A text summary of a profile, in the spirit of Poplar's ``printProfileSummary``."""

from __future__ import annotations

import numpy as np

from profiler_core.analysis.execution_summary import execution_summary, format_summary
from profiler_core.model.kinds import MemoryCategory, StepKind
from profiler_core.model.profile import ProfileData, RunData

Rows = list[tuple[str, str]]


def _n(value: float) -> str:
    return f"{int(value):,}"


def _mib(value: float) -> str:
    return f"{value / 2**20:,.1f} MiB"


def _section(title: str, rows: Rows, indent: str = "  ") -> list[str]:
    width = max((len(k) for k, _ in rows), default=0) + 2
    lines = [title] if title else []
    return lines + [f"{indent}{k + ':':<{width}}{v}" for k, v in rows]


def profile_summary(profile: ProfileData, show_execution_steps: bool = False) -> str:
    parts = [
        [f"Program: {profile.header.program_name or '(unnamed)'}"],
        _section("Target:", _target_rows(profile)),
        _section("Graph:", _graph_rows(profile)),
        _memory(profile),
        _section("Liveness:", _liveness_rows(profile)),
        _execution(profile, show_execution_steps),
    ]
    return "\n\n".join("\n".join(p) for p in parts) + "\n"


def _target_rows(p: ProfileData) -> Rows:
    t = p.target
    per_tile = f"{t.bytes_per_tile / 1024:,.1f} KiB ({_n(t.bytes_per_tile)} bytes)"
    return [
        ("IPU version", t.version),
        ("Number of IPUs", _n(t.num_ipus)),
        ("Tiles per IPU", _n(t.tiles_per_ipu)),
        ("Total tiles", _n(t.num_tiles)),
        ("Memory per tile", per_tile),
        ("Total memory", _mib(t.bytes_per_tile * t.num_tiles)),
        ("Clock speed", f"{t.clock_hz / 1e6:,.0f} MHz"),
    ]


def _graph_rows(p: ProfileData) -> Rows:
    g = p.graph
    live, constants = _n(g.var_always_live.sum()), _n(g.var_is_constant.sum())
    return [
        ("Variables", f"{_n(g.num_variables)} ({live} always live, {constants} constants)"),
        ("Compute sets", _n(len(g.cs_name))),
        ("Vertices", _n(g.vc_count.sum())),
        ("Vertex types", _n(len(g.vt_name))),
        ("Program steps", _n(p.programs.num_steps)),
    ]


def _memory(p: ProfileData) -> list[str]:
    by_cat = p.memory.by_category
    total = by_cat.sum(axis=0)
    gaps = sum(int(by_cat[c].sum()) for c in MemoryCategory if c.is_gap)
    capacity = p.target.bytes_per_tile * p.target.num_tiles
    tile = int(np.argmax(total)) if total.size else 0
    largest = int(total[tile]) if total.size else 0
    share = 100 * total.sum() / capacity
    rows = [
        ("Total, including gaps", f"{_n(total.sum())} bytes ({share:.2f}% of {_mib(capacity)})"),
        ("Total, excluding gaps", f"{_n(total.sum() - gaps)} bytes"),
        ("Largest tile", f"tile {tile}, {_n(largest)} bytes "
         f"({100 * largest / p.target.bytes_per_tile:.1f}% of the tile)"),
        ("Tiles over the limit", _n((total > p.target.bytes_per_tile).sum())),
    ]  # fmt: skip
    categories = [(c.label, f"{_n(by_cat[c].sum())} bytes") for c in MemoryCategory]
    return (
        _section("Memory usage:", rows)
        + ["  By category (all tiles):"]
        + _section("", categories, "    ")
    )


def _liveness_rows(p: ProfileData) -> Rows:
    live = p.liveness.step_live_bytes
    rows = [("Always-live bytes", _n(p.liveness.always_live_bytes))]
    if live.size:
        peak = int(np.argmax(live))
        name = p.graph.strings[int(p.programs.step_name[peak])]
        rows.append(("Peak not-always-live bytes", f"{_n(live[peak])} at step {peak} ({name})"))
    return rows


def _execution(p: ProfileData, show_steps: bool) -> list[str]:
    if p.execution is None or not p.execution.runs:
        return ["Execution: no runs recorded"]
    lines = ["Execution:"]
    durations = p.programs.step_cycles.max(axis=1)
    for i, run in enumerate(p.execution.runs):
        seconds = run.total_cycles / p.target.clock_hz
        lines.append(
            f"  Run {i} ({run.name}): {_n(run.total_cycles)} cycles "
            f"({seconds * 1e6:,.1f} us at {p.target.clock_hz / 1e9:.2f} GHz)"
        )
        cycles = durations[run.step_ids]
        lines += format_summary(execution_summary(p, i), "    ")
        lines.append("    By program step kind:")
        lines += _section("", _by_kind(p, run, cycles), "      ")
        if show_steps:
            lines += _steps(p, run, cycles)
    return lines


def _by_kind(p: ProfileData, run: RunData, cycles: np.ndarray) -> Rows:
    kinds = p.programs.step_kind[run.step_ids]
    rows = []
    for kind in StepKind:
        spent = int(cycles[kinds == kind].sum())
        if spent:
            share = 100 * spent / max(run.total_cycles, 1)
            rows.append((kind.poplar_name, f"{_n(spent)} cycles ({share:.1f}%)"))
    return rows


def _steps(p: ProfileData, run: RunData, cycles: np.ndarray) -> list[str]:
    lines = [f"    {'start':>12} {'cycles':>10}  step"]
    starts = run.start_cycles.tolist()
    for sid, start, c in zip(run.step_ids.tolist(), starts, cycles.tolist(), strict=True):
        kind = StepKind(int(p.programs.step_kind[sid])).poplar_name
        name = p.graph.strings[int(p.programs.step_name[sid])]
        lines.append(f"    {start:>12,} {c:>10,}  {kind} {name}")
    return lines
