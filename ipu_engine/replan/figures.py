"""What a re-planned graph would cost: compiled as an Engine compiles it (checked, lowered,
its compile model built) but never loaded or run, and its figures read off -- whether it
fits, the fullest tile, the tiles over, the liveness peak and, for the programs a report
ran, the cycles of a run (each step's count from a walk of the control tree times its
cycles, as a run's steps add up)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ipu_engine.poplar.compiler.executable import Executable, check_programs, lower_programs
from ipu_engine.poplar.compiler.steps import (
    Block,
    Branch,
    CallNode,
    Loop,
    Node,
    StepNode,
    WhileLoop,
)
from ipu_engine.poplar.cost_model.compile_model import CompileModel, build_compile_model
from ipu_engine.replan.poplar_replay import Replayed


class DataDependentError(Exception):
    """The program's control flow depends on its data (RepeatWhile, If)."""


@dataclass(frozen=True)
class Figures:
    """A compiled graph's figures, as a report's would show them."""

    fits: bool
    bytes_per_tile: int
    fullest_tile: int
    fullest_bytes: int
    tiles_over: int
    peak_live_bytes: int
    total_cycles: int | None  # None: no run to predict, or data-dependent control flow
    cycles_note: str = ""
    ipu_cycles: list[int] = field(default_factory=list)  # each IPU's active cycles in the runs

    def to_dict(self) -> dict[str, Any]:
        return {
            "fits": self.fits,
            "bytes_per_tile": self.bytes_per_tile,
            "fullest_tile": self.fullest_tile,
            "fullest_bytes": self.fullest_bytes,
            "tiles_over": self.tiles_over,
            "peak_live_bytes": self.peak_live_bytes,
            "total_cycles": self.total_cycles,
            "cycles_note": self.cycles_note,
            "ipu_cycles": self.ipu_cycles,
        }


def step_counts(exe: Executable, program: int) -> Counter[int]:
    """How often one run of ``program`` executes each step, as the executor logs them."""
    counts: Counter[int] = Counter()
    stack: list[tuple[Node, int]] = [(exe.roots[program], 1)]
    while stack:
        node, times = stack.pop()
        if isinstance(node, Block):
            stack.extend((item, times) for item in node.items)
            continue
        sid = node.step.id if node.step is not None else -1
        if isinstance(node, StepNode):
            counts[sid] += times
        elif isinstance(node, Loop):
            counts[sid] += times
            stack.append((node.body, times * node.count))
        elif isinstance(node, CallNode):
            counts[sid] += times
            stack.append((exe.function_nodes[node.function], times))
        elif isinstance(node, WhileLoop | Branch):
            kind = "RepeatWhile" if isinstance(node, WhileLoop) else "If"
            raise DataDependentError(
                f"the program runs a {kind} whose path depends on its data, so its cycles are "
                "not predicted"
            )
    return counts


def run_cycles(exe: Executable, model: CompileModel, programs: list[int]) -> tuple[int, list[int]]:
    """Cycles of one run of each of ``programs`` (a report's runs), and each IPU's share."""
    duration = model.step_duration
    total, per_ipu = (
        0,
        np.zeros(model.step_cycles.shape[1] if model.step_cycles.ndim == 2 else 0, np.int64),
    )
    for program in programs:
        counts = step_counts(exe, program)
        if not counts:
            continue
        sids = np.fromiter(counts.keys(), dtype=np.int64)
        times = np.fromiter(counts.values(), dtype=np.int64)
        total += int((duration[sids] * times).sum())
        per_ipu += (model.step_cycles[sids] * times[:, None]).sum(axis=0)
    return total, per_ipu.tolist()


def compile_figures(replayed: Replayed, runs: list[int]) -> Figures:
    """Compile the replayed graph and read its figures; ``runs`` are the engine programs
    the report ran, in order (none: no cycles are predicted)."""
    graph = replayed.graph
    exe = lower_programs(graph, check_programs(graph, replayed.programs))
    model = build_compile_model(graph, exe, replayed.instrument)
    total = model.memory.total
    limit = model.bytes_per_tile
    fullest = int(np.argmax(total)) if total.size else 0
    cycles: int | None = None
    note, ipu_cycles = "", []
    if not runs:
        note = "the report has no execution profile, so cycles are not predicted"
    else:
        bad = [p for p in runs if not 0 <= p < len(exe.roots)]
        if bad:
            note = f"the report ran program {bad[0]}, which the replayed engine does not have"
        else:
            try:
                cycles, ipu_cycles = run_cycles(exe, model, runs)
            except DataDependentError as error:
                note = str(error)
    return Figures(
        fits=bool((total <= limit).all()),
        bytes_per_tile=int(limit),
        fullest_tile=fullest,
        fullest_bytes=int(total[fullest]) if total.size else 0,
        tiles_over=int((total > limit).sum()),
        peak_live_bytes=model.always_live_bytes
        + (int(model.live_bytes.max()) if model.live_bytes.size else 0),
        total_cycles=cycles,
        cycles_note=note,
        ipu_cycles=ipu_cycles,
    )
