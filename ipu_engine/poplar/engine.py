"""The Engine: compiles a graph's programs, loads them on a device and runs them.

As Poplar's ``poplar::Engine``: ``Engine(graph, programs, options)``, ``load(device)``,
``run(index)``, ``write_tensor``/``read_tensor`` through host handles and
``connect_stream`` for FIFOs. A failed run restores every tensor and stream position.
"""

from __future__ import annotations

import logging
import time
from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any

import numpy as np

from ipu_engine import pvti
from ipu_engine.common.arguments import (
    host_values,
    instance_arg,
    integer_arg,
    kind_error,
    mapping_arg,
    name_arg,
)
from ipu_engine.common.errors import (
    ArgumentError,
    EngineError,
    ExecutionError,
    HandleError,
    OutOfMemoryError,
    StreamError,
)
from ipu_engine.common.log import configure_logging
from ipu_engine.poplar.access import Access, Memory, RunsAccess, tensor_access
from ipu_engine.poplar.compiler.executable import Executable
from ipu_engine.poplar.compiler.executable_cache import compile_executable
from ipu_engine.poplar.cost_model.compile_model import CompileModel, check_memory
from ipu_engine.poplar.executor import RunContext
from ipu_engine.poplar.graph import Graph, graph_arg
from ipu_engine.poplar.host_streams import CallbackStream, CircularBuffer
from ipu_engine.poplar.journal_codec import journal_record
from ipu_engine.poplar.options import EngineOptions, parse_options
from ipu_engine.poplar.out_array import check_out
from ipu_engine.poplar.program import Program
from ipu_engine.poplar.report.autoreport import AutoReport, GraphRecord
from ipu_engine.poplar.report.blocks import BlockRecorder
from ipu_engine.poplar.report.builder import build_debug, build_profile, build_run, new_report_id
from ipu_engine.poplar.report.ipu_tracks import project_run
from ipu_engine.poplar.report.summary import profile_summary
from ipu_engine.poplar.run_pace import RunPace
from ipu_engine.poplar.target import Device
from ipu_engine.poplar.tensor import Tensor
from profiler_core.heap import release_free_memory
from profiler_core.model.profile import ExecutionData, ProfileData, RunData

log = logging.getLogger("poplar")


class Engine:
    """Compiled programs of one graph, runnable on an IPU Model device."""

    def __init__(
        self,
        graph: Graph,
        programs: Program | Sequence[Program],
        options: Mapping[str, Any] | None = None,
        *,
        framework: Mapping[str, str] | None = None,
        replication_factor: int = 1,
        graph_record: GraphRecord | None = None,
    ) -> None:
        """``framework`` names what built the program (the front end's model kind, replicas,
        pipeline stages) and ``replication_factor`` how many replicas share the target's
        IPUs; both only go into the report. ``graph_record`` makes the record a front end
        keeps of its program (its traced IR) for autoReport.outputSerializedGraph; without
        it the graph's own journal of calls is written."""
        configure_logging()
        graph_arg(graph, "Engine")
        framework = {
            name_arg(k, "Engine: a framework key"): name_arg(v, f"Engine: framework[{k!r}]")
            for k, v in mapping_arg(framework, "Engine: the framework", EngineError).items()
        }
        replication_factor = integer_arg(
            replication_factor, "Engine: the replication factor", EngineError
        )
        pvti.current_writer()  # decides from PVTI_OPTIONS whether this process traces
        self.graph = graph
        self.options: EngineOptions = parse_options(options)
        with pvti.Tracepoint(pvti.tracePoplar, "Engine::compile"):
            t0 = time.perf_counter()
            self.executable: Executable
            self.model: CompileModel
            self.executable, self.model = compile_executable(graph, programs, self.options)
            log.info(
                "PO: compiled %d vertices, %d program steps in %.3f s",
                graph.num_vertices,
                len(self.executable.steps),
                time.perf_counter() - t0,
            )
            check_memory(self.model, self.options["debug.allowOutOfMemory"])
        # compiling freed many numpy temporaries of a few MB that glibc keeps for reuse:
        # handed back, the report's message and the tile memory do not stack on them
        release_free_memory()
        self.out_of_memory = self.model.tiles_over.size > 0
        # lightweight profiling (profiler.blocks.filter / profiler.programs.filter), or None
        self.blocks = BlockRecorder.create(self.executable, self.model, self.options)
        self.program_name = self.executable.programs[0].name
        self.framework = dict(framework or {})
        if replication_factor < 1 or graph.target.num_ipus % replication_factor:
            raise EngineError(
                f"replication_factor={replication_factor} must divide the target's "
                f"{graph.target.num_ipus} IPUs"
            )
        self.replication_factor = int(replication_factor)
        self.report_id = new_report_id()
        self.runs: dict[int, list[RunData]] = {}
        self.device: Device | None = None
        self._memory: Memory | None = None
        self._streams: dict[str, CircularBuffer | CallbackStream] = {}
        self._print_stream: IO[str] | None = None
        self._handles: dict[tuple[str, str], tuple[Tensor, Access | RunsAccess]] = {}
        self.run_count = 0
        self._paces: dict[int, RunPace] = {}  # each program's: shared or on one core
        self.last_run_steps = np.zeros(0, dtype=np.int32)
        self._report = AutoReport(self.options, self.program_name)
        self._profile: ProfileData | None = None
        self.traces: list[str] = []  # the .pvti files written while this engine compiled, ran
        self._note_trace()
        if self._report.enabled:
            with pvti.Tracepoint(pvti.tracePoplar, "Engine::writeReport"):
                self._report.write(self.profile(), build_debug(graph, self.report_id))
                self._report.write_graph_record(self.report_id, graph_record or self._journal)

    def _journal(self) -> tuple[dict, dict]:
        """The graph's record of calls, for a program built with the Poplar API."""
        if self.graph.journal is None:
            problem = "the graph was built without a record of its calls"
            return {
                "kind": "poplar",
                "target": {},
                "calls": [],
                "engine": {},
                "problems": [problem],
            }, {}
        return journal_record(self.graph, self.executable.programs, self.options.instrument)

    # -- profiles -------------------------------------------------------------------------
    def profile(self) -> ProfileData:
        """The report model of this engine: compile profile plus the runs recorded so far."""
        if self._profile is None:
            self._profile = build_profile(
                self.graph,
                self.executable,
                self.model,
                self.options,
                self.program_name,
                self.report_id,
                None,
                self.out_of_memory,
                self.framework,
                self.replication_factor,
            )
        self._profile.header.traces = list(self.traces)
        runs = [r for program in sorted(self.runs) for r in self.runs[program]]
        self._profile.execution = None
        if runs:
            self._profile.execution = ExecutionData(runs)
        self._profile.blocks = self.blocks.data() if self.blocks is not None else None
        return self._profile

    def _note_trace(self) -> bool:
        """Remember the .pvti the process is writing now (PVTI_OPTIONS puts it anywhere,
        the working directory by default), so the report can name it; True when new."""
        path = pvti.current_trace_path()
        if path is None or str(path) in self.traces:
            return False
        self.traces.append(str(path))
        return True

    @property
    def report_folder(self) -> str | None:
        """Where autoReport writes this engine's files, or None when it does not."""
        return str(self._report.folder) if self._report.enabled else None

    def print_profile_summary(
        self, out: IO[str] | None = None, show_execution_steps: bool = False
    ) -> None:
        """A text summary like Poplar's ``printProfileSummary``."""
        import sys

        if out is not None and not callable(getattr(out, "write", None)):
            raise ArgumentError(kind_error("print_profile_summary: out", "a text stream", out))
        text = profile_summary(self.profile(), show_execution_steps=show_execution_steps)
        (out or sys.stdout).write(text)

    # -- device -------------------------------------------------------------------------
    def load(self, device: Device) -> None:
        """Put the executable on a device: allocate tile memory and write the constants."""
        with pvti.Tracepoint(pvti.tracePoplar, "Engine::load"):
            self._load(device)

    def _load(self, device: Device) -> None:
        instance_arg(device, Device, "Engine.load: the device", EngineError)
        if device.target != self.graph.target:
            raise EngineError(
                f"the graph was made for {self.graph.target.describe()} but the device is "
                f"{device.target.describe()}"
            )
        memory: Memory = {}
        for elem_type, pool in self.graph.pools.items():
            memory[elem_type] = np.zeros(pool.size, dtype=elem_type.numpy_dtype)
        for var_id, values in self.graph.constant_values.items():
            info = self.graph.variables[var_id]
            memory[info.type][info.base : info.base + info.size] = values.reshape(-1)
        self._memory = memory
        self.device = device

    def _loaded(self, what: str) -> Memory:
        if self._memory is None:
            raise EngineError(f"{what}: the engine is not loaded; call engine.load(device) first")
        return self._memory

    # -- running ------------------------------------------------------------------------
    def run(self, index: int = 0) -> None:
        """Run program ``index``. On failure every tensor and stream is as before the run."""
        index = integer_arg(index, "run: the program index", EngineError)
        memory = self._loaded(f"run({index})")
        if self.out_of_memory:
            raise OutOfMemoryError(
                f"run({index}): this engine does not fit in tile memory; debug.allowOutOfMemory "
                "gives the report, not a run. " + self.model.out_of_memory_message(detail=False)
            )
        exe = self.executable
        if not 0 <= index < len(exe.runners):
            count = len(exe.runners)
            raise EngineError(f"run({index}): the engine has {count} program(s), 0..{count - 1}")
        missing = sorted(exe.streams_used[index] - self._streams.keys())
        if missing:
            name = missing[0]
            raise StreamError(
                f"stream {name!r} has no host data connected; call "
                f"engine.connect_stream({name!r}, array) before engine.run({index})"
            )
        marked = exe.runners[index]  # a one-path program runs without its marks (fixed)
        runner, fixed = self.blocks.runner(index, marked) if self.blocks else (marked, None)
        ctx = RunContext(memory, self._streams, self._print_stream)
        snapshot = self._snapshot() if self._may_fail(index) else None
        started_ns = time.monotonic_ns()
        try:
            with (
                pvti.Tracepoint(pvti.tracePoplar, f"Engine::run({index})"),
                np.errstate(all="ignore"),
            ):
                self._paces.setdefault(index, RunPace()).run(lambda: runner(ctx))
        except BaseException as exc:
            if snapshot is not None:
                self._restore(snapshot)
            if isinstance(exc, EngineError) or not isinstance(exc, Exception):
                raise
            raise ExecutionError(f"run({index}) failed: {type(exc).__name__}: {exc}") from exc
        self.run_count += 1
        executed = ctx.executed if fixed is None else fixed
        if self.blocks is None:
            self.last_run_steps = np.frombuffer(executed, dtype=np.int32).copy()
        else:  # lightweight profiling's marks are negative codes among the step ids
            self.last_run_steps = self.blocks.steps_of(index, executed)
        self._record_run(index, started_ns, executed)

    def _record_run(self, index: int, started_ns: int, log: array) -> None:
        program = self.executable.programs[index]
        run = build_run(self.model, index, program.name or f"program {index}", self.last_run_steps)
        self.last_run = run
        if pvti.current_writer() is not None:
            steps, clock_hz = self.executable.steps, self.graph.target.clock_hz
            project_run(steps, self.model.step_cycles, clock_hz, run, started_ns)
        new_trace = self._note_trace()
        kept = self.runs.setdefault(index, [])
        keep = len(kept) < self.options["autoReport.executionProfileProgramRunCount"]
        if keep:
            kept.append(run)
        if self.blocks is not None:
            self.blocks.record(index, log, run, keep)
        wants_runs = self.options.output("ExecutionProfile")
        timed = keep and (wants_runs or self.blocks is not None)  # blocks are kept with runs
        if self._report.enabled and (timed or new_trace):
            release_free_memory()  # the run's temporaries, before the report's message
            profile = self.profile()
            if not wants_runs:
                profile.execution = None  # the graph profile alone, as written at compile
            with pvti.Tracepoint(pvti.tracePoplar, "Engine::writeReport"):
                self._report.write(profile, None)

    def _may_fail(self, index: int) -> bool:
        callbacks = any(
            isinstance(self._streams.get(s), CallbackStream)
            for s in self.executable.streams_used[index]
        )
        return self.executable.may_fail or callbacks

    def _snapshot(self) -> tuple[dict, dict]:
        assert self._memory is not None
        memory = {t: a.copy() for t, a in self._memory.items()}
        positions = {n: s.position for n, s in self._streams.items()}
        return memory, positions

    def _restore(self, snapshot: tuple[dict, dict]) -> None:
        assert self._memory is not None
        memory, positions = snapshot
        for t, saved in memory.items():
            self._memory[t][...] = saved
        for name, pos in positions.items():
            self._streams[name].position = pos

    def set_print_stream(self, stream: IO[str] | None) -> None:
        """Where PrintTensor writes (standard output when None)."""
        self._print_stream = stream

    # -- host handles ---------------------------------------------------------------------
    def write_tensor(self, handle: str, data: Any) -> None:
        with pvti.Tracepoint(pvti.tracePoplar, f"Engine::writeTensor({handle})"):
            self._write_tensor(handle, data)

    def _handle(self, direction: str, handle: str) -> tuple[Tensor, Access | RunsAccess]:
        """The tensor behind a host ``read`` or ``write`` handle and how to reach it in
        memory, worked out once per handle (runs read and write handles every step)."""
        name_arg(handle, f"{direction}_tensor: the handle", HandleError)
        key = (direction, handle)
        if key not in self._handles:
            handles = self.graph.host_reads if direction == "read" else self.graph.host_writes
            tensor = handles.get(handle)
            if tensor is None:
                known = ", ".join(sorted(handles)) or "none"
                raise HandleError(
                    f"no host {direction} handle {handle!r} (known: {known}); create it with "
                    f"graph.create_host_{direction}(handle, tensor)"
                )
            self._handles[key] = (tensor, tensor_access(tensor))
        return self._handles[key]

    def _write_tensor(self, handle: str, data: Any) -> None:
        memory = self._loaded(f"write_tensor({handle!r})")
        tensor, access = self._handle("write", handle)
        values = host_values(data, tensor.type, f"write_tensor({handle!r})", HandleError)
        if values.size != tensor.num_elements:
            raise HandleError(
                f"write_tensor({handle!r}): {values.size} values given for tensor "
                f"{tensor.name!r} of shape {tensor.shape} ({tensor.num_elements} elements)"
            )
        access.store(memory, values.reshape(-1))

    def read_tensor(self, handle: str, out: np.ndarray | None = None) -> np.ndarray:
        """The tensor's values, shaped like it; also written into ``out`` when given."""
        with pvti.Tracepoint(pvti.tracePoplar, f"Engine::readTensor({handle})"):
            return self._read_tensor(handle, out)

    def _read_tensor(self, handle: str, out: np.ndarray | None) -> np.ndarray:
        memory = self._loaded(f"read_tensor({handle!r})")
        tensor, access = self._handle("read", handle)
        if out is not None:
            check_out(out, tensor, f"read_tensor({handle!r})")
        values = access.read(memory).reshape(tensor.shape).copy()
        if out is not None:
            # out[...] and not out.reshape(-1)[...]: a reshape of a strided array is a copy
            out[...] = values.reshape(out.shape)
        return values

    # -- streams ----------------------------------------------------------------------------
    def connect_stream(self, name: str, data: np.ndarray | Callable[[np.ndarray], object]) -> None:
        """Connect host data (a circular buffer) or a callback to a stream."""
        stream = self.graph.streams.get(name_arg(name, "connect_stream: the name", StreamError))
        if stream is None:
            known = ", ".join(sorted(self.graph.streams)) or "none"
            raise StreamError(f"no stream named {name!r} in the graph (streams: {known})")
        if callable(data) and not isinstance(data, np.ndarray):
            self._streams[name] = CallbackStream(stream, data)
        else:
            self._streams[name] = CircularBuffer(stream, data)

    def connect_stream_to_callback(
        self, name: str, callback: Callable[[np.ndarray], object]
    ) -> None:
        self.connect_stream(name, callback)
