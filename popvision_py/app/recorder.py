"""Record: the System Trace page follows the child's .pvti while it runs. A worker thread
polls a ``TraceTail`` (one read transaction per poll), which keeps what it read as sorted
pieces, and lays the new snapshot out over those pieces (``LiveTraceModel``): a poll costs
its new events, not the recording so far. The window shows only the newest finished
snapshot, so it never waits on the child or the file.
Follow keeps the newest time in view; pausing it keeps the range the user looks at."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from popvision_py.viewmodels.live_trace import LiveTraceModel
from popvision_py.viewmodels.piece_facts import prepare_piece
from popvision_py.viewmodels.run_config import newest_trace
from popvision_py.viewmodels.trace_open import OpenedTrace
from profiler_core.trace.tail import TraceTail

if TYPE_CHECKING:
    from popvision_py.views.system_trace.view import SystemTraceView

POLL_S = 0.1
FOLLOW_WINDOW_NS = 10e9  # follow shows at most the newest 10 s


class LiveTrace(QObject):
    """Tails the newest .pvti under ``folder`` written since ``since``."""

    snapshot_ready = Signal()

    def __init__(self, view: SystemTraceView, folder: Path, since: float) -> None:
        super().__init__()
        self.view = view
        self.folder, self.since = folder, since
        self.follow = True
        self.ended = False  # the child has ended: what is shown is all it recorded
        self.path: Path | None = None
        self.latest: OpenedTrace | None = None  # newest snapshot not yet shown
        self.shown: OpenedTrace | None = None
        self.events_read = 0
        self.snapshots = 0
        self.poll_seconds: list[float] = []  # worker time per poll that found something
        self.poll_copied: list[int] = []  # per such poll: events its pieces copied (work)
        self.polled_at: list[float] = []  # per such poll: when it began (perf_counter)
        self.show_seconds: list[float] = []  # GUI time per snapshot shown
        self.chart_builds = 0  # snapshots that had to make their charts
        self.built: list[bool] = []  # per snapshot shown: whether it made its charts
        self.shown_at: list[tuple[float, int]] = []  # (time.time(), events) per show
        self._made = 0  # snapshots the worker made
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.snapshot_ready.connect(self._show_latest)
        self._thread = threading.Thread(target=self._run, name="pvti-tail", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        tail: TraceTail | None = None
        try:
            while True:
                stopping = self._stop.is_set()  # one last poll after the child ended
                if tail is None:
                    self.path = newest_trace(self.folder, self.since)
                    if self.path is not None:
                        tail = TraceTail(self.path, background_merges=True, prepare=prepare_piece)
                if tail is not None:
                    self._poll(tail)
                if stopping:
                    return
                self._stop.wait(POLL_S)
        finally:
            if tail is not None:
                tail.close()

    def _poll(self, tail: TraceTail) -> None:
        started = time.perf_counter()
        update = tail.poll()
        if not tail.started or (update.n_events == 0 and not update.series and self._made):
            return  # nothing new: the view keeps what it shows
        self._made += 1
        snapshot = tail.pieces_snapshot()
        if len(snapshot) == 0 and not update.series:
            self._made = 0  # nothing to draw yet: the page keeps its "waiting" message
            return
        opened = OpenedTrace([tail.path], LiveTraceModel(snapshot), files=[tail.path])
        self.poll_seconds.append(time.perf_counter() - started)
        self.poll_copied.append(tail.pieces.last_copied)
        self.polled_at.append(started)
        with self._lock:
            self.latest = opened
            self.events_read = len(snapshot)
        self.snapshot_ready.emit()  # queued to the window's thread

    def _show_latest(self) -> None:
        with self._lock:
            opened, self.latest = self.latest, None
        if opened is None:
            return  # a newer signal already showed it
        started = time.perf_counter()
        view = self.view
        keep = view.timeline.x_range if (self.shown is not None and not self.follow) else None
        charts = view.instants
        view.update_trace(opened)
        if view.instants is not charts:
            self.chart_builds += 1  # new graphs or heatmaps appeared: their plots were made
        self.shown = opened
        if keep is not None:
            view.timeline.set_x_range(*keep)
        elif self.follow:
            self.show_newest()
        self._say(opened)
        self.show_seconds.append(time.perf_counter() - started)
        self.built.append(view.instants is not charts)
        self.snapshots += 1
        self.shown_at.append((time.time(), opened.model.n_events))

    def _say(self, opened: OpenedTrace) -> None:
        """The banner: recording live, or (once the run has ended) recorded."""
        open_spans = opened.model.open_spans()
        n = opened.model.n_events
        if self.ended:
            text = f"Recorded {opened.name}: {n:,} events; the run has ended" + (
                f"; {open_spans:,} span(s) were still open at its last commit." if open_spans
                else ".")  # fmt: skip
        else:
            text = f"Recording {opened.name} live: {n:,} events so far" + (
                f"; {open_spans:,} span(s) still open end at the newest commit." if open_spans
                else ".")  # fmt: skip
        self.view.banner.setText(text)
        self.view.banner.setVisible(True)

    def show_newest(self) -> None:
        """Put the newest time at the right edge (at most FOLLOW_WINDOW_NS shown)."""
        if self.shown is None:
            return
        lo, hi = self.shown.model.time_limits()
        self.view.timeline.set_x_range(max(lo, hi - FOLLOW_WINDOW_NS), hi + (hi - lo) * 0.02 + 1)

    def set_follow(self, on: bool) -> None:
        self.follow = on
        if on:
            self.show_newest()

    def stop(self, timeout: float = 5.0) -> None:
        """The child ended: read what it committed last, then stop the worker; the banner
        says the recording is over (it said "live" until the file was opened again)."""
        self.ended = True
        self._stop.set()
        self._thread.join(timeout)
        self._show_latest()
        if self.shown is not None and self.view.trace is self.shown:
            self._say(self.shown)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()
