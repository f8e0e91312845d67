"""Asking the engine for predictions without importing it: ``python -m ipu_engine.replan``
as a child process, a JSON request on its standard input, one JSON event a line on its
standard output (see that module). Progress is reported as events arrive; ``cancel``
stops the child (only the process this module started)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiler_core.errors import ReportError

MODULE = "ipu_engine.replan"
MAX_LINE = 1 << 20


@dataclass(frozen=True)
class ChildResult:
    """One prediction as the child answered it: the figures, or why there are none."""

    id: str
    predicted: dict[str, Any] | None
    error: str | None
    seconds: float
    split: dict[str, float] = field(default_factory=dict)  # the seconds by phase


Progress = Callable[[int, int, str], None]


def _command(python: str | None) -> list[str]:
    return [python or sys.executable, "-m", MODULE]


def ask_engine(
    graph: Path,
    report_id: str,
    runs: list[int],
    requests: list[dict[str, Any]],
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
    python: str | None = None,
) -> dict[str, ChildResult]:
    """The child's answer to each request (by id). A child that cannot start, or that
    refuses the graph file, is a ``ReportError`` naming the file and the reason."""
    request = {"graph": str(graph), "reportId": report_id, "runs": runs, "requests": requests}
    errors = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - read after the child ends
    try:
        child = subprocess.Popen(
            _command(python),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,  # a file, not a pipe: warnings never block the child
            text=True,
            env=dict(os.environ),
        )
    except OSError as error:
        errors.close()
        raise ReportError(graph, f"the engine could not be started to re-plan: {error}") from None
    results: dict[str, ChildResult] = {}
    failure = ""
    try:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(json.dumps(request))
        child.stdin.close()
        for line in child.stdout:
            if cancel is not None and cancel():
                child.kill()
                raise ReportError(graph, "the what-if was cancelled")
            event = _event(line)
            kind = event.get("event")
            if kind == "progress" and progress is not None:
                progress(
                    int(event.get("done", 0)),
                    int(event.get("total", 0)),
                    str(event.get("what", "")),
                )
            elif kind == "result":
                ident = str(event.get("id"))
                results[ident] = ChildResult(
                    ident,
                    event.get("predicted") if isinstance(event.get("predicted"), dict) else None,
                    None if event.get("error") is None else str(event.get("error")),
                    float(event.get("seconds", 0.0)),
                    _split(event.get("split")),
                )
            elif kind == "error":
                failure = str(event.get("message", "the engine refused the request"))
    finally:
        if child.poll() is None:
            child.wait()
    errors.seek(0)
    stderr = errors.read()
    errors.close()
    if failure:
        raise ReportError(graph, failure.removeprefix(f"{graph}: "))
    if child.returncode != 0:
        last = stderr.strip().splitlines()[-1:] or ["no message"]
        raise ReportError(graph, f"the engine's re-planning stopped ({last[0]})")
    return results


def _split(raw: Any) -> dict[str, float]:
    if not isinstance(raw, dict):
        return {}
    return {str(k): float(v) for k, v in raw.items() if isinstance(v, int | float)}


def _event(line: str) -> dict[str, Any]:
    if len(line) > MAX_LINE:
        return {}
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        return {}  # something the engine printed that is not an event
    return event if isinstance(event, dict) else {}
