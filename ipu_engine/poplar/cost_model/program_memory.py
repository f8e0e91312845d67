"""Memory the program itself needs on each tile: control code, exchange code, host
exchange packet headers and instrumentation counters, from the lowered program steps."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ipu_engine.poplar.arrays import unique_counts
from ipu_engine.poplar.compiler.steps import Step, StepKind
from ipu_engine.poplar.cost_model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.poplar.cost_model.cycles import ComputeSetCycles
from profiler_core.model.kinds import MemoryCategory as M


def program_memory(
    steps: Sequence[Step],
    cs_cycles: dict[int, ComputeSetCycles],
    num_tiles: int,
    instrumented: bool,
) -> dict[M, np.ndarray]:
    control = np.full(
        num_tiles, C.CONTROL_CODE_BASE_BYTES + C.CONTROL_CODE_PER_STEP_BYTES * len(steps)
    )
    internal = np.zeros(num_tiles, dtype=np.int64)
    global_ = np.zeros(num_tiles, dtype=np.int64)
    host = np.zeros(num_tiles, dtype=np.int64)
    buffers = np.zeros(num_tiles, dtype=np.int64)
    taking_part = np.zeros(num_tiles, dtype=np.int64)  # steps each tile does work in
    for step in steps:
        kind, facts = step.kind, step.facts
        if kind is StepKind.ON_TILE_EXECUTE and step.compute_set >= 0:
            tiles = cs_cycles[step.compute_set].tiles
            control[tiles] += C.CONTROL_CODE_PER_COMPUTE_BYTES
            taking_part[tiles] += 1
        elif kind in (StepKind.DO_EXCHANGE, StepKind.GLOBAL_EXCHANGE):
            traffic = facts["traffic"]
            packets = -(-(traffic.bytes_in + traffic.bytes_out) // C.EXCHANGE_PACKET_BYTES)
            code = C.EXCHANGE_CODE_PER_STEP_BYTES + packets * C.EXCHANGE_CODE_PER_PACKET_BYTES
            target = internal if kind is StepKind.DO_EXCHANGE else global_
            target[traffic.tiles] += code
            taking_part[traffic.tiles] += 1
        elif kind in (StepKind.STREAM_COPY_MID, StepKind.PRINT_TENSOR):
            tiles, counts = unique_counts(facts["tiles"])
            host[tiles] += C.HOST_EXCHANGE_CODE_BYTES
            packets = -(-counts * facts["elem_size"] // C.EXCHANGE_PACKET_BYTES)
            buffers[tiles] += packets * C.HOST_PACKET_HEADER_BYTES
    instrumentation = np.zeros(num_tiles, dtype=np.int64)
    if instrumented:
        instrumentation += C.INSTRUMENTATION_BYTES_PER_STEP * taking_part
    return {
        M.CONTROL_CODE: control.astype(np.int64),
        M.INTERNAL_EXCHANGE_CODE: internal,
        M.GLOBAL_EXCHANGE_CODE: global_,
        M.HOST_EXCHANGE_CODE: host,
        M.EXCHANGE_BUFFERS: buffers,
        M.INSTRUMENTATION: instrumentation,
    }
