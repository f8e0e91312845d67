"""What-ifs: a report's serialized graph (``autoReport.outputSerializedGraph``) built again
with one change and compiled -- never run -- to predict what the change would do: whether
it fits, its fullest tile, the tiles over, the liveness peak and the cycles of the runs the
report recorded. ``python -m ipu_engine.replan`` answers a request on standard input (how
profiler_core asks it, in a child process).

A Poplar program's record is replayed call by call (``poplar_replay``); a framework or ONNX
program's traced IR is built again by the front end (``framework_replay``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ipu_engine.replan.changes import Change
from ipu_engine.replan.decode import ReplanError
from ipu_engine.replan.figures import Figures, compile_figures
from ipu_engine.replan.framework_replay import replay_framework
from ipu_engine.replan.poplar_replay import Replayed, replay_poplar

__all__ = ["Change", "Figures", "ReplanError", "plan_fingerprint", "predict", "replay"]

PLANNED_OPS = frozenset({"poplin::matMul", "poplin::matMulGrouped", "poplin::convolution"})


def replay(
    record: dict[str, Any], arrays: dict[str, np.ndarray], change: Change | None
) -> Replayed:
    """The graph and programs of ``record`` made again with ``change`` (None: unchanged)."""
    kind = record.get("kind")
    if kind == "poplar":
        return replay_poplar(record, arrays, change)
    if kind == "framework":
        return replay_framework(record, arrays, change)
    raise ReplanError(f"a record of kind {kind!r} cannot be replayed")


def predict(
    record: dict[str, Any], arrays: dict[str, np.ndarray], change: Change | None, runs: list[int]
) -> Figures:
    """The figures of ``record`` with ``change``; ``runs``: the engine programs the report
    ran. A change that cannot be planned is a ``ReplanError`` saying why."""
    return compile_figures(replay(record, arrays, change), runs)


def plan_fingerprint(replayed: Replayed) -> tuple:
    """What tells two built graphs apart for a change of plans: each planned op's recorded
    plan (its arguments but the proportion asked for) and the graph's size. Two proportions
    that lead every planner to the same plans build the same graph, so its figures are
    known without compiling it again."""
    graph = replayed.graph
    plans = tuple(
        (
            item.name,
            tuple(
                sorted(
                    (k, repr(v)) for k, v in item.args.items() if k != "availableMemoryProportion"
                )
            ),
        )
        for item in graph.debug.items
        if item.op in PLANNED_OPS and item.api == item.op
    )
    sizes = (graph.num_vertices, len(graph.compute_sets), len(graph.variables))
    return (sizes, plans)
