"""A live recording's System Trace model over sorted pieces: after every poll it draws what
the trace sorted at once draws, and after the last poll exactly what the finished .pvti,
opened with the normal reader, draws -- spans, instants, series and counts."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import numpy as np

from popvision_py.viewmodels.live_trace import LiveTraceModel
from popvision_py.viewmodels.piece_facts import prepare_piece
from popvision_py.viewmodels.system_trace import SystemTraceModel
from profiler_core.analysis.chained_lanes import ChainedLane
from profiler_core.formats.pvti import PvtiWriter
from profiler_core.trace import TraceTail, open_trace

POLLS = 40
WIDTHS = (37, 800)


class Program:
    """Three threads writing epochs (depth 0) of steps (depth 1) of ops (depth 2), spans
    committed as they end (children first), instants and a loss series; the epoch and
    step open at a commit are the writer's open spans."""

    def __init__(self, writer: PvtiWriter) -> None:
        self.w, self.o = writer, writer.origin_monotonic_ns
        self.now = 0
        self.open: dict[int, list[tuple[str, int, int]]] = {}
        writer.open_spans_source = self.open_spans

    def open_spans(self):
        return [(tid, "main", label, self.o + start, depth)
                for tid, stack in self.open.items() for label, start, depth in stack]  # fmt: skip

    def poll(self, k: int, rng: np.random.Generator) -> None:
        for tid in (11, 12, 13):
            stack = self.open.setdefault(tid, [])
            if not stack:
                stack.append((f"epoch {k // 7}", self.now, 0))
            for _ in range(int(rng.integers(1, 6))):
                step = self.now + 3
                for j in range(int(rng.integers(0, 4))):
                    s = step + 10 * j + 1
                    channel = "ops" if j % 2 else "main"
                    self.w.add_span(tid, channel, f"op{j}", self.o + s, self.o + s + 5, 2)
                if rng.random() < 0.3:
                    self.w.add_instant(tid, "main", "mark", self.o + step + 2, 2)
                self.now = step + 50
                self.w.add_span(tid, "main", "step", self.o + step, self.o + self.now - 1, 1)
            if k % 7 == 6:
                label, start, _ = stack.pop()
                self.w.add_span(tid, "main", label, self.o + start, self.o + self.now, 0)
                self.now += 5
        # An IPU track whose spans arrive latest-first: its lane is not one piece after
        # another, so it is drawn from the joined trace.
        ipu = 40 * (POLLS - k)
        self.w.add_span("IPU 0", "ipu", "compute", self.o + ipu, self.o + ipu + 30)
        self.w.add_sample("Loss", "train", self.o + self.now, 1.0 / (k + 1))
        self.w.flush()


def _drawn(model: SystemTraceModel, x0: float, x1: float, width: int) -> dict:
    spans = model.spans(x0, x1, width)
    counts, first = model.instants(x0, x1, width)
    columns = (spans.lane, spans.start, spans.end, spans.key, spans.color.tolist())
    drawn = zip(*(c if isinstance(c, list) else c.tolist() for c in columns), strict=True)
    return {
        "lanes": model.lane_names(),
        "spans": [
            (*row[:4], tuple(row[4]), label) for row, label in zip(drawn, spans.labels, strict=True)
        ],
        "instants": (counts.tolist(), first.tolist()),
    }


def _windows(model: SystemTraceModel) -> list[tuple[float, float, int]]:
    lo, hi = model.time_limits()
    mid = (lo + hi) / 2
    return [(lo, hi, w) for w in WIDTHS] + [(mid - 300, mid + 200, 500), (hi - 700, hi + 10, 90)]


def _same_as(live: LiveTraceModel, whole: SystemTraceModel) -> None:
    assert live.n_events == len(whole.trace)
    assert live.time_limits() == whole.time_limits()
    assert live.open_spans() == whole.open_spans()
    for window in _windows(whole):
        assert _drawn(live, *window) == _drawn(whole, *window), window


def _record(tmp_path: Path) -> tuple[Path, list[LiveTraceModel], TraceTail]:
    writer = PvtiWriter(tmp_path, background=False)
    program = Program(writer)
    rng = np.random.default_rng(7)
    # As the recorder follows a file: merges beside the poller, pieces prepared to draw.
    tail = TraceTail(writer.path, background_merges=True, prepare=prepare_piece)
    models = []
    for k in range(POLLS):
        program.poll(k, rng)
        tail.poll()
        live = LiveTraceModel(tail.pieces_snapshot())
        if k % 9 == 4:  # now and then: the same as the trace it has read, sorted at once
            _same_as(live, SystemTraceModel(tail.snapshot()))
        models.append(live)
    program.open.clear()
    writer.open_spans_source = None
    writer.close()
    tail.poll()
    tail.pieces.finish()  # the last merge swapped in: the pieces as a poll would leave them
    models.append(LiveTraceModel(tail.pieces_snapshot()))
    return writer.path, models, tail


def test_the_live_view_after_n_polls_draws_what_the_finished_file_draws(tmp_path):
    path, models, tail = _record(tmp_path)
    live = models[-1]
    assert len(live.pieces) < POLLS // 4  # merged as it went, not one piece a poll
    before = models[-2]
    spans = before.spans(*before.time_limits(), 300, range(3))  # the threads' lanes only
    assert len(spans) and "trace" not in vars(before)  # drawn without joining the pieces
    whole = SystemTraceModel(open_trace(path))  # the normal reader, the file as it ended
    assert live.open_spans() == 0 and live.has_instants()
    _same_as(live, whole)
    # Its threads' lanes were drawn from the pieces; only the IPU track's (its spans came
    # out of order) needed the joined trace.
    chained = {row.name: isinstance(row.lane, ChainedLane) for row in live.rows if row.depth == 0}
    assert chained.pop("IPU 0") is False
    assert len(chained) == 3 and all(chained.values())
    # Metric series (the counters) as the file has them.
    t, loss = live.tables.series["Loss"]["train"]
    wt, wloss = whole.trace.series["Loss"]["train"]
    assert t.tolist() == wt.tolist() and loss.tolist() == wloss.tolist()
    assert np.allclose(loss, 1.0 / np.arange(1, POLLS + 1))
    # Clicking a drawn span asks the joined trace: the same event as the file's.
    lo, hi = whole.time_limits()
    key = next(k for k in live.spans(lo, hi, 5000).key.tolist() if k >= 0)
    assert live.details(key) == whole.details(key)
    tail.close()


def test_the_layout_choices_draw_as_the_finished_file_draws(tmp_path):
    path, models, tail = _record(tmp_path)
    live, whole = models[-1], SystemTraceModel(open_trace(path))
    for model in (live, whole):
        model.set_channels({model.tables.channels.index("main")})
    _same_as(live, whole)
    for model in (live, whole):
        model.set_pinned(2, True)
        model.set_collapsed(0, True)
    _same_as(live, whole)
    for model in (live, whole):
        model.set_collapsed(0, False)
        model.set_merge_all(True)
    _same_as(live, whole)
    # An earlier snapshot, still open spans and all, against the trace read up to then.
    middle = models[POLLS // 2 + 1]  # an epoch began in this poll
    assert middle.open_spans() > 0
    _same_as(middle, SystemTraceModel(middle.snapshot.whole()))
    tail.close()


def test_a_replaced_model_is_freed_at_once_with_what_it_shows(tmp_path):
    """The recorder makes a model a poll and drops the last one: a model (and the pieces
    only it shows) must go when nothing refers to it, not when Python's cyclic collector
    next runs -- rows whose lanes held their model kept every replaced snapshot's pieces,
    hundreds of MB of merged-away events in a ten-minute recording."""
    path, _models, tail = _record(tmp_path)
    layouts = (
        lambda m: None,
        lambda m: m.set_collapsed(0, True),  # a process's summary row
        lambda m: m.set_merge_all(True),  # merged rows
    )
    gc.collect()
    gc.disable()
    try:
        for layout in layouts:
            live = LiveTraceModel(tail.pieces_snapshot())
            whole = SystemTraceModel(open_trace(path))
            for model in (live, whole):
                layout(model)
                assert len(model.spans(*model.time_limits(), 300))  # every row's lane made
                assert all("lane" in vars(row) for row in model.rows)
            shown = [weakref.ref(x) for x in (live, whole, live.snapshot, whole.trace)]
            del live, whole, model
            assert [ref() for ref in shown] == [None] * 4
    finally:
        gc.enable()
    tail.close()
