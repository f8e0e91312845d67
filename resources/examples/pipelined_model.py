"""A model over 4 IPUs in 4 pipeline stages, trained with micro-batches overlapping.

``nn.begin_block(layer, ipu_id)`` starts a new stage on another IPU, as PopTorch's
``BeginBlock``. It trains on a batch of synthetic data; each weight update pushes
``--micro-batches`` micro-batches through the pipeline: it ramps up (stage 0's forward
alone, then more), runs a steady state in which one compute set holds every IPU's work --
forwards and backwards of different micro-batches side by side -- and ramps down; then
the accumulated gradients update the weights. ``--inference`` runs the forward pipeline
only. The execution trace of the report shows the overlap. The engine program is called
"pipelined".
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
    )


def numpy_forward(model: nn.Sequential, x: np.ndarray) -> np.ndarray:
    h = x
    for layer in model.layers:
        h = h @ layer.weight + layer.bias if isinstance(layer, nn.Linear) else np.maximum(h, 0)
    return h


def main(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--micro-batches", type=int, default=12)
    parser.add_argument("--micro-batch-size", type=int, default=8)
    parser.add_argument("--steps", type=int, default=6, help="weight updates to train")
    parser.add_argument("--inference", action="store_true", help="run the forward pass only")
    parser.add_argument("--tiles-per-ipu", type=int, default=None)
    args = parser.parse_args(argv)

    features, classes = 64, 10
    model = build_model(features, 256, classes)
    rng = np.random.default_rng(0)
    directions = rng.standard_normal((features, classes))
    batch = args.micro_batches * args.micro_batch_size
    options = ipu_engine.Options(tiles_per_ipu=args.tiles_per_ipu, name="pipelined")
    if args.inference:
        infer = ipu_engine.inference_model(model, options, device_iterations=args.micro_batches)
        x = rng.standard_normal((batch, features)).astype(np.float32)
        error = float(np.abs(infer(x) - numpy_forward(model, x)).max())
        print(f"{batch} samples through 4 stages on 4 IPUs; max error vs numpy {error:.1e}")
        wrapper = infer
    else:
        train = ipu_engine.training_model(
            model,
            ipu_engine.SGD(lr=0.5),
            nn.CrossEntropyLoss(),
            options,
            gradient_accumulation=args.micro_batches,
        )
        x = rng.standard_normal((batch, features)).astype(np.float32)
        labels = np.argmax(x @ directions, axis=1).astype(np.int32)
        for step in range(args.steps):
            loss = train(x, labels)
            print(f"update {step}: loss {loss:.4f} ({args.micro_batches} micro-batches)")
        wrapper = train
    print("pipeline schedule" + ("" if args.inference else " of each update") + ":")
    for time_step in wrapper.schedule:
        times = f" x{time_step.count}" if time_step.count > 1 else ""
        print(
            f"  {time_step.label:<12} {' '.join(_stage_name(s) for s in time_step.stages)}{times}"
        )
    return wrapper


def _stage_name(stage: int, stages: int = 4) -> str:
    """In training, stage s < 4 is IPU s's forward pass and stage 7 - s its backward pass."""
    return f"fwd{stage}" if stage < stages else f"bwd{2 * stages - 1 - stage}"


if __name__ == "__main__":
    main()
