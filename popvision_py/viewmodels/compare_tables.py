"""What each view compares, as ``CompareSpec`` tables over profiler_core's compare analysis:
one function per view, all built with the same ``Sides`` / ``delta_table`` of compare.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from popvision_py.viewmodels.compare import ComparePair, Sides
from popvision_py.viewmodels.format import format_bytes
from profiler_core.analysis.liveness import liveness_table
from profiler_core.analysis.matching import match_rows, occurrence_keys
from profiler_core.analysis.memory import memory_table
from profiler_core.insights import insights
from profiler_core.model.kinds import MemoryCategory, StepKind


@dataclass(frozen=True)
class CompareSpec:
    """One comparison table of a view: its tab title, heading and rows."""

    title: str
    heading: str
    sides: Sides | Callable[[], Sides]  # a callable: made when its tab is first opened
    key_header: str
    kind: str = "count"  # of the A and B columns: "count", "bytes", "exact_bytes"
    noun: str = "rows"
    # (x label, y label): also draw A and B as curves in row order over B - A
    chart: tuple[str, str] | None = None


def memory_categories(pair: ComparePair) -> Sides:
    memory = pair.comparison.memory
    keys = [c.label for c in MemoryCategory] + ["Total (gaps included)"]
    return Sides(keys, np.append(memory.a, memory.total_a), np.append(memory.b, memory.total_b))


def cycles_by_kind(pair: ComparePair) -> Sides:
    cycles = pair.comparison.cycles
    keys = [k.poplar_name for k in StepKind] + ["total (runs)"]
    return Sides(keys, np.append(cycles.a, cycles.total_a), np.append(cycles.b, cycles.total_b))


def summary_specs(pair: ComparePair) -> list[CompareSpec]:
    """Memory by category and cycles by step kind: the numbers ``popvision-cli compare``
    prints first."""
    return [
        CompareSpec("Memory", "Memory by category, all tiles (bytes)",
                    memory_categories(pair), "Category", "exact_bytes", "categories"),
        CompareSpec("Cycles", "Cycles by program step kind, over every run",
                    cycles_by_kind(pair), "Step kind", "count", "kinds"),
    ]  # fmt: skip


def memory_per_tile(pair: ComparePair) -> Sides | None:
    """Bytes per tile (gaps included) of A and B; None when the tile counts differ."""
    diff = pair.comparison.memory.per_tile_diff
    if diff is None:
        return None
    a = memory_table(pair.a.report).total()
    b = memory_table(pair.b.report).total()
    return Sides([f"tile {t}" for t in range(len(a))], a, b)


def memory_selected_tiles(pair: ComparePair) -> Sides | None:
    """Bytes by category on the tiles selected (in A's selection), in A and in B; None when
    nothing is selected or the tiles do not correspond."""
    tiles = pair.a.selection.tiles
    if not tiles.size or pair.comparison.memory.per_tile_diff is None:
        return None
    a = memory_table(pair.a.report).by_category
    b = memory_table(pair.b.report).by_category
    tiles = tiles[tiles < a.shape[1]]
    keys = [c.label for c in MemoryCategory]
    return Sides(keys, a[:, tiles].sum(axis=1), b[:, tiles].sum(axis=1))


def memory_specs(pair: ComparePair) -> list[CompareSpec]:
    def variables() -> Sides:
        return Sides.from_matched(pair.comparison.variables, "bytes")

    specs = [
        CompareSpec("Compare: categories", "Memory by category, all tiles",
                    memory_categories(pair), "Category", "bytes", "categories"),
        CompareSpec("Compare: variables", "Variables matched by name (the n-th of a name "
                    "with the n-th); Status marks those in one report only",
                    variables, "Variable", "bytes", "variables"),
    ]  # fmt: skip
    selected = memory_selected_tiles(pair)
    if selected is not None:
        count = pair.a.selection.tiles.size
        specs.insert(1, CompareSpec(
            "Compare: selected tiles", f"Memory by category on the {count:,} selected "
            "tile(s), A and B", selected, "Category", "bytes", "categories"))  # fmt: skip
    tiles = memory_per_tile(pair)
    if tiles is not None:
        specs.insert(0, CompareSpec(
            "Compare: tiles", "Memory per tile, gaps included: A and B overlaid, B - A below",
            tiles, "Tile", "bytes", "tiles", chart=("Tile", "Memory")))  # fmt: skip
    return specs


def step_alignment(kinds_a: list[str], kinds_b: list[str]) -> str:
    """``"step"`` when both programs have the same steps in the same order (the n-th step of A
    is the n-th of B, whatever their names), else ``"name"``."""
    return "step" if kinds_a == kinds_b else "name"


def liveness_sides(pair: ComparePair) -> tuple[Sides, str, str]:
    """Live bytes per program step of A and B, a heading with each report's own peak, and the
    alignment used: by step when the programs have the same steps, else by kind and name (the
    n-th of a name with the n-th), as Graph Analyser does for differing programs."""
    names, kinds, lives, peaks = [], [], [], []
    for opened in (pair.a, pair.b):
        table = liveness_table(opened.report)
        names.append(opened.report.graph.strings.take(table.step_name))
        kinds.append([StepKind(k).poplar_name for k in table.step_kind.tolist()])
        lives.append({"live": table.live_bytes()})
        peaks.append((table.peak_bytes, table.peak_step))
    alignment = step_alignment(kinds[0], kinds[1])
    if alignment == "step":
        keys = [
            f"{i} {kind} {a}" if a == b else f"{i} {kind} {a} / {b}"
            for i, (kind, a, b) in enumerate(zip(kinds[0], names[0], names[1], strict=True))
        ]
        matched = match_rows(keys, lives[0], keys, lives[1])
    else:
        keys_a, keys_b = (
            occurrence_keys(f"{k} {n}" for k, n in zip(ks, ns, strict=True))
            for ks, ns in zip(kinds, names, strict=True)
        )
        matched = match_rows(keys_a, lives[0], keys_b, lives[1])
    (peak_a, step_a), (peak_b, step_b) = peaks
    how = (
        "aligned by step (same program steps)"
        if alignment == "step"
        else f"matched by kind and name (the programs differ: {len(kinds[0]):,} and "
        f"{len(kinds[1]):,} steps)"
    )
    heading = (
        f"Peak A: {format_bytes(peak_a)} at step {step_a}; peak B: {format_bytes(peak_b)} "
        f"at step {step_b}; Δ {format_bytes(peak_b - peak_a)}; steps {how}"
    )
    return Sides.from_matched(matched, "live"), heading, alignment


def liveness_specs(pair: ComparePair) -> list[CompareSpec]:
    sides, heading, alignment = liveness_sides(pair)
    x_label = "Program step" if alignment == "step" else "Program step (matched by name, A's order)"
    return [
        CompareSpec("Compare: steps", heading, sides, "Program step", "bytes", "steps",
                    chart=(x_label, "Live memory")),
        CompareSpec("Compare: variables", "Variables of A and B matched by name (the n-th "
                    "of a name with the n-th): Status says changed, the same, only in A or "
                    "only in B", lambda: Sides.from_matched(pair.comparison.variables, "bytes"),
                    "Variable", "bytes", "variables"),
    ]  # fmt: skip


def program_tree_specs(pair: ComparePair) -> list[CompareSpec]:
    programs = pair.comparison.programs
    return [
        CompareSpec("Compare: programs", "Program tree nodes matched by name: cycles over "
                    "every run", Sides.from_matched(programs, "cycles"), "Program", "count",
                    "programs"),
    ]  # fmt: skip


def operations_specs(pair: ComparePair, group_by: str = "name") -> list[CompareSpec]:
    matched = pair.comparison.operations(group_by, ("total_cycles", "variable_bytes"))
    return [
        CompareSpec("Compare: cycles", f"Operations matched by {group_by}: total cycles",
                    Sides.from_matched(matched, "total_cycles"), "Operation", "count",
                    "operations"),
        CompareSpec("Compare: memory", f"Operations matched by {group_by}: variable bytes",
                    Sides.from_matched(matched, "variable_bytes"), "Operation", "bytes",
                    "operations"),
    ]  # fmt: skip


def execution_specs(pair: ComparePair) -> list[CompareSpec]:
    runs = pair.comparison.cycles.runs
    return [
        CompareSpec("Compare: by kind", "Cycles by program step kind, over every run",
                    cycles_by_kind(pair), "Step kind", "count", "kinds"),
        CompareSpec("Compare: runs", "Cycles of each run", Sides.from_matched(runs, "cycles"),
                    "Run", "count", "runs"),
        CompareSpec("Compare: steps", "Program steps matched by kind and name: cycles",
                    Sides.from_matched(pair.comparison.steps, "cycles"), "Program step",
                    "count", "steps"),
    ]  # fmt: skip


def insights_specs(pair: ComparePair) -> list[CompareSpec]:
    """Does it fit, A against B: the fullest tile, tiles over the limit, total memory, and
    (when both have liveness) the peak and always-live bytes."""
    keys, a, b = [], [], []
    tables = [memory_table(o.report) for o in (pair.a, pair.b)]
    totals = [t.total() for t in tables]
    keys += ["Fullest tile (bytes)", "Tiles over the limit", "Memory used (bytes)"]
    for values, total, table in ((a, totals[0], tables[0]), (b, totals[1], tables[1])):
        values += [int(total.max(initial=0)), int(table.over_limit().size), int(total.sum())]
    if not (pair.a.missing("liveness", "programs") or pair.b.missing("liveness", "programs")):
        keys += ["Peak live bytes", "Always-live bytes"]
        for values, opened in ((a, pair.a), (b, pair.b)):
            live = liveness_table(opened.report)
            values += [live.peak_bytes, live.always_live_bytes]
    sides = Sides(keys, np.array(a, dtype=np.int64), np.array(b, dtype=np.int64))
    return [
        CompareSpec("Compare: fit", "Does it fit: A against B", sides, "Measure", "count",
                    "measures"),
        CompareSpec("Compare: findings", "Findings of A and B matched by rule and operation: "
                    "how many each report has; Status says only in A, only in B or both",
                    lambda: finding_sides(pair), "Finding", "count", "findings"),
    ]  # fmt: skip


def finding_sides(pair: ComparePair) -> Sides:
    """Each (rule, operation) with a finding in A or B, and how many findings it has in each."""
    counts: list[dict[str, int]] = []
    for opened in (pair.a, pair.b):
        found: dict[str, int] = {}
        for finding in insights(opened.report).findings:
            key = f"{finding.severity.label} {finding.rule}: {finding.source.label}"
            found[key] = found.get(key, 0) + 1
        counts.append(found)
    keys = sorted(set(counts[0]) | set(counts[1]))
    a = np.array([counts[0].get(k, 0) for k in keys], dtype=np.int64)
    b = np.array([counts[1].get(k, 0) for k in keys], dtype=np.int64)
    return Sides(keys, a, b, a > 0, b > 0)
