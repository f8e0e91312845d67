"""What a run from the toolbar is (script, arguments, folder, interpreter, autoReport and PVTI
switches), the child's environment with the switches merged over the user's own
POPLAR_ENGINE_OPTIONS / PVTI_OPTIONS, the checks made before it starts, and recent runs.
Qt-free: the app's runner turns a ``RunConfig`` into a QProcess."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from profiler_core.formats.recognise import FileKind, recognise

#: trace files a recording follows live (SQLite, read while written) / a run may leave
TAILED = frozenset((FileKind.PVTI,))
TRACE_FILES = frozenset((FileKind.PVTI, FileKind.CHROME_JSON))

ENGINE_VAR = "POPLAR_ENGINE_OPTIONS"
PVTI_VAR = "PVTI_OPTIONS"
MAX_RECENT_RUNS = 10


class OptionsError(ValueError):
    """The user's own POPLAR_ENGINE_OPTIONS / PVTI_OPTIONS is not a JSON object."""


@dataclass
class RunConfig:
    """One run: ``interpreter script args…`` in ``folder`` with the switches' options."""

    script: str
    args: list[str] = field(default_factory=list)
    folder: str = ""  # working folder; "" = the script's folder
    interpreter: str = ""  # "" = the Python running the app
    auto_report: bool = True
    report_dir: str = ""  # where autoReport writes (and PVTI, when on)
    pvti: bool = False
    pvti_channels: list[str] = field(default_factory=list)  # [] = every channel

    @property
    def working_folder(self) -> Path:
        return Path(self.folder) if self.folder else Path(self.script).resolve().parent

    def program(self, default_interpreter: str) -> tuple[str, list[str]]:
        """The program and its argument list (never a shell command line). An ONNX model
        runs through ``python -m ipu_engine.onnx MODEL.onnx args…``."""
        program = self.interpreter or default_interpreter
        if Path(self.script).suffix.lower() == ".onnx":
            return program, ["-m", "ipu_engine.onnx", self.script, *self.args]
        return program, [self.script, *self.args]

    def command_line(self, default_interpreter: str) -> str:
        """The run as a shell would quote it, for Recent and the console's first line."""
        program, args = self.program(default_interpreter)
        return shlex.join([program, *args])

    def engine_options(self) -> dict[str, str]:
        if not self.auto_report:
            return {}
        return {"autoReport.all": "true", "autoReport.directory": self.report_dir}

    def pvti_options(self) -> dict[str, object]:
        if not self.pvti:
            return {}
        options: dict[str, object] = {"enable": "true", "directory": self.report_dir}
        if self.pvti_channels:
            options["channels"] = list(self.pvti_channels)
        return options

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` with the switches' options merged over the user's own values there.

        Raises OptionsError when the user's value is not a JSON object (merging would
        silently drop it)."""
        env = dict(base)
        for var, ours in ((ENGINE_VAR, self.engine_options()), (PVTI_VAR, self.pvti_options())):
            if ours:
                env[var] = merge_options(env.get(var, ""), ours, var)
        return env

    def problem(self, default_interpreter: str) -> str:
        """Why this run cannot start ("" when it can): checked before a process is made."""
        script = Path(self.script)
        if not self.script.strip():
            return "Pick a Python script to run."
        if not script.exists():
            return f"The script {script} does not exist."
        if script.is_dir():
            return f"{script} is a folder, not a Python script."
        if script.suffix.lower() not in (".py", ".pyw", ".onnx"):
            return f"{script.name} is not a Python script or an ONNX model (.py or .onnx)."
        if self.folder and not Path(self.folder).is_dir():
            return f"The working folder {self.folder} does not exist."
        program = self.interpreter or default_interpreter
        if shutil.which(program) is None and not (
            Path(program).is_file() and os.access(program, os.X_OK)
        ):
            return f"The interpreter {program} cannot be found or is not executable."
        if (self.auto_report or self.pvti) and not self.report_dir:
            return "Pick a folder for the reports and traces."
        return ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RunConfig | None:
        """A config saved by ``to_json``; None if ``text`` is not one."""
        try:
            raw = json.loads(text)
            config = cls(**raw)
        except (ValueError, TypeError):
            return None
        if not isinstance(config.script, str) or not isinstance(config.args, list):
            return None
        return config


def merge_options(user: str, ours: dict[str, object], var: str = "options") -> str:
    """JSON ``ours`` merged over the user's JSON object ``user`` (keys of ours win; the
    user's other keys are kept)."""
    merged: dict[str, object] = {}
    if user.strip():
        try:
            value = json.loads(user)
        except ValueError as error:
            raise OptionsError(f"Your {var} is not valid JSON ({error}): {user!r}") from None
        if not isinstance(value, dict):
            raise OptionsError(f"Your {var} must be a JSON object, not {user!r}")
        merged.update(value)
    merged.update(ours)
    return json.dumps(merged)


def split_arguments(text: str) -> list[str]:
    """The arguments typed in the dialog, split as a shell would (quotes kept together);
    ValueError for an unclosed quote."""
    return shlex.split(text)


def add_recent_run(recent: list[RunConfig], config: RunConfig) -> list[RunConfig]:
    """``config`` first, the same run (script, arguments, folder, interpreter) not twice."""

    def key(c: RunConfig) -> tuple:
        return (c.script, tuple(c.args), c.folder, c.interpreter)

    return [config, *[c for c in recent if key(c) != key(config)]][:MAX_RECENT_RUNS]


def report_folders(root: str | Path) -> list[Path]:
    """The report folders a run wrote under ``root`` (each holds a profile.pop)."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = {p.parent for p in root.glob("profile.pop")} | {
        p.parent for p in root.glob("*/profile.pop")
    }
    return sorted(found)


def newest_trace(
    root: str | Path, since: float = 0.0, kinds: frozenset[FileKind] = TAILED
) -> Path | None:
    """The newest trace file written in ``root`` at or after ``since`` (a time.time()), of
    ``kinds`` by its content (``formats.recognise``): a .pvti to follow live by default;
    any trace file (``TRACE_FILES``: a .pvti, Chrome JSON plain or gzip -- a PyTorch
    profiler's, say) for what a finished run wrote."""
    root = Path(root)
    try:
        written = [
            (p.stat().st_mtime, p) for p in root.iterdir() if p.stat().st_mtime >= since - 1.0
        ]
    except OSError:  # no folder (yet), or a file gone while looking
        return None
    for _, path in sorted(written, reverse=True):
        if recognise(path).kind in kinds:
            return path
    return None
