"""The executable cache on the BERT encoder example (hidden 1024, 16 heads, sequence 384,
FFN 4096, 230,960 vertices on one ipu2): the engine's start (Engine() + load, with and
without the graph profile written) on a first run, which compiles and stores, against a
second, which loads; and the whole example script as a process, cold and warm.

The cache skips what compiling works out (exchange plans, liveness, memory layout, cycles);
building the graph in Python and running the layer are the same on both starts, so the
whole script speeds up less than the engine's start.
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._timing import report
from ipu_engine import Engine, Graph, IPUModel, Sequence

EXAMPLE = Path(__file__).resolve().parents[1] / "resources" / "examples" / "bert_encoder_layer.py"
SIZES = {"seq": 384, "hidden": 1024, "heads": 16, "ffn": 4096}


def engine_start(options: dict[str, str]) -> tuple[float, float]:
    """(seconds to build the graph, seconds for Engine() + load) on a fresh graph."""
    build = runpy.run_path(str(EXAMPLE), run_name="bench")["build"]
    t0 = time.perf_counter()
    device = IPUModel("ipu2").create_device()
    graph = Graph(device.target)
    prog = Sequence(name="bert_layer")
    build(SIZES, prog, graph)
    t1 = time.perf_counter()
    engine = Engine(graph, prog, options=options)
    engine.load(device)
    return t1 - t0, time.perf_counter() - t1


def script_seconds(cache: str) -> float:
    env = dict(os.environ, POPLAR_ENGINE_OPTIONS=json.dumps({"executableCache.directory": cache}))
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, str(EXAMPLE)], env=env, check=True, capture_output=True, timeout=1200
    )
    return time.perf_counter() - t0


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for label, extra in (
            ("", {}),
            (" + graph profile", {"autoReport.all": "true", "autoReport.directory": tmp}),
        ):
            _, plain = engine_start(extra)
            cache = {"executableCache.directory": f"{tmp}/cache{len(extra)}", **extra}
            built, cold = engine_start(cache)
            _, warm = engine_start(cache)
            print(
                f"engine start{label}: no cache {plain:.2f} s, first (compile + store) "
                f"{cold:.2f} s, second (load) {warm:.2f} s; graph build {built:.2f} s each"
            )
            report(
                f"second engine start{label} vs first (x faster)",
                cold / warm,
                "x",
                ">= 5",
                cold / warm >= 5,
            )
        first = script_seconds(f"{tmp}/script")
        second = script_seconds(f"{tmp}/script")
        print(
            f"whole example script (import, build, start, run, check): first {first:.2f} s, "
            f"second {second:.2f} s, {first / second:.2f}x faster (not a target: building the "
            "graph and running it are not compiling)"
        )


if __name__ == "__main__":
    main()
