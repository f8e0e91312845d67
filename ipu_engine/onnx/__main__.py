"""``python -m ipu_engine.onnx MODEL.onnx [--ipus N] [--batch B] [--inputs x.npz]
[--outputs y.npz] [--report DIR] [--seed S] [--half]``: run an ONNX model on the IPU engine
once, for people who just want a report. Inputs not given are random and seeded; reports
follow ``POPLAR_ENGINE_OPTIONS`` (or ``--report DIR``) and ``PVTI_OPTIONS``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

from ipu_engine.common.errors import EngineError, OnnxError
from ipu_engine.onnx.model import ValueSpec
from ipu_engine.onnx.session import InferenceSession


def input_shape(spec: ValueSpec, batch: int, source: str) -> tuple[int, ...]:
    """``spec``'s shape with a symbolic first dimension set to ``batch``; any other
    dimension without a value is an error naming the input."""
    if spec.shape is None:
        raise OnnxError(f"{source}: input {spec.name!r} has no shape; give it with --inputs")
    dims = []
    for i, d in enumerate(spec.shape):
        if isinstance(d, int):
            if i == 0 and batch != 1 and d != batch:
                raise OnnxError(
                    f"{source}: input {spec.name!r} has a fixed batch of {d}; --batch {batch} "
                    "needs a model whose first dimension is dynamic"
                )
            dims.append(d)
        elif i == 0:
            dims.append(batch)
        else:
            name = f" {d!r}" if d else ""
            raise OnnxError(
                f"{source}: input {spec.name!r} has dynamic dimension {i}{name} with no value; "
                "give the input with --inputs x.npz"
            )
    return tuple(dims)


def random_feeds(session: InferenceSession, batch: int, seed: int) -> dict[str, np.ndarray]:
    """Seeded inputs: floats ~ N(0, 1), integers in [0, 2), booleans fair coins."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for spec in session.get_inputs():
        shape = input_shape(spec, batch, session.model.source)
        if spec.dtype.kind == "f":
            feeds[spec.name] = rng.standard_normal(shape).astype(spec.dtype)
        elif spec.dtype.kind == "b":
            feeds[spec.name] = rng.random(shape) < 0.5
        else:
            feeds[spec.name] = rng.integers(0, 2, shape).astype(spec.dtype)
    return feeds


def _load_inputs(path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError) as exc:
        raise OnnxError(f"{path}: cannot read inputs (an .npz of named arrays): {exc}") from None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ipu_engine.onnx", description=__doc__)
    p.add_argument("model", help="the .onnx file")
    p.add_argument("--ipus", type=int, default=None, help="IPUs to split the model over")
    p.add_argument("--batch", type=int, default=1, help="the batch of dynamic first dimensions")
    p.add_argument("--inputs", help=".npz of the inputs by name (default: random, seeded)")
    p.add_argument("--outputs", help="write the outputs by name to this .npz")
    p.add_argument("--report", help="write the autoReport into this directory")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--half", action="store_true", help="compute in float16")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.batch < 1:
            raise OnnxError(f"--batch must be at least 1, got {args.batch}")
        options: dict = {"dtype": "float16"} if args.half else {}
        if args.report:
            options["engine_options"] = {
                "autoReport.all": "true",
                "autoReport.directory": args.report,
            }
        start = time.perf_counter()
        session = InferenceSession(args.model, ipus=args.ipus, options=options)
        feeds = (
            _load_inputs(args.inputs)
            if args.inputs
            else random_feeds(session, args.batch, args.seed)
        )
        outputs = session.run(None, feeds)
        seconds = time.perf_counter() - start
    except EngineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    names = [o.name for o in session.get_outputs()]
    for name, value in zip(names, outputs, strict=True):
        print(f"{name}: {value.dtype}{list(value.shape)}  mean {float(np.mean(value)):.6g}")
    print(
        f"{session.model.name}: built, compiled and run on {session.ipus} IPU(s) in {seconds:.1f} s"
    )
    if args.outputs:
        np.savez(args.outputs, **dict(zip(names, outputs, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
