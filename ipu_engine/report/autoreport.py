"""autoReport: where and when an engine writes ``profile.pop`` and ``debug.cbor``.

Each executable gets its own folder under ``autoReport.directory``, named after its
first program (``Sequence(name="training")`` -> ``training``) or ``engine``, ``engine_1``
... for unnamed ones in one process. The graph profile and debug information are
written when the engine compiles; the execution profile is rewritten after each of the
first ``autoReport.executionProfileProgramRunCount`` runs of each program. A report
that cannot be written is a warning naming the folder and the reason: the program's
results never depend on it.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import warnings
from pathlib import Path

from ipu_engine.options import EngineOptions
from profiler_core.errors import ReportError
from profiler_core.model.profile import DebugData, ProfileData

log = logging.getLogger("poplar")

PROFILE_FILE = "profile.pop"
DEBUG_FILE = "debug.cbor"

_unnamed = itertools.count()


class ReportWriteWarning(UserWarning):
    """A report could not be written; the engine keeps running without it."""


def report_folder_name(program_name: str) -> str:
    if program_name:
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", program_name).strip("._") or "engine"
        return safe
    n = next(_unnamed)
    return "engine" if n == 0 else f"engine_{n}"


class AutoReport:
    """The report folder of one engine, and writing into it."""

    def __init__(self, options: EngineOptions, program_name: str) -> None:
        self.options = options
        self.enabled = options.wants_report
        self.folder = Path(options.report_directory) / report_folder_name(program_name)
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
