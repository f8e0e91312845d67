"""``sweep.json``: what a sweep ran -- each run's values, command, exit code, wall time,
report folders and the worker's host -- written whole after every finished run, so an
interrupted sweep keeps what finished and the same command run again skips it.

A run is *finished* when its command ended by itself (status ``ok``, ``failed`` or
``timeout``); a run stopped by an interrupt, or lost with its worker, is not recorded and
runs again next time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiler_core.errors import ReportError
from profiler_core.formats.atomic import atomic_write
from profiler_core.runs.errors import SweepError

SWEEP_FILE = "sweep.json"
FORMAT = "popvision-sweep"
VERSION = 1
FINISHED = ("ok", "failed", "timeout")


@dataclass
class SweepRecord:
    """The runs of one ``--out`` folder by name, in the order they were planned."""

    folder: Path
    shape: dict[str, Any]
    parameters: dict[str, list[str]]
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    cluster: str = ""

    @property
    def path(self) -> Path:
        return self.folder / SWEEP_FILE

    def finished(self, name: str, key: str, retry_failed: bool = False) -> bool:
        """Whether the run ``name`` with identity ``key`` need not run again."""
        row = self.runs.get(name)
        if row is None or row.get("key") != key or row.get("status") not in FINISHED:
            return False
        return not (retry_failed and row["status"] != "ok")

    def add(self, row: dict[str, Any]) -> None:
        self.runs[row["name"]] = row

    def save(self) -> None:
        document = {
            "format": FORMAT,
            "version": VERSION,
            "shape": self.shape,
            "parameters": self.parameters,
            "cluster": self.cluster,
            "runs": list(self.runs.values()),
        }
        text = json.dumps(document, indent=1, ensure_ascii=False).encode("utf-8")
        atomic_write(self.path, lambda f: f.write(text))


def start_record(
    folder: Path, shape: dict[str, Any], parameters: dict[str, list[str]]
) -> SweepRecord:
    """The record of ``folder``: the one there (refused when it is a sweep of another
    command), else a new one. Parameters gain the values of this command's sets."""
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / SWEEP_FILE).exists():
        if any(p.name == "profile.pop" for p in folder.iterdir()):
            raise SweepError("is a report folder; give the sweep a folder of its own", folder)
        return SweepRecord(folder, shape, parameters)
    old = read_record(folder)
    if old.shape != shape:
        raise SweepError(
            f"holds a sweep of another command ({' '.join(old.shape.get('command', []))}); "
            "run that command to resume it, or give another --out",
            folder,
        )
    for name, values in parameters.items():
        known = old.parameters.setdefault(name, [])
        known += [v for v in values if v not in known]
    return old


def read_record(folder: Path) -> SweepRecord:
    """The sweep recorded in ``folder`` (its ``sweep.json``)."""
    path = folder / SWEEP_FILE
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ReportError(path, f"cannot be read: {error.strerror or error}") from None
    except ValueError as error:
        raise ReportError(path, f"is not JSON ({error})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ReportError(path, f"is not a popvision sweep record (no format {FORMAT!r})")
    if document.get("version") != VERSION:
        raise ReportError(path, f"sweep record version {document.get('version')!r} is unknown")
    runs = document.get("runs")
    if not isinstance(runs, list) or not all(
        isinstance(r, dict) and isinstance(r.get("name"), str) for r in runs
    ):
        raise ReportError(path, "its 'runs' are not a list of named runs")
    parameters = document.get("parameters") or {}
    return SweepRecord(
        folder,
        document.get("shape") or {},
        {str(k): [str(v) for v in vs] for k, vs in parameters.items()},
        {r["name"]: r for r in runs},
        str(document.get("cluster", "")),
    )


def is_sweep_folder(path: Path) -> bool:
    return (path / SWEEP_FILE).is_file()
