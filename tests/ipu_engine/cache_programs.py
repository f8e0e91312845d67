"""Programs and helpers for the executable cache tests: the bundled BERT encoder layer at a
small size on a 16-tile ipu2, run with numpy inputs and checked against its numpy reference."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import runpy
from collections.abc import Iterator
from typing import Any

import numpy as np

from ipu_engine import Engine, Graph, IPUModel, Sequence
from ipu_engine.common.log import configure_logging
from tests.conftest import EXAMPLES

BERT = runpy.run_path(str(EXAMPLES / "bert_encoder_layer.py"), run_name="bert_for_tests")
SIZES = {"seq": 8, "hidden": 16, "heads": 2, "ffn": 32}
TILES = 16


def bert_graph(tiles: int = TILES, sizes: dict | None = None) -> tuple[Any, Graph, Sequence, dict]:
    """A fresh device, graph, program and parameter tensors of the small encoder layer."""
    device = IPUModel("ipu2", tiles_per_ipu=tiles).create_device()
    graph = Graph(device.target)
    prog = Sequence(name="bert_layer")
    tensors = BERT["build"](sizes or SIZES, prog, graph)
    return device, graph, prog, tensors


def bert_inputs(tensors: dict) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    return {
        name: rng.standard_normal(t.shape).astype(np.float32) / np.sqrt(t.shape[0])
        for name, t in tensors.items()
    }


def run_bert(engine: Engine, device: Any, tensors: dict) -> np.ndarray:
    """Load, write the inputs, run and read the layer's output."""
    engine.load(device)
    for name, values in bert_inputs(tensors).items():
        engine.write_tensor(name, values)
    engine.run(0)
    return engine.read_tensor("out")


def bert_reference(tensors: dict) -> np.ndarray:
    return BERT["reference"](bert_inputs(tensors), SIZES["heads"])


def engine_with_cache(folder: Any, **options: str) -> tuple[Engine, Any, dict]:
    device, graph, prog, tensors = bert_graph()
    engine = Engine(graph, prog, options={"executableCache.directory": str(folder), **options})
    return engine, device, tensors


@contextlib.contextmanager
def poplar_info_log(monkeypatch: Any, capsys: Any) -> Iterator[list[str]]:
    """The engine's INFO log lines written while the block runs (to stdout, read here)."""
    lines: list[str] = []
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "INFO")
    monkeypatch.setenv("POPLAR_LOG_DEST", "stdout")
    capsys.readouterr()
    try:
        yield lines
        lines += capsys.readouterr().out.splitlines()
    finally:
        monkeypatch.delenv("POPLAR_LOG_LEVEL")
        configure_logging()
    assert not logging.getLogger("poplar").isEnabledFor(logging.ERROR)


def assert_same_record(a: Any, b: Any, where: str = "profile", skip: tuple = ()) -> None:
    """Dataclasses of numpy columns equal field by field (``skip``: dotted paths)."""
    if where in skip:
        return
    if dataclasses.is_dataclass(a):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            assert_same_record(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}", skip)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert np.array_equal(a, b), where
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same_record(x, y, f"{where}[{i}]", skip)
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            assert_same_record(a[k], b[k], f"{where}[{k}]", skip)
    elif hasattr(a, "tolist"):  # string tables and lazy string / JSON columns
        assert a.tolist() == b.tolist(), where
    else:
        assert a == b, where
