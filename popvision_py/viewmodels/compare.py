"""Comparing two opened reports, written once for every view: the A/B names and colours, the
notes on what cannot be compared, and tables of A, B, difference (B - A) and % change built
from profiler_core's compare analysis (so the GUI and ``popvision-cli compare`` agree)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.analysis.compare import ReportComparison, compare_reports
from profiler_core.analysis.matched_keys import keys_at
from profiler_core.analysis.matching import Matched

# The one A/B pair every view draws with: A (the baseline) teal, B (the change) pink -- apart
# from the step-kind colours (blue, orange, purple, red, green, grey) the traces draw with.
A_COLOR = "#17a2b8"
B_COLOR = "#d63384"
# Signed differences: B uses more (red) or less (green) than A.
MORE_COLOR = "#d62728"
LESS_COLOR = "#2ca02c"
ADDED_COLOR = B_COLOR  # a row found in B only
REMOVED_COLOR = A_COLOR  # a row found in A only
SAME_COLOR = "#9a9a9a"


def side_names(a: Path, b: Path, labels: tuple[str, str] | None = None) -> tuple[str, str]:
    """Names that tell A and B apart: the user's labels, else the folder names, each grown by
    its parents until they differ (``a/tutorial4`` and ``b/tutorial4``)."""
    if labels and all(labels) and labels[0] != labels[1]:
        return labels[0], labels[1]
    parts_a, parts_b = Path(a).resolve().parts, Path(b).resolve().parts
    for depth in range(1, max(len(parts_a), len(parts_b)) + 1):
        name_a, name_b = "/".join(parts_a[-depth:]), "/".join(parts_b[-depth:])
        if name_a != name_b:
            return name_a, name_b
    base = Path(a).name or str(a)
    return f"{base} (A)", f"{base} (B)"  # the same folder twice


def percent_change(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """100 (B - A) / A; +inf where A is 0 and B is not, nan where both are 0."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 100.0 * (b - a) / np.abs(a)
    out[(a == 0) & (b == 0)] = 0.0
    return out


@dataclass(frozen=True)
class Sides:
    """The rows of a comparison table: a key per row, A's and B's values, and presence."""

    keys: Sequence[str]  # a list, or matched keys decoded on demand
    a: np.ndarray
    b: np.ndarray
    in_a: np.ndarray | None = None  # bool; None: every row is in both
    in_b: np.ndarray | None = None

    @classmethod
    def from_matched(cls, matched: Matched, column: str) -> Sides:
        return cls(matched.keys, matched.a[column], matched.b[column], matched.in_a, matched.in_b)

    @property
    def diff(self) -> np.ndarray:
        return np.asarray(self.b, dtype=np.int64) - np.asarray(self.a, dtype=np.int64)

    def status(self) -> list[str]:
        """ "only in A", "only in B", "changed" or "same", per row."""
        n = len(self.keys)
        in_a = self.in_a if self.in_a is not None else np.ones(n, bool)
        in_b = self.in_b if self.in_b is not None else np.ones(n, bool)
        diff = self.diff
        return [
            "only in A" if not ib else "only in B" if not ia else "changed" if d else "same"
            for ia, ib, d in zip(in_a.tolist(), in_b.tolist(), diff.tolist(), strict=True)
        ]


STATUS_COLORS = {
    "only in A": REMOVED_COLOR,
    "only in B": ADDED_COLOR,
    "changed": MORE_COLOR,
    "same": SAME_COLOR,
}


NO_NAME = "(none)"  # the key shown for a row whose key is ""


def delta_table(
    sides: Sides,
    key_header: str,
    names: tuple[str, str],
    kind: str = "count",
    by_change: bool = True,
) -> ColumnTable:
    """Key, A, B, Δ (B - A), % and status columns; rows by the largest change first unless
    ``by_change`` is False; changed rows tinted (more in red, less in green, one side in the
    side's colour)."""
    diff = sides.diff
    order = np.argsort(-np.abs(diff), kind="stable") if by_change else np.arange(len(diff))
    status = sides.status()
    status = [status[i] for i in order.tolist()]
    values_kind = "exact_bytes" if kind == "exact_bytes" else kind
    a, b, d = np.asarray(sides.a)[order], np.asarray(sides.b)[order], diff[order]
    tints: list[str | None] = []
    for s, change in zip(status, d.tolist(), strict=True):
        if s in ("only in A", "only in B"):
            tints.append(STATUS_COLORS[s])
        else:
            tints.append(None if change == 0 else MORE_COLOR if change > 0 else LESS_COLOR)
    columns = [
        # a row without a name (operations without a debug context) is "(none)", as the
        # views' own tables and popvision-cli compare name it
        Column(key_header, [k or NO_NAME for k in keys_at(sides.keys, order)], "The row's name.",
               colors=[t or SAME_COLOR for t in tints]),
        Column(f"A: {names[0]}", a, f"In A ({names[0]}).", kind=values_kind),
        Column(f"B: {names[1]}", b, f"In B ({names[1]}).", kind=values_kind),
        Column("Δ (B - A)", d, "B minus A.", kind="delta_bytes" if kind == "bytes" else "delta"),
        Column("%", percent_change(a, b), "(B - A) / A.", kind="delta_percent"),
        Column("Status", status, "Changed, the same, or found in one report only."),
    ]  # fmt: skip
    return ColumnTable(columns, tints=tints)


@dataclass
class ComparePair:
    """Report A (the baseline) and report B, their names, and their comparison."""

    a: OpenedReport
    b: OpenedReport
    labels: tuple[str, str] | None = None
    names: tuple[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.names = side_names(self.a.folder, self.b.folder, self.labels)

    def swapped(self) -> ComparePair:
        labels = (self.labels[1], self.labels[0]) if self.labels else None
        return ComparePair(self.b, self.a, labels)

    @cached_property
    def comparison(self) -> ReportComparison:
        return compare_reports(self.a.report, self.b.report)

    def missing_text(self, *sections: str) -> str:
        """Which side lacks which of ``sections`` ("" when both have them all)."""
        texts = []
        for side, opened, name in (("A", self.a, self.names[0]), ("B", self.b, self.names[1])):
            text = opened.missing_text(*sections)
            if text:
                texts.append(f"Report {side} ({name}): {text}")
        return "\n\n".join(texts)

    def notes(self) -> list[str]:
        """What the banner says: the same report twice, or targets that differ (and what is
        still compared)."""
        notes = []
        if self.a.folder.resolve() == self.b.folder.resolve():
            notes.append("A and B are the same report: there is no difference.")
        if "target" in self.a.errors or "target" in self.b.errors:
            return notes
        ta, tb = self.a.report.target, self.b.report.target
        differs = []
        if ta.num_ipus != tb.num_ipus:
            differs.append(f"{ta.num_ipus} IPU(s) vs {tb.num_ipus}")
        if ta.version != tb.version:
            differs.append(f"{ta.version} vs {tb.version}")
        if ta.num_tiles != tb.num_tiles:
            differs.append(f"{ta.num_tiles:,} tiles vs {tb.num_tiles:,}")
        if differs:
            notes.append(
                "The targets differ (" + ", ".join(differs) + "): totals, categories, "
                "operations and program steps are compared; per-tile differences are not, "
                "as the tiles do not correspond."
            )
        return notes

    def same_tiles(self) -> bool:
        try:
            return self.a.report.target.num_tiles == self.b.report.target.num_tiles
        except Exception:  # a damaged target: treated as not comparable tile by tile
            return False


def pair_of(a: OpenedReport, b: OpenedReport) -> ComparePair:
    """The one ComparePair of A and B every view shares (made on first use)."""
    pair = a.comparisons.get(id(b))
    if pair is None or pair.b is not b:
        labels = (a.label, b.label) if a.label and b.label else None
        pair = a.comparisons[id(b)] = ComparePair(a, b, labels)
    return pair


def compared_names(opened: list[OpenedReport]) -> list[str]:
    """The reports' names, told apart when two are compared (A and B's)."""
    if len(opened) == 2:
        return list(pair_of(opened[0], opened[1]).names)
    return [o.name for o in opened]
