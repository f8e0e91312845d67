"""Issue 39's operators are library ops on tiles with cycle estimates, as the rest: a decoder
made of them (LSTM, ConvTranspose, Resize, ScatterND) reports each PopLibs call under its
ONNX node, with compute cycles, its vertices spread over several tiles, read back with
profiler_core's readers."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from ipu_engine.onnx import InferenceSession
from profiler_core.analysis.operations import operations_table
from profiler_core.analysis.vertices import vertex_types_by_tile
from profiler_core.report.open import open_report
from tests.ipu_engine.onnx_helpers import make_model, run_ort

rng = np.random.default_rng(39)


def _decoder():
    """x [T=4, B=1, 8] -> LSTM (H=16) -> last state as a 1x16x1x1 image... -> ConvTranspose
    -> Resize (linear) -> ScatterND of a row."""
    f = lambda *s: (0.3 * rng.standard_normal(s)).astype(np.float32)  # noqa: E731
    weights = {
        "W": f(1, 64, 8), "R": f(1, 64, 16), "shape": np.array([1, 16, 1, 1], np.int64),
        "K": f(16, 4, 4, 4), "roi": np.zeros(0, np.float32),
        "scales": np.array([1, 1, 1.5, 1.5], np.float32), "idx": np.array([[0, 1]], np.int64),
        "upd": f(1, 6, 6),
    }  # fmt: skip
    nodes = [
        helper.make_node("LSTM", ["x", "W", "R"], ["", "h"], hidden_size=16, name="lstm"),
        helper.make_node("Reshape", ["h", "shape"], ["img"], name="to_image"),
        helper.make_node("ConvTranspose", ["img", "K"], ["up"], strides=[2, 2], name="deconv"),
        helper.make_node("Resize", ["up", "roi", "scales"], ["big"], mode="linear", name="resize"),
        helper.make_node("ScatterND", ["big", "idx", "upd"], ["y"], name="paste"),
    ]
    feeds = {"x": f(4, 1, 8)}
    return make_model(nodes, feeds, ["y"], weights, name="decoder"), feeds


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("decoder")
    model, feeds = _decoder()
    engine = {"autoReport.all": "true", "autoReport.directory": str(folder)}
    session = InferenceSession(model, options={"tiles_per_ipu": 16, "engine_options": engine})
    (got,) = session.run(None, feeds)
    (expected,) = run_ort(model, feeds)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    return open_report(folder / "decoder")


@pytest.mark.parametrize(
    "op",
    # the transposed convolution's cycles are those of its phases' poplin::convolution calls
    ["popnn::lstm::lstmFwd", "poplin::convolution", "popops::resample", "popops::multiUpdate"],
)  # fmt: skip
def test_each_library_op_has_compute_cycles(report, op):
    table = operations_table(report, "op")
    assert op in table.labels
    assert table.compute_cycles[table.row(op)] > 0


def test_each_onnx_node_is_a_framework_op_holding_its_calls(report):
    table = operations_table(report, "framework")
    for node in ("LSTM_lstm", "ConvTranspose_deconv", "Resize_resize", "ScatterND_paste"):
        assert table.total_cycles[table.row(f"ONNX/{node}")] > 0


def test_the_new_vertices_are_spread_over_several_tiles(report):
    by_tile = vertex_types_by_tile(report)
    names = [str(report.graph.strings[int(n)]) for n in report.graph.vt_name]
    for prefix in ("popnn::LstmCell<", "popops::Resample<", "popops::MultiUpdate<"):
        types = [i for i, n in enumerate(names) if n.startswith(prefix)]
        tiles = {
            t for t in range(report.target.num_tiles) if np.isin(by_tile.of(t)[0], types).any()
        }
        assert len(tiles) > 1, prefix
