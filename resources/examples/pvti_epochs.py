"""A training-loop-shaped program instrumented with pvti, as a user would write it.

Run with ``PVTI_OPTIONS='{"enable":"true","directory":"traces"}' python pvti_epochs.py``
and open the .pvti written in ``traces/``. Arguments: [epochs] [steps per epoch].
"""

from __future__ import annotations

import sys

import ipu_engine.pvti as pvti


def train(epochs: int, steps: int) -> None:
    channel = pvti.createTraceChannel("Training")
    instants = pvti.createTraceChannel("Instant Events")
    loss = pvti.Graph("Loss", "").addSeries("Training Loss")
    weights = pvti.HeatmapDouble("weights", [0.0, 0.5, 1.0], "")
    for epoch in range(epochs):
        pvti.Tracepoint.event(instants, f"Epoch {epoch} begin")
        with pvti.Tracepoint(channel, f"Epoch:{epoch}"):
            for step in range(steps):
                with pvti.Tracepoint(channel, "Step"):
                    loss.add(1.0 / (1 + epoch * steps + step))
            weights.add([0.25 * epoch, 0.75, 2.0])


if __name__ == "__main__":
    epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    train(epochs, steps)
