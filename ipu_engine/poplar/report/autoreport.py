"""autoReport: where and when an engine writes ``profile.pop`` and ``debug.cbor``.

Each executable gets its own folder under ``autoReport.directory``, named after its
first program (``Sequence(name="training")`` -> ``training``, unnamed ones ``engine``). A
second executable of the same name in one process (a training and a last-batch recompile)
gets ``training_2``, then ``training_3``..., with a warning naming the folder, so it never
replaces the first one's report; a new run of the script starts again at ``training`` and
replaces its own earlier report. The graph profile and debug information are
written when the engine compiles; the execution profile is rewritten after each of the
first ``autoReport.executionProfileProgramRunCount`` runs of each program. A report
that cannot be written is a warning naming the folder and the reason: the program's
results never depend on it.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ipu_engine.poplar.options import EngineOptions
from profiler_core.errors import ReportError
from profiler_core.model.profile import DebugData, ProfileData

log = logging.getLogger("poplar")

PROFILE_FILE = "profile.pop"
DEBUG_FILE = "debug.cbor"
#: a graph's record for what-ifs: a callable giving (record, arrays), made only if wanted
GraphRecord = Callable[[], tuple[dict[str, Any], dict[str, np.ndarray]]]

# Folder names this process has given out, per resolved autoReport.directory.
_taken: dict[str, set[str]] = {}
_taken_lock = threading.Lock()


class ReportWriteWarning(UserWarning):
    """A report could not be written; the engine keeps running without it."""


def report_folder_name(program_name: str, directory: str | Path = ".") -> str:
    """The folder name of the next executable called ``program_name`` that reports into
    ``directory``: its safe name, or ``name_2``, ``name_3``... when this process has
    already given that name out there."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", program_name).strip("._") or "engine"
    with _taken_lock:
        taken = _taken.setdefault(os.path.abspath(directory), set())
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
    if n > 1:
        log.warning(
            "PO: this process already wrote a report for an executable named %r in %s; "
            "this one's report is in %s",
            base,
            directory,
            os.path.join(directory, name),
        )
    return name


class AutoReport:
    """The report folder of one engine, and writing into it."""

    def __init__(self, options: EngineOptions, program_name: str) -> None:
        self.options = options
        self.enabled = options.wants_report
        directory = options.report_directory
        # Only an engine that writes a report takes a name, so `name_2` means a second report.
        name = report_folder_name(program_name, directory) if self.enabled else "engine"
        self.folder = Path(directory) / name
        self.error: str | None = None
        if self.enabled:
            self._prepare()

    def _prepare(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            if not os.access(self.folder, os.W_OK):
                raise PermissionError(13, "Permission denied")
        except OSError as exc:
            self._fail(f"cannot create the report folder {self.folder}: {exc.strerror or exc}")

    def _fail(self, message: str) -> None:
        self.error = message
        self.enabled = False
        log.error("PO: %s; continuing without a report", message)
        warnings.warn(
            f"{message}; the engine runs without writing a report", ReportWriteWarning, stacklevel=4
        )

    @property
    def profile_path(self) -> Path:
        return self.folder / PROFILE_FILE

    @property
    def debug_path(self) -> Path:
        return self.folder / DEBUG_FILE

    def write(self, profile: ProfileData, debug: DebugData | None) -> None:
        if not self.enabled:
            return
        from profiler_core.formats.debug_cbor import write_debug
        from profiler_core.formats.profile_pop import write_profile

        try:
            write_profile(self.profile_path, profile)
            if debug is not None and self.options.output("DebugInfo"):
                write_debug(self.debug_path, debug)
        except ReportError as exc:
            self._fail(str(exc))
            return
        log.info("PO: wrote %s", self.profile_path)

    def write_graph_record(self, report_id: str, make: GraphRecord) -> None:
        """``serialized_graph.bundle`` (autoReport.outputSerializedGraph): the record of the
        graph and its programs a what-if re-plans. Failing to write it is a warning; the
        profile and the program are unaffected."""
        if not self.enabled or not self.options.output("SerializedGraph"):
            return
        from profiler_core.formats.serialized_graph import GRAPH_FILE, write_serialized_graph

        path = self.folder / GRAPH_FILE
        try:
            record, arrays = make()
            write_serialized_graph(path, report_id, record, arrays)
        except (ReportError, Exception) as exc:  # a record is never worth the user's run
            log.warning("PO: %s; the report has no serialized graph", exc)
            warnings.warn(str(exc), ReportWriteWarning, stacklevel=3)
            return
        if record.get("problems"):
            log.warning("PO: %s cannot be replayed by a what-if: %s", path, record["problems"][0])
        log.info("PO: wrote %s", path)
