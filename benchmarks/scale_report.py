"""A large report made by the engine: 16 IPUs x 1472 tiles, hundreds of thousands of
variables, tens of thousands of program steps run about a hundred thousand times.

    python -m benchmarks.scale_report [--out DIR] [--variables N] [--ops N] [--passes N]

Built with the engine's public API and its bulk paths: ``--variables`` small parameters
(one tile each, in name scopes, as a model's weights are), ``--ops`` popops additions of
16-element vectors spread over 16 tiles (each a compute set with its exchange), and a body
that runs those compute sets ``--passes`` times, inside a ``Repeat``. The engine lowers each
compute set once however often it is executed, which keeps the build to seconds.

The engine's model charges every tile control code and instrumentation for every program
step (16 bytes a step on every tile with execution profiling), so a program of more than
about 39,000 steps does not fit in 624 KiB tiles: the defaults stay under that and reach
~100,000 executed steps through the Repeat.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ipu_engine import (
    FLOAT,
    INT,
    Engine,
    Graph,
    IPUModel,
    Repeat,
    Sequence,
    name_scope,
    popops,
)

NUM_IPUS = 16
VECTOR = 16  # elements (and tiles) of each activation vector
LAYERS = 64


def build_graph(num_variables: int, num_ops: int, passes: int, repeats: int) -> tuple:
    device = IPUModel("ipu2", num_ipus=NUM_IPUS).create_device()
    graph = Graph(device.target)
    tiles = device.target.num_tiles
    # Activations first, in their own element pool: the engine looks variables up per pool,
    # so the parameters below (another type) do not slow down lowering every op.
    acts = []
    for i in range(max(num_ops // 2, 1)):
        x = graph.add_variable(FLOAT, [VECTOR], f"act{i}")
        first = (i * VECTOR) % tiles
        graph.set_tile_mapping_array(x, np.arange(first, first + VECTOR) % tiles)
        acts.append(x)
    for i in range(num_variables):
        with name_scope(f"layer{i % LAYERS}"):
            p = graph.add_variable(INT, [8], f"param{i}")
        graph.set_tile_mapping(p, (i * 7) % tiles)
    ops = Sequence()
    for i in range(num_ops):
        with name_scope(f"layer{i % LAYERS}"):
            a, b = acts[i % len(acts)], acts[(i * 13 + 5) % len(acts)]
            popops.add(graph, a, b, ops, f"add{i}")
    body = Sequence(*([ops.programs] * passes), name="body")
    program = Sequence(Repeat(repeats, body), name="scale")
    return device, graph, program


def make_scale_report(
    out: Path,
    num_variables: int = 400_000,
    num_ops: int = 3_000,
    passes: int = 4,
    repeats: int = 3,
    verbose: bool = True,
) -> Path:
    """Build, compile and run the program with autoReport into ``out``; returns the folder."""
    t0 = time.perf_counter()
    device, graph, program = build_graph(num_variables, num_ops, passes, repeats)
    t1 = time.perf_counter()
    options = {"autoReport.all": "true", "autoReport.directory": str(out)}
    engine = Engine(graph, program, options=options)
    engine.load(device)
    engine.run(0)
    t2 = time.perf_counter()
    folder = Path(engine.report_folder)
    if verbose:
        size = (folder / "profile.pop").stat().st_size
        print(
            f"scale report {folder}: {len(graph.variables):,} variables, "
            f"{len(engine.executable.steps):,} program steps, {len(engine.last_run_steps):,} "
            f"executed; profile.pop {size / 1e6:.1f} MB; build {t1 - t0:.1f} s, compile + run "
            f"+ write {t2 - t1:.1f} s"
        )
    return folder


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("report"))
    parser.add_argument("--variables", type=int, default=400_000)
    parser.add_argument("--ops", type=int, default=3_000)
    parser.add_argument("--passes", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    make_scale_report(args.out, args.variables, args.ops, args.passes, args.repeats)


if __name__ == "__main__":
    main()


def measure_scale_report(
    measure: Callable[[Path], None], description: str, argv: list[str] | None = None
) -> None:
    """A benchmark's ``main``: ``measure`` the report folder given with ``--report``, or a
    scale report built for the run in a temporary folder."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--report", type=Path, help="a report folder (default: build one)")
    args = parser.parse_args(argv)
    if args.report is not None:
        measure(args.report)
        return
    with tempfile.TemporaryDirectory() as tmp:
        measure(make_scale_report(Path(tmp)))
