"""The bundled example script, run as a user would, leaves exactly the trace its loop implies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from profiler_core import pva

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "pvti_epochs.py"
EPOCHS, STEPS = 3, 4


def test_the_epochs_example_leaves_one_trace_with_its_loop_structure(tmp_path: Path) -> None:
    options = json.dumps({"enable": "true", "directory": str(tmp_path / "traces")})
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), str(EPOCHS), str(STEPS)],
        env={**os.environ, "PVTI_OPTIONS": options},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    (path,) = (tmp_path / "traces").glob("*.pvti")

    trace = pva.openTrace(path)
    (process,) = trace.processes
    (thread,) = process.threads
    epochs = [e for e in thread.rootEvents if not e.isInstant]
    assert [e.label for e in epochs] == [f"Epoch:{i}" for i in range(EPOCHS)]
    assert all(e.channel == "Training" for e in epochs)
    for epoch in epochs:
        steps = epoch.children()
        assert [s.label for s in steps] == ["Step"] * STEPS
        assert all(s.depth == 1 and s.children() == [] for s in steps)
        assert all(epoch.start <= s.start and s.end <= epoch.end for s in steps)
    instants = [e for e in thread.events if e.isInstant]
    assert [(e.label, e.depth, e.channel) for e in instants] == [
        (f"Epoch {i} begin", 0, "Instant Events") for i in range(EPOCHS)
    ]
    assert all(i.start <= e.start for i, e in zip(instants, epochs, strict=True))
    assert len(thread.allEvents) == EPOCHS * (STEPS + 2)
    assert len(thread.events) == 2 * EPOCHS  # libpva's events: the outermost ones

    (loss,) = trace.series
    assert (loss.graph, loss.name) == ("Loss", "Training Loss")
    assert loss.values.tolist() == [1.0 / (1 + k) for k in range(EPOCHS * STEPS)]

    weights = trace.columns.heatmaps["weights"]
    # values 0.25 * epoch, 0.75 and 2.0 into buckets (<0 | [0, .5) | [.5, 1) | >=1)
    expected = [[0, 1, 1, 1], [0, 1, 1, 1], [0, 0, 2, 1]]
    assert weights.counts.tolist() == expected
