"""Insights on real reports: the fit panel, fullest tiles, histogram and the variables at the
liveness peak against numpy over the report's columns; findings on the tutorial-4 OOM
variant name the matmul's partials and the example's line; missing sections are named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profiler_core.insights import Severity, insights
from profiler_core.model.kinds import MemoryCategory
from profiler_core.report import open_report

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "tutorial4_matmul.py"


def example_line(text: str) -> int:
    """The 1-based line of the example that contains ``text`` (read independently)."""
    lines = EXAMPLE.read_text().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if text in line)


def tile_totals(report) -> np.ndarray:
    return np.asarray(report.memory.by_category, dtype=np.int64).sum(axis=0)


def test_the_oom_variant_does_not_fit_on_every_tile_over_the_limit(tutorial4_oom_report):
    report = open_report(tutorial4_oom_report)
    found = insights(report)
    totals = tile_totals(report)
    limit = report.target.bytes_per_tile
    over = np.flatnonzero(totals > limit)
    assert report.header.out_of_memory and over.size > 0
    assert not found.fit.fits
    assert found.fit.allow_out_of_memory
    assert sorted(found.fit.tiles_over.tolist()) == over.tolist()
    assert found.fit.tiles_over[0] == int(np.argmax(totals))  # over-limit tiles, fullest first
    assert np.all(np.diff(totals[found.fit.tiles_over]) <= 0)
    assert found.fit.worst_excess == int(totals.max()) - limit
    assert found.fit.headroom_bytes == limit - int(totals.max())
    assert f"{len(over):,} of 1,472 tiles" in found.fit.sentence()


def test_the_oom_top_findings_name_the_matmuls_partials_and_line(tutorial4_oom_report):
    found = insights(open_report(tutorial4_oom_report))
    # m4's plan, given the whole tile, fills it with received operands and partials:
    # the two first findings are its exchange buffers and its partials
    assert [f.rule for f in found.findings[:2]] == ["exchange-buffers", "temporaries-at-peak"]
    assert found.findings[0].source.operation == "m4"
    top = found.findings[1]
    assert top.severity is Severity.ERROR
    assert "partials" in top.title
    assert top.source.operation == "m4" and top.source.op == "poplin::matMul"
    assert Path(top.source.file).name == "tutorial4_matmul.py"
    assert top.source.line == example_line("poplin.mat_mul(graph, m1, m2")
    # partials of m4: {plan k-split 10? } -- its bytes are evidence; check against var_bytes
    report = open_report(tutorial4_oom_report)
    graph = report.graph
    names = graph.strings.take(graph.var_name)
    partials = [i for i, n in enumerate(names) if n == "partials"]
    assert f"{int(graph.var_bytes[partials[0]]):,} bytes" in " ".join(
        e.text() for e in top.evidence
    )
    assert "availableMemoryProportion" in top.suggestion
    assert found.worst() is Severity.ERROR
    assert "execution" in found.missing and "cycle-imbalance" in found.skipped


def test_tutorial4_fits_with_the_headroom_of_its_fullest_tile(tutorial4_report):
    report = open_report(tutorial4_report)
    found = insights(report)
    totals = tile_totals(report)
    assert found.fit.fits and found.fit.tiles_over.size == 0
    assert found.fit.fullest_tile == int(np.argmax(totals)) == 14
    assert found.fit.headroom_bytes == 638_976 - int(totals.max())
    assert all(f.severity is Severity.INFO for f in found.findings)
    assert found.missing == {}


def test_top_tiles_are_the_fullest_with_their_category_split(tutorial4_report):
    report = open_report(tutorial4_report)
    top = insights(report, top=8).top_tiles
    totals = tile_totals(report)
    expected = sorted(range(len(totals)), key=lambda t: (-totals[t], t))[:8]
    assert top.tiles.tolist() == expected
    for row, tile in enumerate(expected):
        split = top.split(row)
        assert sum(v for _, v in split) == totals[tile]
        values = [v for _, v in split]
        assert values == sorted(values, reverse=True)
        by_cat = report.memory.by_category[:, tile]
        assert all(by_cat[c] == v for c, v in split)


def test_the_histogram_counts_every_tile_in_kib_bins_with_the_limit(tutorial4_report):
    report = open_report(tutorial4_report)
    hist = insights(report).histogram
    assert int(hist.counts.sum()) == 1472
    assert hist.limit_kib == 624.0
    assert hist.edges_kib[-1] >= 624.0
    kib = tile_totals(report) / 1024
    step = hist.bin_kib
    by_hand = np.zeros(len(hist.counts), dtype=np.int64)
    for value in kib.tolist():
        by_hand[int(value // step)] += 1
    assert by_hand.tolist() == hist.counts.tolist()


def test_the_peak_lists_the_largest_variables_with_operation_and_line(tutorial4_report):
    report = open_report(tutorial4_report)
    peak = insights(report).peak
    live = report.liveness.step_live_bytes
    assert peak.step == int(np.argmax(live))
    # m4's partials: 10 partial sums of the 900 x 300 float output (plan [21, 7, 10])
    assert peak.not_always_live.names[0] == "partials"
    assert int(peak.not_always_live.bytes[0]) == 10 * 900 * 300 * 4
    source = peak.not_always_live.sources[0]
    assert (
        source.label == f"m4 (poplin::matMul) at tutorial4_matmul.py:{example_line('m1, m2, prog')}"
    )
    assert peak.always_live.names[0] == "m1"
    assert int(peak.always_live.bytes[0]) == 900 * 600 * 4
    assert peak.always_live.sources[0].line == example_line("add_variable(elem, args.m1")


def test_levels_give_the_same_facts_per_model_ipu_and_tile(tutorial4_report):
    report = open_report(tutorial4_report)
    levels = insights(report).levels
    totals = tile_totals(report)
    model = {e.label: e.value for e in levels.model}
    assert model["Memory used"] == int(totals.sum())
    assert levels.ipus["Memory (bytes)"].tolist() == [int(totals.sum())]
    assert levels.tiles["Memory (bytes)"].tolist() == totals.tolist()
    vertices = np.zeros(1472, dtype=np.int64)
    graph = report.graph
    for tile, count in zip(graph.vc_tile.tolist(), graph.vc_count.tolist(), strict=True):
        vertices[tile] += count
    assert levels.tiles["Vertices"].tolist() == vertices.tolist()
    runs = report.execution.runs
    cycles = sum(int(report.programs.step_cycles[r.step_ids].max(axis=1).sum()) for r in runs)
    assert model["Cycles (every run)"] == cycles


def test_a_damaged_liveness_section_leaves_the_other_findings(tmp_path, tutorial4_report):
    import shutil

    from profiler_core.formats.profile_pop import read_profile
    from profiler_core.formats.profile_pop.writer import build_message, write_message

    folder = tmp_path / "damaged"
    folder.mkdir()
    message = build_message(read_profile(tutorial4_report / "profile.pop"))
    message.liveness.intervalVar.dtype = ">i8"
    write_message(folder / "profile.pop", message)
    shutil.copy(tutorial4_report / "debug.cbor", folder / "debug.cbor")
    found = insights(open_report(folder))
    assert (
        "liveness" in found.missing and "autoReport.outputGraphProfile" in found.missing["liveness"]
    )
    assert "temporaries-at-peak" in found.skipped
    assert found.peak is None
    assert {f.rule for f in found.findings} >= {"exchange-buffers"}
    assert found.fit.fits


class Edited:
    """A report with some sections replaced (an analysis sees only these attributes)."""

    def __init__(self, report, **sections) -> None:
        self._report = report
        self.__dict__.update(sections)

    def __getattr__(self, name):
        return getattr(self._report, name)


def test_cycle_and_memory_imbalance_rules_fire_on_an_uneven_report(tutorial4_report):
    """The same report with one tile's compute cycles made 10x the slowest and one tile's
    constants grown: the rules name that tile, and the compute set's operation and line."""
    import dataclasses

    from profiler_core.insights import rules_compute, rules_memory
    from profiler_core.insights.context import InsightsContext

    report = open_report(tutorial4_report)
    programs = report.programs
    cs = int(programs.cst_cs[0])
    rows = np.flatnonzero(programs.cst_cs == cs)
    tile = int(programs.cst_tile[rows[3]])
    cycles = programs.cst_cycles.copy()
    cycles[rows[3]] = programs.cst_cycles[rows].max() * 10
    edited = Edited(report, programs=dataclasses.replace(programs, cst_cycles=cycles))
    (finding,) = rules_compute.cycle_imbalance(InsightsContext(edited))
    assert finding.tiles == (tile,)
    assert finding.source.op == "poplin::matMul"
    assert finding.source.line in (example_line("m1, m2, prog"), example_line("m4, m3, prog"))
    mean = cycles[rows].astype(np.int64).mean()
    evidence = {e.label: e.value for e in finding.evidence}
    assert evidence["Mean tile"] == pytest.approx(mean)
    assert evidence["Slowest tile"] == int(cycles[rows[3]])
    # a library op lays out its own vertices: no remapping is advised that could not work
    assert "map its output" not in finding.suggestion
    assert rules_compute.cycle_imbalance(InsightsContext(report)) == []

    by_category = np.array(report.memory.by_category)
    by_category[MemoryCategory.CONSTANTS, 7] += 400_000
    memory = dataclasses.replace(report.memory, by_category=by_category)
    (uneven,) = rules_memory.tile_imbalance(InsightsContext(Edited(report, memory=memory)))
    assert uneven.tiles == (7,) and uneven.severity is Severity.INFO
    # the excess is constants (data): spreading the tile's tensors is advised
    assert "excess over the mean tile is data: spread" in uneven.suggestion
    totals = by_category.sum(axis=0)
    assert {e.label: e.value for e in uneven.evidence}["Max / mean"] == pytest.approx(
        totals.max() / totals.mean()
    )
