"""Poplar tutorial 4 (profiling), ported to ipu_engine: two matrix products of matrices
mapped linearly over all 1472 tiles of an ipu2.

Run it with reports on, as Poplar users do:

    POPLAR_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./report"}' \\
        python resources/examples/tutorial4_matmul.py

``--m1 900x600 --m2 600x300 --m3 300x200`` change the shapes (the compare variant uses
``--m1 1600x700 --m2 700x300``); ``--available-memory-proportion m4=0.02`` plans one product
within that share of each tile for its temporaries (poplin's option, default 0.6);
``--type half`` stores the matrices in FP16; ``--tiles-per-ipu 16`` makes a smaller IPU (the
out-of-memory variant of the what-if tests).
"""

import argparse

import numpy as np

from ipu_engine import FLOAT, HALF, Engine, Graph, IPUModel, Sequence, poplin, poputil


def _shape(text: str) -> list[int]:
    rows, cols = text.lower().split("x")
    return [int(rows), int(cols)]


def proportion_arg(text: str) -> tuple[str, float]:
    """``NAME=P``: the availableMemoryProportion of the product called NAME."""
    name, _, value = text.partition("=")
    return name, float(value)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m1", type=_shape, default=[900, 600])
    parser.add_argument("--m2", type=_shape, default=[600, 300])
    parser.add_argument("--m3", type=_shape, default=[300, 200])
    parser.add_argument("--name", default="tutorial4", help="the report sub-folder name")
    parser.add_argument(
        "--available-memory-proportion", type=proportion_arg, action="append", default=[],
        metavar="PRODUCT=P", help="availableMemoryProportion of m4 or m5",
    )  # fmt: skip
    parser.add_argument("--type", choices=("float", "half"), default="float")
    parser.add_argument("--tiles-per-ipu", type=int, default=None, help="fewer tiles than 1472")
    args = parser.parse_args(argv)
    options = {n: {"availableMemoryProportion": p} for n, p in args.available_memory_proportion}
    elem = HALF if args.type == "half" else FLOAT

    device = IPUModel("ipu2", tiles_per_ipu=args.tiles_per_ipu).create_device()
    graph = Graph(device.target)

    m1 = graph.add_variable(elem, args.m1, "m1")
    m2 = graph.add_variable(elem, args.m2, "m2")
    m3 = graph.add_variable(elem, args.m3, "m3")
    for m in (m1, m2, m3):
        poputil.map_tensor_linearly(graph, m)
    graph.create_host_write("m1", m1)
    graph.create_host_write("m2", m2)
    graph.create_host_write("m3", m3)

    prog = Sequence(name=args.name)
    m4 = poplin.mat_mul(graph, m1, m2, prog, "m4", options.get("m4"))
    m5 = poplin.mat_mul(graph, m4, m3, prog, "m5", options.get("m5"))
    graph.create_host_read("m5", m5)

    engine = Engine(graph, prog)
    engine.load(device)
    rng = np.random.default_rng(42)
    values = {
        name: rng.standard_normal(m.shape).astype(np.float32)
        for name, m in (("m1", m1), ("m2", m2), ("m3", m3))
    }
    for name, value in values.items():
        engine.write_tensor(name, value)
    engine.run(0)
    result = engine.read_tensor("m5")
    expected = values["m1"] @ values["m2"] @ values["m3"]
    error = float(np.max(np.abs(result - expected)) / np.max(np.abs(expected)))
    print(f"m5 = m1 @ m2 @ m3: shape {result.shape}, max relative error vs numpy {error:.2e}")
    engine.print_profile_summary()


if __name__ == "__main__":
    main()
