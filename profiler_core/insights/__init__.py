"""Insights: does the program fit, why not, and what to change -- the fit panel, the fullest
tiles, a histogram of tile memory, facts per model / IPU / tile, the largest variables at
the liveness peak, and findings from small rules (``RULES``), each naming the operation and
the user's file:line and what to try. Sections a rule needs but the report lacks are named
with the reason, and the other rules still run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from profiler_core.errors import ReportError
from profiler_core.insights import rules_compute, rules_memory, rules_precision
from profiler_core.insights.context import InsightsContext
from profiler_core.insights.findings import Evidence, Finding, Severity, SourceRef, ordered
from profiler_core.insights.levels import LevelFacts, level_facts
from profiler_core.insights.memory_facts import (
    FitPanel,
    Histogram,
    TopTiles,
    memory_histogram,
    top_tiles,
)
from profiler_core.insights.peak import LivenessPeak, liveness_peak
from profiler_core.insights.pipeline_balance import pipeline_finding

__all__ = [
    "RULES",
    "Evidence",
    "Finding",
    "Insights",
    "Severity",
    "SourceRef",
    "insights",
]

Rule = Callable[[InsightsContext], list[Finding]]

RULES: tuple[tuple[str, tuple[str, ...], Rule], ...] = (
    ("over-limit", (), rules_memory.over_limit),
    ("temporaries-at-peak", ("graph", "liveness"), rules_memory.temporaries_at_peak),
    ("exchange-buffers", (), rules_memory.exchange_buffers),
    ("tile-memory-imbalance", (), rules_memory.tile_imbalance),
    ("ipu-imbalance", (), rules_memory.ipu_imbalance),
    ("vertex-code", ("graph",), rules_memory.vertex_code),
    ("fp16-candidates", ("graph", "debug"), rules_precision.fp16_candidates),
    ("cycle-imbalance", ("graph", "programs", "execution"), rules_compute.cycle_imbalance),
    ("pipeline-balance", ("graph", "programs", "execution"), pipeline_finding),
)
"""Each rule: its id, the sections it needs beyond target and memory, and the function."""


@dataclass(frozen=True)
class Insights:
    fit: FitPanel
    top_tiles: TopTiles
    histogram: Histogram
    levels: LevelFacts
    peak: LivenessPeak | None  # None without a readable liveness section
    findings: list[Finding]  # worst first
    missing: dict[str, str]  # section -> why it could not be used
    skipped: dict[str, str]  # rule id -> why it did not run

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)

    def to_dict(self) -> dict[str, Any]:
        fit = self.fit
        return {
            "fit": {
                "fits": fit.fits,
                "sentence": fit.sentence(),
                "bytes_per_tile": fit.bytes_per_tile,
                "tiles_over": fit.tiles_over.tolist(),
                "excess_bytes": fit.excess_bytes.tolist(),
                "fullest_tile": fit.fullest_tile,
                "fullest_bytes": fit.fullest_bytes,
                "headroom_bytes": fit.headroom_bytes,
                "allow_out_of_memory": fit.allow_out_of_memory,
            },
            "top_tiles": [
                {
                    "tile": int(t),
                    "bytes": int(b),
                    "categories": {c.label: v for c, v in self.top_tiles.split(i)},
                }
                for i, (t, b) in enumerate(
                    zip(self.top_tiles.tiles.tolist(), self.top_tiles.total.tolist(), strict=True)
                )
            ],
            "histogram": {
                "edges_kib": self.histogram.edges_kib.tolist(),
                "counts": self.histogram.counts.tolist(),
                "limit_kib": self.histogram.limit_kib,
            },
            "model": {e.label: e.value for e in self.levels.model},
            "peak": None if self.peak is None else _peak_dict(self.peak),
            "findings": [f.to_dict() for f in self.findings],
            "missing": self.missing,
            "skipped_rules": self.skipped,
        }


def _peak_dict(peak: LivenessPeak) -> dict[str, Any]:
    def rows(group: Any) -> list[dict[str, Any]]:
        return [
            {"variable": int(v), "name": n, "bytes": int(b), **s.to_dict()}
            for v, n, b, s in zip(
                group.var.tolist(), group.names, group.bytes.tolist(), group.sources, strict=True
            )
        ]

    return {
        "step": peak.step,
        "step_name": peak.step_name,
        "live_bytes": peak.live_bytes,
        "always_live": rows(peak.always_live),
        "not_always_live": rows(peak.not_always_live),
    }


def insights(report: Any, debug: Any = None, top: int = 5, peak_rows: int = 10) -> Insights:
    """Everything the Insights report shows. Raises ReportError only when the target or
    memory section cannot be read (there is nothing to say without them)."""
    ctx = InsightsContext(report, debug)
    findings: list[Finding] = []
    skipped: dict[str, str] = {}
    for rule_id, needs, rule in RULES:
        lacking = [s for s in needs if ctx.missing(s)]
        if lacking:
            skipped[rule_id] = f"needs the {lacking[0]} section: {ctx.missing(lacking[0])}"
            continue
        try:
            findings += rule(ctx)
        except ReportError as error:
            skipped[rule_id] = str(error)
    peak = None
    if not ctx.missing("liveness") and not ctx.missing("graph"):
        try:
            peak = liveness_peak(ctx, peak_rows)
        except ReportError as error:
            skipped["peak"] = str(error)
    for section in ("graph", "liveness", "programs", "execution", "debug"):
        ctx.missing(section)  # name every absent section, used by a rule or not
    return Insights(
        fit=ctx.fit,
        top_tiles=top_tiles(ctx.table, top),
        histogram=memory_histogram(ctx.table),
        levels=level_facts(ctx),
        peak=peak,
        findings=ordered(findings),
        missing=ctx.missing_sections,
        skipped=skipped,
    )
