"""Data-parallel training over 2 or 4 replicas, gradients all-reduced before each update.

Each replica is a copy of the model on its own IPU and takes its own slice of every
batch; before each SGD update a ring all-reduce sums the replicas' gradients over the
IPU-Links, so every replica applies the same update and the replicas stay identical.
Each update also accumulates the gradients of 2 micro-batches. The engine program is
called "replicated".
"""

import argparse

import numpy as np

import ipu_engine
from ipu_engine import nn


def main(argv: list[str] | None = None) -> ipu_engine.frontend.TrainingModel:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2, choices=(2, 4))
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--micro-batch-size", type=int, default=16)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    features, classes, accumulation = 16, 4, 2
    directions = rng.standard_normal((features, classes))
    model = nn.Sequential(
        nn.Linear(features, 64, seed=1), nn.ReLU(), nn.Linear(64, classes, seed=2)
    )
    train = ipu_engine.training_model(
        model,
        ipu_engine.SGD(lr=0.5),
        nn.CrossEntropyLoss(),
        replication_factor=args.replicas,
        gradient_accumulation=accumulation,
        name="replicated",
    )
    batch = args.micro_batch_size * args.replicas * accumulation
    for step in range(args.steps):
        x = rng.standard_normal((batch, features)).astype(np.float32)
        labels = np.argmax(x @ directions, axis=1).astype(np.int32)
        loss = train(x, labels)
        print(f"step {step}: loss {loss:.4f} (batch of {batch} over {args.replicas} replicas)")
    weights = train.replica_weights()
    same = all(np.array_equal(w[name], weights[0][name]) for w in weights for name in weights[0])
    print(f"the {args.replicas} replicas hold identical weights: {same}")
    return train


if __name__ == "__main__":
    main()
