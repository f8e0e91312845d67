"""Graphcore's PopVision lightweight-profiling tutorial, ported to ipu_engine as a user would
(graphcore/examples, tutorials/tutorials/popvision/lightweight_profiling): ``Block`` programs
around a two-IPU pipeline's stages and an inner op, timed with ``profiler.blocks.filter``;
a program timed by name with ``profiler.programs.filter`` whose executions grow longer; and
StreamCopies timed wherever they occur.

    python resources/examples/lightweight_profiling.py [REPORT_DIR]

With a folder, each example writes its report there (open it in the window: the Execution
Trace's Lightweight mode draws every execution). Each example prints its blocks as the
tutorial's libpva loop does: name, cycles, (start - end).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ipu_engine import (
    BOOL,
    INT,
    Block,
    Copy,
    Engine,
    Execute,
    Graph,
    InOut,
    Input,
    IPUModel,
    Output,
    Repeat,
    RepeatWhileTrue,
    Sequence,
    Vertex,
)
from profiler_core.model.kinds import BlockKind

TILES_PER_IPU = 8
WORK_CYCLES = 3600  # the tutorial's dummy vertex simulates about this much work


class DummyVertex(Vertex):
    """The tutorial's stand-in for work: a supervisor vertex of ~3600 cycles."""

    supervisor = True
    counter = InOut(INT, scalar=True)

    def compute(self) -> None:
        self.counter = self.counter + 1

    @classmethod
    def estimate_cycles(cls, sizes: Any) -> np.ndarray:
        return np.full(sizes.count, WORK_CYCLES, dtype=np.int64)


class Below(Vertex):
    value = Input(INT, scalar=True)
    limit = Input(INT, scalar=True)
    result = Output(BOOL, scalar=True)

    def compute(self) -> None:
        self.result = self.value < self.limit


def _operation(graph: Graph, name: str, tile: int) -> Execute:
    counter = graph.add_variable(INT, [], f"{name}_counter_{tile}")
    graph.set_tile_mapping(counter, tile)
    cs = graph.add_compute_set(name)
    graph.set_tile_mapping(graph.add_vertex(cs, DummyVertex, counter=counter), tile)
    return Execute(cs)


def pipeline(device: Any) -> tuple[Graph, Sequence, dict[str, str]]:
    """Example 1: two pipeline stages on two IPUs, each a Block of two operations (the second
    a Block of its own), repeated five times; the filter times the stages and op2."""
    graph = Graph(device.target)
    stages = []
    for ipu in (0, 1):
        tile = ipu * device.target.tiles_per_ipu
        op1 = _operation(graph, "op1", tile)
        op2 = Block(_operation(graph, "op2", tile), name="op2")
        stages.append(Block(Sequence(op1, op2), name=f"stage{ipu + 1}"))
    program = Sequence(Repeat(5, Sequence(*stages)), name="pipeline")
    return graph, program, {"profiler.blocks.filter": "stage.|op2"}


def growing(device: Any) -> tuple[Graph, Sequence, dict[str, str]]:
    """Example 2: a program named "operation", timed by ``profiler.programs.filter`` without
    a Block, whose work grows by one ~3600-cycle step each time it runs (its loop runs while
    a counter is below a limit that rises): lightweight profiling keeps every execution."""
    graph = Graph(device.target)
    count = graph.add_variable(INT, [], "count")
    limit = graph.add_variable(INT, [], "limit")
    more = graph.add_variable(BOOL, [], "more")
    for tensor in (count, limit, more):
        graph.set_tile_mapping(tensor, 0)
    check = graph.add_compute_set("check")
    graph.set_tile_mapping(graph.add_vertex(check, Below, value=count, limit=limit, result=more), 0)
    work = graph.add_compute_set("work")
    graph.set_tile_mapping(graph.add_vertex(work, DummyVertex, counter=count), 0)
    bump = graph.add_compute_set("raise limit")
    graph.set_tile_mapping(graph.add_vertex(bump, DummyVertex, counter=limit), 0)
    zero = graph.add_constant(INT, [], 0, "zero")
    graph.set_tile_mapping(zero, 0)
    operation = Sequence(
        Copy(zero, count), Execute(bump), RepeatWhileTrue(Execute(check), more, Execute(work)),
        name="operation",
    )  # fmt: skip
    program = Sequence(Copy(zero, limit), Repeat(5, operation), name="growing")
    return graph, program, {"profiler.programs.filter": "operation"}


def streamed(device: Any) -> tuple[Graph, Sequence, dict[str, str]]:
    """Example 3: input streamed to an I/O tile while the compute tile works on the last
    value; every StreamCopy is timed on the tile its data lands on."""
    graph = Graph(device.target)
    io_tile = device.target.tiles_per_ipu - 1
    in1 = graph.add_variable(INT, [], "in1")
    graph.set_tile_mapping(in1, io_tile)
    in2 = graph.add_variable(INT, [], "in2")
    graph.set_tile_mapping(in2, 0)
    op = graph.add_compute_set("operation")
    graph.set_tile_mapping(graph.add_vertex(op, DummyVertex, counter=in2), 0)
    stream = graph.add_host_to_device_fifo("in", INT, 1)
    program = Sequence(
        Copy(stream, in1),
        Repeat(4, Sequence(Copy(in1, in2), Copy(stream, in1), Execute(op))),
        Copy(in1, in2),
        Execute(op),
        name="streamed",
    )
    return graph, program, {"profiler.programs.filter": "operation"}


EXAMPLES = {"pipeline": pipeline, "growing": growing, "streamed": streamed}


def run_example(name: str, report_dir: str | None = None) -> Engine:
    """Build, compile, load and run one example with lightweight profiling on."""
    num_ipus = 2 if name == "pipeline" else 1
    device = IPUModel("ipu2", num_ipus=num_ipus, tiles_per_ipu=TILES_PER_IPU).create_device()
    graph, program, options = EXAMPLES[name](device)
    if report_dir is not None:
        options = {**options, "autoReport.all": "true", "autoReport.directory": report_dir}
    engine = Engine(graph, program, options)
    engine.load(device)
    if name == "streamed":
        engine.connect_stream("in", np.zeros(1, dtype=np.int32))
    engine.run(0)
    return engine


def print_blocks(engine: Engine) -> None:
    """Each block execution on each IPU, as the tutorial's libpva loop prints them."""
    blocks = engine.profile().blocks
    names = blocks.strings.tolist()
    for ipu in sorted(set(blocks.exec_ipu.tolist())):
        for row in np.flatnonzero(blocks.exec_ipu == ipu).tolist():
            block = int(blocks.exec_block[row])
            kind = BlockKind(int(blocks.block_kind[block]))
            name = kind.label if kind.is_stream_copy else names[blocks.block_name[block]]
            start, end = int(blocks.exec_start[row]), int(blocks.exec_end[row])
            indent = "   " * int(blocks.exec_depth[row])
            tile = int(blocks.exec_tile[row])
            print(f"{indent}{name} in tile {tile}: {end - start} ({start} - {end})")


def main() -> None:
    report_dir = sys.argv[1] if len(sys.argv) > 1 else None
    for name in EXAMPLES:
        print(f"-- {name}")
        print_blocks(run_example(name, report_dir))


if __name__ == "__main__":
    main()
