"""The executable cache: a compiled executable is stored under a key of everything it was
compiled from, and loaded on the next run instead of compiled again.

The engine option ``executableCache.directory`` (or, for framework programs,
``Options.executable_cache_path`` / ``POPTORCH_CACHE_DIR``) names the folder. An entry,
``<key>.ipuexe``, is an array bundle (``profiler_core.formats.array_bundle``: checksum,
format version, no pickle) of the compile's derived facts (``cache_codec``). A damaged,
stale or unreadable entry is ignored with a warning and the program is compiled; a folder
that cannot be created or written is a warning too: the cache is never why a program fails.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from pathlib import Path

from ipu_engine.poplar.compiler.block_marks import BlockMarks
from ipu_engine.poplar.compiler.cache_codec import (
    CachedCompile,
    EntryError,
    decode_entry,
    encode_entry,
)
from ipu_engine.poplar.compiler.cache_key import engine_fingerprint, executable_key
from ipu_engine.poplar.compiler.executable import Executable, check_programs, lower_programs
from ipu_engine.poplar.compiler.known_facts import KnownFacts
from ipu_engine.poplar.cost_model.compile_model import CompileModel, build_compile_model
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.options import CACHE_OPTION, EngineOptions
from ipu_engine.poplar.program import Program
from profiler_core.errors import ReportError
from profiler_core.formats.array_bundle import read_bundle, write_bundle
from profiler_core.model.kinds import MemoryCategory

log = logging.getLogger("poplar")

OPTION = CACHE_OPTION
KIND = "ipu_engine executable"
FORMAT = (1, 0)
SUFFIX = ".ipuexe"
MAX_ENTRY_BYTES = 8 * 1024**3  # far above any honest entry; refuses a runaway file


class ExecutableCacheWarning(UserWarning):
    """The executable cache could not be used; the program is compiled and runs anyway."""


def _warn(message: str) -> None:
    log.warning("PO: %s", message)
    warnings.warn(message, ExecutableCacheWarning, stacklevel=5)


def compile_executable(
    graph: Graph, programs: Program | Sequence[Program], options: EngineOptions
) -> tuple[Executable, CompileModel]:
    """The executable and compile model of ``programs``: from the cache when the option
    names a folder holding a good entry for them, else compiled (and stored there)."""
    checked = check_programs(graph, programs)
    cache = ExecutableCache.open(options)

    def lower(known: KnownFacts | None = None) -> Executable:
        # lightweight profiling's marks add no step: an entry serves with them on or off
        return lower_programs(graph, checked, known, BlockMarks.from_options(options))

    if cache is None:
        exe = lower()
        return exe, build_compile_model(graph, exe, options.instrument)
    try:
        path = cache.entry_path(executable_key(graph, checked, options))
    except TypeError as exc:  # a program field the key cannot describe
        _warn(f"executable cache: not used for this program: {exc}; compiling without it")
        exe = lower()
        return exe, build_compile_model(graph, exe, options.instrument)
    entry = cache.load(path, graph)
    if entry is not None:
        exe = lower(entry.known)
        problem = _mismatch(graph, exe, entry)
        if problem is None:
            log.info("PO: executable cache: loaded %s", path)
            return exe, entry.model
        _warn(f"executable cache: ignored {path}: {problem}")
    exe = lower()
    model = build_compile_model(graph, exe, options.instrument)
    known = KnownFacts(dict(exe.lowering.cs_facts), list(exe.lowering.copy_plans))
    cache.store(path, CachedCompile(known, model))
    return exe, model


class ExecutableCache:
    """One cache folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def open(cls, options: EngineOptions) -> ExecutableCache | None:
        """The folder the options name, created if needed; None (with a warning when it
        was asked for but cannot be used) when there is no cache."""
        directory = options[OPTION]
        if directory is None:
            return None
        folder = Path(directory)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            _warn(
                f"executable cache: engine option {OPTION}={directory!r} cannot be used: "
                f"{exc.strerror or exc}; compiling without the cache (name a folder you "
                "can write)"
            )
            return None
        return cls(folder)

    def entry_path(self, key: str) -> Path:
        return self.folder / f"{key}{SUFFIX}"

    def load(self, path: Path, graph: Graph) -> CachedCompile | None:
        """The entry at ``path``, or None when there is none (a miss) or it is unusable
        (with a warning saying why)."""
        if not path.exists():
            return None
        try:
            bundle = read_bundle(path, KIND, FORMAT[0], MAX_ENTRY_BYTES)
            meta = bundle.meta if isinstance(bundle.meta, dict) else {}
            if meta.get("key") != path.name[: -len(SUFFIX)]:
                raise EntryError("it was stored for another program (its key differs)")
            if meta.get("engine") != engine_fingerprint():
                raise EntryError("it was made by another engine version")
            return decode_entry(meta.get("entry"), bundle.arrays, graph)
        except (ReportError, EntryError) as exc:
            reason = exc.problem if isinstance(exc, ReportError) else str(exc)
            _warn(f"executable cache: ignored {path}: {reason}")
            return None

    def store(self, path: Path, entry: CachedCompile) -> None:
        """Write ``entry`` atomically; a full or read-only folder is a warning."""
        meta, arrays = encode_entry(entry)
        document = {"key": path.name[: -len(SUFFIX)], "engine": engine_fingerprint()}
        try:
            write_bundle(path, KIND, FORMAT, {**document, "entry": meta}, arrays)
        except ReportError as exc:
            _warn(
                f"executable cache: cannot store {path}: {exc.problem}; the program runs "
                f"without it (engine option {OPTION} must name a writable folder with room)"
            )
            return
        log.info("PO: executable cache: compiled and stored %s", path)


def _mismatch(graph: Graph, exe: Executable, entry: CachedCompile) -> str | None:
    """Why the entry does not fit the program lowered with it, or None when it does."""
    model, low = entry.model, exe.lowering
    steps, tiles = len(exe.steps), graph.target.num_tiles
    checks = (
        (set(entry.known.cs_facts) == set(exe.plans), "its compute sets differ"),
        (len(entry.known.copy_plans) == len(low.copy_plans), "its copies differ"),
        (set(model.cs_cycles) == set(exe.plans), "its compute set cycles differ"),
        (model.step_cycles.shape == (steps, graph.target.num_ipus), "its step count differs"),
        (model.live_bytes.shape == (steps,), "its liveness has another step count"),
        (model.memory.by_category.shape == (len(MemoryCategory), tiles), "its tiles differ"),
        (model.var_bytes.shape == (len(graph.variables),), "its variables differ"),
        (model.liveness.first.shape == model.var_bytes.shape, "its liveness is damaged"),
    )
    return next((why for ok, why in checks if not ok), None)
