"""A sweep's plan: the command with its sets, expanded into runs, each with its values, the
exact command it runs, its engine options and its folder under ``--out``.

The command is what a user would type: a program found on PATH, a ``.py`` script (run with
this Python), or an ``.onnx`` model (run by ``python -m ipu_engine.onnx`` with the ONNX
session's options: ``--ipus``, ``--dtype``, ``--available-memory-proportion``, also written
``ipus=...``). Every run writes its report with autoReport into its own folder; and, unless
the command says otherwise, with ``debug.allowOutOfMemory`` on, so a configuration that
does not fit still leaves a report saying by how much.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from profiler_core.runs.errors import SweepError
from profiler_core.runs.sets import (
    MAX_RUNS,
    Parameter,
    SetParser,
    Template,
    argument_name,
    check_count,
    combinations,
)

#: what every run gets unless ``--engine-option`` sets it
DEFAULT_ENGINE_OPTIONS = {"autoReport.all": "true", "debug.allowOutOfMemory": "true"}
ONNX_SESSION_OPTIONS = ("ipus", "dtype", "available_memory_proportion")
_UNSAFE = re.compile(r"[^\w.=,+-]")
_MAX_NAME = 120


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: plain values only, so it travels to any Dask worker as it is."""

    name: str  # its folder under --out
    values: dict[str, str]  # parameter -> value
    argv: list[str]  # what runs
    engine_options: dict[str, str]  # POPLAR_ENGINE_OPTIONS, autoReport.directory included
    folder: str  # absolute path of the run's folder
    cwd: str  # where it runs (where the sweep was started)
    key: str  # the run's identity: a digest of argv and engine options (resuming)

    def to_dict(self) -> dict:
        return dict(vars(self))


@dataclass(frozen=True)
class SweepPlan:
    command: tuple[str, ...]  # as given
    engine_options: tuple[str, ...]  # the --engine-option texts, as given
    parameters: tuple[Parameter, ...]
    runs: tuple[RunSpec, ...]
    #: what must match for ``--out`` to be resumed: the command with each set as its
    #: parameter's name in braces, whatever its values
    shape: dict


def make_plan(
    command: Sequence[str],
    engine_options: Sequence[str],
    out: Path,
    max_runs: int = MAX_RUNS,
    cwd: Path | None = None,
) -> SweepPlan:
    """Expand ``command`` and the ``KEY=VALUE`` ``engine_options`` into runs; refuses an
    unknown program, a bad option or more than ``max_runs`` runs before anything runs."""
    if not command:
        raise SweepError("no COMMAND after --: give the program to run, e.g. -- script.py {1,2}")
    cwd = (cwd or Path.cwd()).resolve()
    out = out.resolve()
    args = _onnx_session_flags(list(command))
    parser = SetParser()
    arg_templates = [parser.template(a, argument_name(args, i)) for i, a in enumerate(args)]
    option_templates = [_option_template(parser, text) for text in engine_options]
    check_count(parser.parameters, max_runs)
    runs = []
    names: set[str] = set()
    for values in combinations(parser.parameters):
        argv = [t.fill(values) for t in arg_templates]
        options = dict(DEFAULT_ENGINE_OPTIONS)
        options.update({key: t.fill(values) for key, t in option_templates})
        named = {p.name: v for p, v in zip(parser.parameters, values, strict=True)}
        runs.append(_run(argv, options, named, out, cwd, names))
    names = [p.name for p in parser.parameters]
    shape = {
        "command": [_shape(t, names) for t in arg_templates],
        "engine_options": [f"{k}={_shape(t, names)}" for k, t in option_templates],
    }
    return SweepPlan(
        tuple(command), tuple(engine_options), tuple(parser.parameters), tuple(runs), shape
    )


def resolve_program(argv: list[str], cwd: Path) -> list[str]:
    """The command as it is started: ``.py`` and ``.onnx`` through this Python, anything
    else found on PATH (or given as a path). A program that is not there is refused."""
    program = argv[0]
    path = Path(program) if Path(program).is_absolute() else cwd / program
    if program.endswith((".py", ".onnx")):
        if not path.is_file():
            raise SweepError(f"COMMAND not found: {program} (no such file in {cwd})")
        if program.endswith(".py"):
            return [sys.executable, program, *argv[1:]]
        return [sys.executable, "-m", "ipu_engine.onnx", program, *argv[1:]]
    if os.sep in program:
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise SweepError(f"COMMAND not found: {program} (not an executable file)")
        return argv
    if shutil.which(program) is None:
        raise SweepError(
            f"COMMAND not found: {program} is not on PATH (a script: give its .py path)"
        )
    return argv


def _run(
    argv: list[str],
    options: dict[str, str],
    values: dict[str, str],
    out: Path,
    cwd: Path,
    taken: set[str],
) -> RunSpec:
    resolved = resolve_program(argv, cwd)
    key = hashlib.sha256(json.dumps([argv, options], sort_keys=True).encode()).hexdigest()[:16]
    name = _UNSAFE.sub("_", ",".join(f"{k}={v}" for k, v in values.items())) or "run"
    if len(name) > _MAX_NAME or name in taken or name.startswith("."):
        name = f"run-{key}"
    taken.add(name)
    folder = out / name
    options = {**options, "autoReport.directory": str(folder)}
    return RunSpec(name, values, resolved, options, str(folder), str(cwd), key)


def _option_template(parser: SetParser, text: str) -> tuple[str, Template]:
    key, sep, value = text.partition("=")
    if not sep or not key or "{" in key:
        raise SweepError(f"--engine-option {text!r}: give KEY=VALUE or KEY={{v1,v2}}")
    return key, parser.template(value, key)


def _onnx_session_flags(args: list[str]) -> list[str]:
    """An ``.onnx`` model's ``ipus=2`` / ``dtype=...`` / ``available_memory_proportion=...``
    as the flags ``python -m ipu_engine.onnx`` takes."""
    if not args[0].endswith(".onnx"):
        return args
    out = [args[0]]
    for arg in args[1:]:
        key, sep, value = arg.partition("=")
        if sep and key in ONNX_SESSION_OPTIONS:
            out += [f"--{key.replace('_', '-')}", value]
        else:
            out.append(arg)
    return out


def _shape(template: Template, names: list[str]) -> str:
    return template.text.format(*(f"{{{names[p]}}}" for p in template.parameters))
