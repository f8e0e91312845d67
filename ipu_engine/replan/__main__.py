"""``python -m ipu_engine.replan``: predictions for a report's serialized graph, asked on
standard input and answered on standard output, one JSON object a line, so the asker (a
profiler_core what-if, in its own process) can show progress and never imports the engine.

Request (one JSON object)::

    {"graph": "report/serialized_graph.bundle", "reportId": "...", "runs": [0],
     "baseline": false, "requests": [{"id": "s1", "change": {"operation": "m4",
     "option": "availableMemoryProportion", "value": 0.3}}, ...]}

Answers: ``{"event": "progress", "done": 1, "total": 5, "what": "..."}`` before each
prediction, ``{"event": "result", "id": "s1", "change": {...}, "predicted": {...},
"error": null, "seconds": 0.5, "split": {"replay": 0.2, "compile": 0.3}}`` after it
(``split``: where its seconds went -- the graph built again, then compiled; ``predicted``
null and ``error`` the reason when the change cannot be planned;
``{"same_as_recorded": true}`` when a proportion leaves every plan as recorded, so the
report's own figures stand), and ``{"event": "done"}``. A
request that cannot be read, or a graph file that is damaged, of another version or of
another report, is one ``{"event": "error", "message": ...}`` and exit status 2.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from ipu_engine.common.errors import EngineError
from ipu_engine.replan import Change, ReplanError, plan_fingerprint, replay
from ipu_engine.replan.changes import AMP
from ipu_engine.replan.figures import compile_figures
from profiler_core.errors import ReportError
from profiler_core.formats.serialized_graph import read_serialized_graph

MAX_REQUEST_BYTES = 16 * 1024 * 1024


def _say(out: TextIO, **event: Any) -> None:
    out.write(json.dumps(event) + "\n")
    out.flush()


def _request(text: str) -> dict[str, Any]:
    try:
        request = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        raise ReplanError(f"the request is not JSON: {error}") from None
    ok = isinstance(request, dict) and isinstance(request.get("graph"), str)
    if not ok or not isinstance(request.get("requests", []), list):
        raise ReplanError("the request must name a graph and hold a list of requests")
    runs = request.get("runs", [])
    if not isinstance(runs, list) or not all(isinstance(r, int) and r >= 0 for r in runs):
        raise ReplanError("runs must be a list of program indices")
    return request


class _Plans:
    """Predictions of one record; a proportion whose graph has the plans of one already
    compiled (or of the record itself: ``same_as_recorded``) is not compiled again."""

    def __init__(self, record: dict[str, Any], arrays: dict[str, Any], runs: list[int]) -> None:
        self.record, self.arrays, self.runs = record, arrays, runs
        self.known: dict[tuple, dict[str, Any]] = {}
        self.recorded: tuple | None = None
        self.split: dict[str, float] = {}  # the last prediction's seconds, by phase

    def _timed(self, phase: str, work: Any, *args: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return work(*args)
        finally:
            self.split[phase] = self.split.get(phase, 0.0) + time.perf_counter() - t0

    def predict(self, change: Change | None) -> dict[str, Any]:
        self.split = {}
        replayed = self._timed("replay", replay, self.record, self.arrays, change)
        if change is None or change.option != AMP:
            return self._timed("compile", compile_figures, replayed, self.runs).to_dict()
        plans = plan_fingerprint(replayed)
        if self.recorded is None:
            recorded = self._timed("replay", replay, self.record, self.arrays, None)
            self.recorded = plan_fingerprint(recorded)
        if plans == self.recorded:
            return {"same_as_recorded": True}
        if plans not in self.known:
            figures = self._timed("compile", compile_figures, replayed, self.runs)
            self.known[plans] = figures.to_dict()
        return self.known[plans]


def serve(stdin: TextIO, stdout: TextIO) -> int:
    """Answer one request (see the module); the exit status."""
    try:
        request = _request(stdin.read(MAX_REQUEST_BYTES))
        graph = read_serialized_graph(request["graph"], request.get("reportId"))
    except (ReplanError, ReportError) as error:
        _say(stdout, event="error", message=str(error))
        return 2
    items = list(request.get("requests", []))
    if request.get("baseline"):
        items.insert(0, {"id": "baseline", "change": None})
    runs = request.get("runs", [])
    plans = _Plans(graph.record, graph.arrays, runs)
    for done, item in enumerate(items):
        ident = str(item.get("id", done)) if isinstance(item, dict) else str(done)
        raw = item.get("change") if isinstance(item, dict) else item
        t0 = time.perf_counter()
        predicted, error, change = None, None, None
        try:
            change = None if raw is None else Change.from_dict(raw)
            what = "the program as recorded" if change is None else change.describe()
            _say(stdout, event="progress", done=done, total=len(items), what=what)
            predicted = plans.predict(change)
        except (ReplanError, EngineError) as exc:
            error = str(exc)
        except Exception as exc:
            error = f"the engine failed on this change ({type(exc).__name__}: {exc})"
        _say(
            stdout,
            event="result",
            id=ident,
            change=raw,
            predicted=predicted,
            error=error,
            seconds=round(time.perf_counter() - t0, 3),
            split={k: round(v, 3) for k, v in plans.split.items()},
        )
    _say(stdout, event="done")
    return 0


if __name__ == "__main__":
    sys.exit(serve(sys.stdin, sys.stdout))
