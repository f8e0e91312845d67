"""What the Insights page shows, without Qt: the fit panel's words, the fullest tiles with
their category split, the histogram's bars, tables per level and of the peak's variables,
and the findings with evidence and suggestion -- all from ``profiler_core.insights``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popvision_py.viewmodels.colors import CATEGORY_COLORS
from popvision_py.viewmodels.format import format_bytes
from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.insights import Evidence, Finding, Insights
from profiler_core.insights.peak import PeakVariables

TOP_TILES = 5
MORE_TILES = 20

SECTION_NAMES = {
    "graph": "graph",
    "liveness": "liveness",
    "programs": "program steps",
    "execution": "execution profile",
    "debug": "debug information",
}


@dataclass(frozen=True)
class TileRow:
    tile: int
    text: str  # "Tile 14: 36.0 KiB (5.8%)"
    over: bool
    split: list[tuple[str, int, str]]  # (category, bytes, colour), largest first


class InsightsViewModel:
    """The Insights page of one report."""

    def __init__(self, found: Insights, name: str = "") -> None:
        self.found = found
        self.name = name
        self.expanded = False

    # -- fit panel -----------------------------------------------------------------------
    @property
    def fits(self) -> bool:
        return self.found.fit.fits

    def fit_title(self) -> str:
        return "Fits" if self.fits else "Does not fit"

    def fit_text(self) -> str:
        fit = self.found.fit
        lines = [fit.sentence()]
        if self.name:  # compare mode names the report shown, the first of the two
            lines.insert(0, f"{self.name} (the first of the two reports compared):")
        if not fit.fits:
            shown = ", ".join(
                f"{t} (+{e:,} bytes)"
                for t, e in zip(
                    fit.tiles_over[:8].tolist(), fit.excess_bytes[:8].tolist(), strict=True
                )
            )
            more = len(fit.tiles_over) - 8
            lines.append(
                f"Over the limit, fullest first: {shown}"
                + (f", and {more:,} more" if more > 0 else "")
            )
            if fit.allow_out_of_memory:
                lines.append(
                    "Made with debug.allowOutOfMemory: Poplar gives this report, but the "
                    "program cannot be loaded until it fits."
                )
        return "\n".join(lines)

    def missing_text(self) -> str:
        """Which sections are missing, why, and which findings that leaves out."""
        found = self.found
        if not found.missing:
            return ""
        lines = []
        for section, why in found.missing.items():
            rules = [r for r, reason in found.skipped.items() if f"the {section} section" in reason]
            left_out = f" Not computed: {', '.join(rules)}." if rules else ""
            lines.append(f"No {SECTION_NAMES.get(section, section)}: {why}.{left_out}")
        return "\n".join(lines)

    # -- fullest tiles -------------------------------------------------------------------
    def set_expanded(self, on: bool) -> None:
        self.expanded = on

    def tile_rows(self) -> list[TileRow]:
        top = self.found.top_tiles
        count = MORE_TILES if self.expanded else TOP_TILES
        limit = top.bytes_per_tile
        rows = []
        for i in range(min(count, len(top))):
            total = int(top.total[i])
            split = [(c.label, v, CATEGORY_COLORS[c]) for c, v in top.split(i)]
            text = f"Tile {int(top.tiles[i])}: {format_bytes(total)} ({100 * total / limit:.1f}%)"
            rows.append(TileRow(int(top.tiles[i]), text, total > limit, split))
        return rows

    # -- histogram -----------------------------------------------------------------------
    def histogram_bars(self) -> tuple[np.ndarray, np.ndarray, float]:
        """(bin centres in KiB, tile counts, bin width in KiB)."""
        hist = self.found.histogram
        centres = (hist.edges_kib[:-1] + hist.edges_kib[1:]) / 2
        return centres, hist.counts, hist.bin_kib

    @property
    def limit_kib(self) -> float:
        return self.found.histogram.limit_kib

    # -- tables --------------------------------------------------------------------------
    def model_table(self) -> ColumnTable:
        facts = self.found.levels.model
        return ColumnTable(
            [Column("Fact", [e.label for e in facts]), Column("Value", [_value(e) for e in facts])]
        )

    def ipu_table(self) -> ColumnTable:
        return _columns_table(self.found.levels.ipus)

    def tile_table(self) -> ColumnTable:
        table = _columns_table(self.found.levels.tiles)
        table.sort(list(self.found.levels.tiles).index("Memory (bytes)"), descending=True)
        return table

    def peak_title(self) -> str:
        peak = self.found.peak
        if peak is None:
            return ""
        return (
            f"At the liveness peak, step {peak.step} ({peak.step_name}): "
            f"{format_bytes(peak.live_bytes)} live"
        )

    def peak_table(self, always_live: bool) -> ColumnTable | None:
        peak = self.found.peak
        if peak is None:
            return None
        return _variables_table(peak.always_live if always_live else peak.not_always_live)

    # -- findings ------------------------------------------------------------------------
    def findings(self) -> list[Finding]:
        return self.found.findings

    def findings_summary(self) -> str:
        counts: dict[str, int] = {}
        for f in self.found.findings:
            counts[f.severity.label] = counts.get(f.severity.label, 0) + 1
        if not counts:
            return "No findings: nothing stands out in this report."
        total = len(self.found.findings)
        parts = ", ".join(f"{n} {label}" for label, n in counts.items())
        return (
            f"{total} finding{'s' if total != 1 else ''}: {parts}. Click one to select its tiles."
        )


def _value(evidence: Evidence) -> str:
    text = evidence.text()
    return text.split(": ", 1)[1] if ": " in text else text


def _columns_table(columns: dict[str, np.ndarray]) -> ColumnTable:
    out = []
    for header, values in columns.items():
        values = np.asarray(values)
        if header in ("IPU", "Tile", "Fullest tile"):
            out.append(Column(header, values, kind="count"))
        elif "(bytes)" in header:
            out.append(Column(header, values, kind="exact_bytes"))
        elif "(%)" in header:
            out.append(Column(header, values, kind="percent"))
        else:
            out.append(Column(header, values, kind="count"))
    return ColumnTable(out)


def _variables_table(group: PeakVariables) -> ColumnTable:
    return ColumnTable(
        [
            Column("Variable", list(group.names)),
            Column("Bytes", group.bytes, kind="exact_bytes"),
            Column("Operation", [s.operation or "(none)" for s in group.sources]),
            Column("Op", [s.op for s in group.sources]),
            Column("File:line", [s.location for s in group.sources]),
        ]
    )
