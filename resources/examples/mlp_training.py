"""An MLP trained with SGD on synthetic data for a few epochs, with a PVTI trace per epoch.

The model (Linear-ReLU-Linear-ReLU-Linear) trains on the device: forward, backward and
the SGD update run in an on-device loop of ``--device-iterations`` steps per call, fed by
an infeed. Each epoch is a PVTI tracepoint and every step's loss goes into a PVTI series,
so the System Analyser shows the epochs and the loss curve. Run it with both reports on:

    POPLAR_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./report"}' \\
    PVTI_OPTIONS='{"enable":"true","directory":"./report"}' \\
        python resources/examples/mlp_training.py

The engine program is called "training".
"""

import argparse

import numpy as np

import ipu_engine
import ipu_engine.pvti as pvti
from ipu_engine import nn


def make_data(samples: int, features: int, classes: int, seed: int = 0):
    """Gaussian blobs, one per class, that overlap a little."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((classes, features)) * 0.6
    labels = rng.integers(0, classes, samples)
    x = centres[labels] + rng.standard_normal((samples, features))
    return x.astype(np.float32), labels.astype(np.int32)


def build_model(features: int, hidden: int, classes: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(features, hidden, seed=1),
        nn.ReLU(),
        nn.Linear(hidden, hidden, seed=2),
        nn.ReLU(),
        nn.Linear(hidden, classes, seed=3),
    )


def accuracy(model: nn.Sequential, x: np.ndarray, labels: np.ndarray) -> float:
    """The trained weights' accuracy, computed on the host."""
    h = x
    for layer in model.layers:
        h = h @ layer.weight + layer.bias if isinstance(layer, nn.Linear) else np.maximum(h, 0)
    return float((h.argmax(axis=1) == labels).mean())


def main(argv: list[str] | None = None) -> list[float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--samples", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--device-iterations", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args(argv)

    features, classes = 16, 4
    x, labels = make_data(args.samples, features, classes)
    model = build_model(features, 64, classes)
    train = ipu_engine.training_model(
        model,
        ipu_engine.SGD(lr=args.lr),
        nn.CrossEntropyLoss(),
        device_iterations=args.device_iterations,
        name="training",
    )
    channel = pvti.createTraceChannel("Training")
    loss_series = pvti.Graph("Loss", "").addSeries("Training Loss")
    per_call = args.batch_size * args.device_iterations
    rng = np.random.default_rng(1)
    epoch_losses = []
    for epoch in range(args.epochs):
        with pvti.Tracepoint(channel, f"Epoch:{epoch}"):
            order = rng.permutation(args.samples)
            losses: list[float] = []
            for start in range(0, args.samples - per_call + 1, per_call):
                rows = order[start : start + per_call]
                with pvti.Tracepoint(channel, "Step"):
                    step_losses = np.atleast_1d(train(x[rows], labels[rows]))
                for value in step_losses:
                    loss_series.add(float(value))
                losses += step_losses.tolist()
        epoch_losses.append(float(np.mean(losses)))
        print(f"epoch {epoch}: mean loss {epoch_losses[-1]:.4f}")
    print(f"training accuracy after {args.epochs} epochs: {accuracy(model, x, labels):.1%}")
    return epoch_losses


if __name__ == "__main__":
    main()
