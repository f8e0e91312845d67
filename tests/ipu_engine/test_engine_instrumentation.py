"""With PVTI on, the engine traces its own phases and projects each run onto IPU tracks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from profiler_core import pva

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from ipu_engine import FLOAT, Copy, Engine, Graph, IPUModel, Sequence, popops, poputil

    device = IPUModel("ipu2", num_ipus=2, tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    a = graph.add_variable(FLOAT, [64], "a")
    poputil.map_tensor_linearly(graph, a)
    b = graph.add_variable(FLOAT, [64], "b")
    graph.set_tile_mapping(b, 0)  # on IPU 0 only: the add pulls half of it across IPUs
    graph.create_host_write("a", a)
    graph.create_host_write("b", b)
    feed = graph.add_host_to_device_fifo("feed", FLOAT, 64)
    prog = Sequence(Copy(feed, a), name="traced")
    c = popops.add(graph, a, b, prog, "c")
    graph.create_host_read("c", c)
    engine = Engine(graph, prog)
    engine.load(device)
    engine.write_tensor("a", np.ones(64))
    engine.write_tensor("b", np.ones(64))
    engine.connect_stream("feed", np.arange(64, dtype=np.float32))
    engine.run(0)
    engine.read_tensor("c")
    steps = engine.executable.steps
    cycles = engine.model.step_cycles
    json.dump(
        {
            "steps": [[steps[i].kind.poplar_name, steps[i].name, cycles[i].tolist()]
                      for i in engine.last_run_steps.tolist()],
            "clock": device.target.clock_hz,
        },
        sys.stdout,
    )
    """
)


def test_engine_phases_and_ipu_tracks_are_in_the_trace(tmp_path: Path) -> None:
    options = json.dumps({"enable": "true", "directory": str(tmp_path)})
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env={**os.environ, "PVTI_OPTIONS": options},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    expected = json.loads(result.stdout)
    (path,) = tmp_path.glob("*.pvti")
    trace = pva.openTrace(path)
    threads = {t.name: t for p in trace.processes for t in p.threads}
    host = next(t for name, t in threads.items() if not name.startswith("IPU"))
    host_labels = [e.label for e in host.allEvents]
    for phase in (
        "popops::add(c)",
        "Engine::compile",
        "Engine::load",
        "Engine::run(0)",
        "Engine::writeTensor(a)",
        "Engine::readTensor(c)",
        "StreamCopy feed",
    ):
        assert phase in host_labels
    assert {"IPU 0", "IPU 1"} <= set(threads)
    us_per_cycle = 1e6 / expected["clock"]
    for ipu in (0, 1):
        (run,) = [e for e in threads[f"IPU {ipu}"].events if e.depth == 0]
        assert run.label == "Run traced"
        spans = run.children()
        # one span per executed step that keeps this IPU busy, labelled by its phase
        busy = [(k, n, c[ipu]) for k, n, c in expected["steps"] if c[ipu] > 0]
        assert len(spans) == len(busy)
        for span, (_kind, name, cycles) in zip(spans, busy, strict=True):
            assert span.label.endswith(name)
            assert abs((span.end - span.start) - cycles * us_per_cycle) < 0.01
        phases = {s.label.split(":")[0] for s in spans}
        assert {"Compute", "Global exchange", "Stream copy", "Sync"} <= phases
