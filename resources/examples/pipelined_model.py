"""A model over 4 IPUs in 4 pipeline stages, with micro-batches overlapping across the IPUs.

``nn.begin_block(layer, ipu_id)`` starts a new stage on another IPU, as PopTorch's
``BeginBlock``. With ``device_iterations`` micro-batches per call the pipeline ramps up
(stage 0 alone, then 0-1, then 0-2), runs a steady state in which one compute set holds
all four stages (each on its IPU, each on its own micro-batch) and ramps down. The
execution trace of its report shows the overlap. The engine program is called "pipelined".
"""

import argparse

import numpy as np

import ipu_engine
from ipu_engine import nn


def build_model(features: int, hidden: int, classes: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(features, hidden, seed=1),
        nn.ReLU(),
        nn.begin_block(nn.Linear(hidden, hidden, seed=2), ipu_id=1),
        nn.ReLU(),
        nn.begin_block(nn.Linear(hidden, hidden, seed=3), ipu_id=2),
        nn.ReLU(),
        nn.begin_block(nn.Linear(hidden, classes, seed=4), ipu_id=3),
        nn.Softmax(),
    )


def numpy_forward(model: nn.Sequential, x: np.ndarray) -> np.ndarray:
    h = x
    for layer in model.layers:
        if isinstance(layer, nn.Linear):
            h = h @ layer.weight + layer.bias
        elif isinstance(layer, nn.ReLU):
            h = np.maximum(h, 0)
        else:
            e = np.exp(h - h.max(axis=1, keepdims=True))
            h = e / e.sum(axis=1, keepdims=True)
    return h


def main(argv: list[str] | None = None) -> ipu_engine.frontend.InferenceModel:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--micro-batches", type=int, default=16)
    parser.add_argument("--micro-batch-size", type=int, default=8)
    parser.add_argument("--tiles-per-ipu", type=int, default=None)
    args = parser.parse_args(argv)

    model = build_model(64, 256, 10)
    infer = ipu_engine.inference_model(
        model,
        device_iterations=args.micro_batches,
        tiles_per_ipu=args.tiles_per_ipu,
        name="pipelined",
    )
    x = np.random.default_rng(0).standard_normal((args.micro_batches * args.micro_batch_size, 64))
    probs = infer(x.astype(np.float32))
    error = float(np.abs(probs - numpy_forward(model, x)).max())
    print(f"{probs.shape[0]} samples through 4 stages on 4 IPUs; max error vs numpy {error:.1e}")
    for step in infer.last.schedule:
        stages = ", ".join(str(s) for s in step.stages)
        times = f" x{step.count}" if step.count > 1 else ""
        print(f"  {step.label:<12} stages {stages}{times}")
    return infer


if __name__ == "__main__":
    main()
