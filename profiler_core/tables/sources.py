"""Which reports the tables are over: the folders given, each a report, a sweep (its
``sweep.json`` names each run's reports and values) or any folder holding reports below it.

Each report gets its name (the ``report`` column: its path below the folder given), and in a
sweep its run and the run's values; a sweep run that wrote no report is a source without a
path, so its row says why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from profiler_core.errors import ReportError
from profiler_core.runs.record import SWEEP_FILE, read_record
from profiler_core.tables.names import natural_key

PROFILE_FILE = "profile.pop"
_INT = re.compile(r"^[+-]?\d+$")


@dataclass(frozen=True)
class ReportSource:
    name: str  # the ``report`` column
    path: Path | None  # the report folder; None for a sweep run that wrote none
    sweep_run: str | None = None
    values: dict[str, str] = field(default_factory=dict)
    run_error: str = ""  # the sweep run's error ("" when it ended well)


@dataclass(frozen=True)
class Sources:
    reports: list[ReportSource]
    parameters: list[str]  # sweep parameters, in the order the sweeps name them
    sweeps: bool  # whether any folder given is a sweep

    def parameter_types(self) -> dict[str, str]:
        """Each parameter's column type: "int" when every value is an integer, "float"
        when every value is a number, else "string"."""
        types = {}
        for name in self.parameters:
            values = [s.values[name] for s in self.reports if name in s.values]
            if values and all(_INT.match(v) for v in values):
                types[name] = "int"
            elif values and all(_is_float(v) for v in values):
                types[name] = "float"
            else:
                types[name] = "string"
        return types


def find_sources(paths: Sequence[str | Path]) -> Sources:
    """The reports in ``paths``; a path that holds none is a ``ReportError``."""
    found: list[ReportSource] = []
    parameters: list[str] = []
    sweeps = False
    many = len(paths) > 1
    for given in paths:
        root = Path(given)
        prefix = f"{root.name}/" if many else ""
        if root.is_file() and root.name == PROFILE_FILE:
            root = root.parent
        if not root.exists():
            raise ReportError(root, "no such file or folder")
        if (root / SWEEP_FILE).is_file():
            sweeps = True
            record = read_record(root)
            parameters += [p for p in record.parameters if p not in parameters]
            found += _sweep_sources(root, record, prefix)
        elif (root / PROFILE_FILE).exists():
            found.append(ReportSource(root.name, root))
        elif root.is_dir():
            folders = sorted(
                (p.parent for p in root.rglob(PROFILE_FILE)),
                key=lambda p: natural_key(p.relative_to(root).as_posix()),
            )
            if not folders:
                raise ReportError(root, f"holds no report (no {PROFILE_FILE} in or below it)")
            found += [ReportSource(prefix + f.relative_to(root).as_posix(), f) for f in folders]
        else:
            raise ReportError(root, f"is neither a report folder nor its {PROFILE_FILE}")
    return Sources(_unique(found), parameters, sweeps)


def is_folder_of_reports(path: Path) -> bool:
    """A folder that is no report itself but a sweep or holds reports below it (the window
    opens it as runs). Stops at the first report found."""
    if not path.is_dir() or (path / PROFILE_FILE).exists():
        return False
    if (path / SWEEP_FILE).is_file():
        return True
    try:
        return next(path.rglob(PROFILE_FILE), None) is not None
    except OSError:  # an unreadable folder: the report loader says why
        return False


def _sweep_sources(root: Path, record: object, prefix: str) -> list[ReportSource]:
    sources = []
    for run in record.runs.values():  # type: ignore[attr-defined]
        name = str(run["name"])
        values = {str(k): str(v) for k, v in (run.get("values") or {}).items()}
        error = str(run.get("error") or "")
        if run.get("status") != "ok" and not error:
            error = f"the run ended with status {run.get('status')}"
        reports = [str(r) for r in run.get("reports") or []]
        folder = root / name  # the record's own folder, wherever the sweep was moved
        for report in reports:
            sources.append(
                ReportSource(f"{prefix}{name}/{report}", folder / report, name, values, error)
            )
        if not reports:
            sources.append(ReportSource(f"{prefix}{name}", None, name, values, error))
    return sources


def _unique(sources: list[ReportSource]) -> list[ReportSource]:
    """Sources named alike (two folders given with the same name) told apart by a number."""
    seen: dict[str, int] = {}
    unique = []
    for source in sources:
        count = seen.get(source.name, 0)
        seen[source.name] = count + 1
        if count:
            source = ReportSource(
                f"{source.name} ({count + 1})",
                source.path,
                source.sweep_run,
                source.values,
                source.run_error,
            )
        unique.append(source)
    return unique


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
