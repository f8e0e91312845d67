"""A training-loop-shaped program instrumented with pvti, as a user would write it.

Run with ``PVTI_OPTIONS='{"enable":"true","directory":"traces"}' python pvti_epochs.py``
and open the .pvti written in ``traces/``. Arguments: [epochs] [steps per epoch]
[--prefetch] (the last adds a "Prefetch" thread loading batches beside the training loop).
"""

from __future__ import annotations

import sys
import threading
import time

import ipu_engine.pvti as pvti


def prefetch(batches: int) -> None:
    """A data-loading thread beside the training loop, traced on a channel of its own."""
    channel = pvti.createTraceChannel("Data")
    for _ in range(batches):
        with pvti.Tracepoint(channel, "Load batch"):
            time.sleep(0.0002)


def train(epochs: int, steps: int, with_prefetch: bool = False) -> None:
    loader = threading.Thread(target=prefetch, args=(epochs * steps,), name="Prefetch")
    if with_prefetch:
        loader.start()
    channel = pvti.createTraceChannel("Training")
    instants = pvti.createTraceChannel("Instant Events")
    loss = pvti.Graph("Loss", "").addSeries("Training Loss")
    weights = pvti.HeatmapDouble("weights", [0.0, 0.5, 1.0], "")
    for epoch in range(epochs):
        pvti.Tracepoint.event(instants, f"Epoch {epoch} begin")
        with pvti.Tracepoint(channel, f"Epoch:{epoch}"):
            for step in range(steps):
                with pvti.Tracepoint(channel, "Step"):
                    time.sleep(0.0003)  # the step's work
                    loss.add(1.0 / (1 + epoch * steps + step))
            weights.add([0.25 * epoch, 0.75, 2.0])
    if with_prefetch:
        loader.join()


if __name__ == "__main__":
    numbers = [a for a in sys.argv[1:] if a != "--prefetch"]
    epochs = int(numbers[0]) if numbers else 3
    steps = int(numbers[1]) if len(numbers) > 1 else 4
    train(epochs, steps, "--prefetch" in sys.argv[1:])
