"""Small real reports for the Operations invariants, made with the engine in a child process
as a user makes them: the pipelined example (4 IPUs, a forward and a backward stage on each,
8 micro-batches: the fewest with a steady state; 32 tiles per IPU),
and a ResNet-like block written as ONNX here (conv -> batch norm -> relu -> conv -> batch norm
-> residual add -> relu, twice), run with ``python -m ipu_engine.onnx``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from profiler_core.formats.debug_cbor import write_debug
from profiler_core.formats.profile_pop import read_profile, write_profile
from profiler_core.model.profile import DebugData
from profiler_core.report import open_report
from tests.conftest import run_example_with_reports

PIPELINED_ARGS = ("--steps", "1", "--micro-batches", "8", "--micro-batch-size", "2")
PIPELINED_ARGS += ("--tiles-per-ipu", "32")


def pipelined_report(directory: Path) -> Path:
    run_example_with_reports("pipelined_model.py", directory, *PIPELINED_ARGS)
    return directory / "pipelined"


def resnet_block_model(channels: int = 8, size: int = 8, seed: int = 0):  # -> onnx.ModelProto
    """Two residual blocks of a ResNet in ONNX (with a batch of 2 images)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    weights: dict[str, np.ndarray] = {}
    nodes = []

    def conv_bn(x: str, name: str, relu: bool) -> str:
        weights[f"{name}.w"] = (rng.standard_normal((channels, channels, 3, 3)) * 0.1).astype(
            np.float32
        )
        for part, value in (("scale", 1.0), ("bias", 0.0), ("mean", 0.0), ("var", 1.0)):
            weights[f"{name}.{part}"] = np.full(channels, value, dtype=np.float32)
        nodes.append(helper.make_node("Conv", [x, f"{name}.w"], [f"{name}.c"], name=f"{name}_conv",
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]))  # fmt: skip
        parts = [f"{name}.{p}" for p in ("scale", "bias", "mean", "var")]
        nodes.append(helper.make_node("BatchNormalization", [f"{name}.c", *parts],
                                      [f"{name}.b"], name=f"{name}_bn"))  # fmt: skip
        if not relu:
            return f"{name}.b"
        nodes.append(helper.make_node("Relu", [f"{name}.b"], [f"{name}.r"], name=f"{name}_relu"))
        return f"{name}.r"

    x = "image"
    for block in range(2):
        h = conv_bn(x, f"block{block}a", relu=True)
        h = conv_bn(h, f"block{block}b", relu=False)
        nodes.append(
            helper.make_node("Add", [h, x], [f"block{block}.sum"], name=f"block{block}_add")
        )
        nodes.append(helper.make_node("Relu", [f"block{block}.sum"], [f"block{block}.out"],
                                      name=f"block{block}_out"))  # fmt: skip
        x = f"block{block}.out"
    graph = helper.make_graph(
        nodes,
        "resnet_block",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [2, channels, size, size])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [2, channels, size, size])],
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def resnet_onnx_report(directory: Path) -> Path:
    """The report of ``resnet_block_model`` run once."""
    import onnx

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "resnet_block.onnx"
    onnx.save(resnet_block_model(), path)
    env = dict(os.environ)
    env["POPLAR_ENGINE_OPTIONS"] = json.dumps(
        {"autoReport.all": "true", "autoReport.directory": str(directory / "reports")}
    )
    result = subprocess.run(
        [sys.executable, "-m", "ipu_engine.onnx", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    (folder,) = [p for p in (directory / "reports").iterdir() if p.is_dir()]
    return folder


def no_debug_contexts(source: Path, folder: Path) -> Path:
    """``source`` with every debug context id -1 and a debug.cbor holding none."""
    folder.mkdir()
    profile = read_profile(source / "profile.pop")
    g, p = profile.graph, profile.programs
    for record, column in [(g, "var_debug"), (g, "cs_debug"), (g, "vc_debug"), (p, "step_debug"),
                           (p, "node_debug")]:  # fmt: skip
        if getattr(record, column, None) is not None:
            setattr(record, column, np.full_like(getattr(record, column), -1))
    write_profile(folder / "profile.pop", profile)
    old = open_report(source).debug
    empty = np.zeros(0, dtype=np.int32)
    debug = DebugData(old.report_id, [], empty, [], [], [], [], empty, [])
    write_debug(folder / "debug.cbor", debug)
    return folder
