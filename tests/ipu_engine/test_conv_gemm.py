"""The convolution codelet's GEMM path (``codelets/conv_gemm.py``): a compute set's alike
vertices as grid blocks of large products, against numpy's convolution -- through
poplin.convolution (grouped, strided, padded, dilated, with bias, half inputs) and through
hand-made vertices whose outputs are a strided view, scattered runs, or addresses."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import FLOAT, Graph, IPUModel, Sequence, poplin, poputil
from ipu_engine.codelets import conv as conv_codelet
from ipu_engine.codelets import conv_products
from ipu_engine.codelets.alike_edges import affine_steps, strided_view
from ipu_engine.codelets.conv import conv_partial
from ipu_engine.common.errors import ExecutionError
from ipu_engine.poplar import workers
from ipu_engine.poplar.program import Execute
from ipu_engine.poplar.runs import Runs
from ipu_engine.poplar.vertices import EdgeColumn
from tests.ipu_engine.conftest import run_program
from tests.ipu_engine.conv_reruns import conv_reruns, runner_caches
from tests.ipu_engine.op_harness import run_op
from tests.ipu_engine.test_conv_groups import CASES, close, conv_case, reference_conv

RNG = np.random.default_rng(41)


@pytest.fixture
def grids(monkeypatch) -> list[dict]:
    """Every grid the codelet runs: its blocks, how many vertices, written in place; and
    every group of alike vertices it runs as one batched product instead (``grid`` None:
    depthwise and grouped convolutions, ``codelets/conv_grouped.py``)."""
    seen: list[dict] = []
    real, real_batched = conv_codelet.run_grid, conv_codelet.run_alike

    def spy(batch, grid, sel, g, channel_major, in_place, with_bias):
        seen.append({"grid": grid, "vertices": sel.size, "in_place": in_place})
        real(batch, grid, sel, g, channel_major, in_place, with_bias)

    def spy_batched(batch, sel, g, with_bias, channel_major, direct):
        seen.append({"grid": None, "vertices": sel.size, "in_place": direct})
        real_batched(batch, sel, g, with_bias, channel_major, direct)

    monkeypatch.setattr(conv_codelet, "run_grid", spy)
    monkeypatch.setattr(conv_codelet, "run_alike", spy_batched)
    return seen


def _conv_vertices(graph: Graph) -> int:
    return sum(b.count for b in graph.vertex_blocks if "ConvPartial" in b.codelet.type_name)


@pytest.mark.parametrize(("xs", "ws", "groups", "stride", "pads", "dilation", "with_bias"), CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_every_vertex_of_a_convolution_runs_in_a_grid_block_or_a_batched_product(
    grids, xs, ws, groups, stride, pads, dilation, with_bias, dtype
) -> None:
    x = RNG.standard_normal(xs).astype(dtype)
    w = RNG.standard_normal(ws).astype(dtype)
    b = RNG.standard_normal(ws[3]).astype(dtype) if with_bias else None
    kwargs = {"stride": stride, "padding": pads, "dilation": dilation, "groups": groups}
    graph, got = conv_case(x, w, b, **kwargs)
    want = reference_conv(x, w, stride, pads, dilation, groups, b)
    assert close(got, want, 1e-5 if dtype == np.float32 else 2e-3)
    assert sum(s["vertices"] for s in grids) == _conv_vertices(graph)


def test_half_partials_do_not_take_the_gemm_path(grids) -> None:
    """Half partials round after every multiply-accumulate: vertex by vertex, not BLAS."""
    x = RNG.standard_normal((1, 6, 6, 4)).astype(np.float16)
    w = RNG.standard_normal((3, 3, 4, 5)).astype(np.float16)
    graph, got = conv_case(x, w, options={"partialsType": "half"})
    assert not grids and _conv_vertices(graph) > 0
    want = reference_conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    assert close(got, want, 2e-2)


# Hand-made vertices: a 10 x 5 image of 3 channels, a 3 x 3 kernel to 4 channels, padding
# 1. Each vertex computes 2 output rows (row block r) and 2 output channels (block f).
H, W, C, F = 10, 5, 3, 4
BLOCKS = H // 2


def _vertex_edges(
    x0: int, w0: int, out0: np.ndarray, r: int, f: int
) -> tuple[Runs, Runs, np.ndarray, dict[str, int]]:
    """Input rows (one run: whole rows of every channel), weights (a run per kernel tap
    and channel), output pixels' addresses (``out0`` [H, W, F] addresses), and state."""
    first, last = 2 * r - 1, 2 * r + 3  # input rows the two output rows see
    top, bottom = max(first, 0), min(last, H)
    inputs = Runs(np.array([x0 + top * W * C]), np.array([(bottom - top) * W * C]))
    rows = np.arange(9 * C)
    weights = Runs(w0 + rows * F + 2 * f, np.full(rows.size, 2))
    out = out0[2 * r : 2 * r + 2, :, 2 * f : 2 * f + 2]
    state = {"inRows": bottom - top, "padTop": top - first}
    return inputs, weights, out, state


def _runs_edge(parts: list[Runs]) -> EdgeColumn:
    sizes = [p.size for p in parts]
    counts = [len(p) for p in parts]
    return EdgeColumn(
        None,
        np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        runs=Runs(
            np.concatenate([p.start for p in parts]), np.concatenate([p.length for p in parts])
        ),
        run_offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
    )


def _hand_made(out_as: str, row_order: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Run the ten vertices, output row block r written to block ``row_order[r]``, the
    outputs' edges kept as runs of pixels or as addresses; (got, numpy's)."""
    device = IPUModel("ipu2", tiles_per_ipu=8).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [H, W, C], "x")
    w = graph.add_variable(FLOAT, [3, 3, C, F], "w")
    y = graph.add_variable(FLOAT, [H, W, F], "y")
    for name, t in (("x", x), ("w", w), ("y", y)):
        poputil.map_tensor_linearly(graph, t)
        graph.create_host_write(name, t)
    graph.create_host_read("y_out", y)
    x0, w0 = x.pool_range()[0], w.pool_range()[0]
    out0 = y.addr.astype(np.int64)
    ins, weights, outs, states = [], [], [], []
    for r in range(BLOCKS):
        for f in range(2):
            i, k, o, s = _vertex_edges(x0, w0, out0, r, f)
            target = row_order[r]
            o = out0[2 * target : 2 * target + 2, :, 2 * f : 2 * f + 2]
            ins.append(i), weights.append(k), outs.append(o), states.append(s)
    if out_as == "runs":
        out_col = _runs_edge(
            [Runs(o[..., 0].reshape(-1), np.full(o[..., 0].size, 2)) for o in outs]
        )
    else:
        addr = np.concatenate([o.reshape(-1) for o in outs])
        out_col = EdgeColumn(addr, np.arange(len(outs) + 1, dtype=np.int64) * outs[0].size)
    cs = graph.add_compute_set("conv")
    edges = {"in": _runs_edge(ins), "weights": _runs_edge(weights), "out": out_col}
    block = graph.add_vertex_block(cs, conv_partial(FLOAT), np.arange(2 * BLOCKS) % 8, edges)
    fixed = {"outRows": 2, "width": W, "outWidth": W, "groups": 1, "inChans": C, "outChans": 2,
             "kernelH": 3, "kernelW": 3, "strideH": 1, "strideW": 1, "dilationH": 1,
             "dilationW": 1, "padLeft": 1}  # fmt: skip
    for name, value in fixed.items():
        block.state[name][:] = value
    for name in ("inRows", "padTop"):
        block.state[name][:] = [s[name] for s in states]
    image = RNG.standard_normal((H, W, C)).astype(np.float32)
    kernel = RNG.standard_normal((3, 3, C, F)).astype(np.float32)
    values = {"x": image, "w": kernel, "y": np.zeros((H, W, F), np.float32)}
    _, got = run_program(graph, device, Sequence(Execute(cs)), values, ["y_out"])
    want = reference_conv(image[None], kernel, (1, 1), ((1, 1), (1, 1)), (1, 1), 1)[0]
    placed = np.empty_like(want)
    for r in range(BLOCKS):
        placed[2 * row_order[r] : 2 * row_order[r] + 2] = want[2 * r : 2 * r + 2]
    return got["y_out"], placed


def test_outputs_in_order_are_written_as_one_strided_view(grids) -> None:
    got, want = _hand_made("runs", [0, 1, 2, 3, 4])
    assert close(got, want, 1e-5)
    blocks = [b for s in grids for b in s["grid"].blocks]
    assert sum(s["vertices"] for s in grids) == 10 and all(s["in_place"] for s in grids)
    # the middle row blocks see 4 input rows each, the borders 3 (padded above or below):
    # three sizes; each block's outputs are a strided view of y
    assert sorted(b.vertices.shape for b in blocks) == [(1, 2), (1, 2), (3, 2)]
    assert all(b.out_view is not None for b in blocks)


def test_outputs_out_of_order_are_scattered_run_by_run(grids) -> None:
    """Row blocks 1 and 3 write each other's rows: not one view, each run written."""
    got, want = _hand_made("runs", [0, 3, 2, 1, 4])
    assert close(got, want, 1e-5)
    blocks = [b for s in grids for b in s["grid"].blocks]
    assert any(b.out_view is None and b.vertices.shape[0] > 1 for b in blocks)


def test_outputs_kept_as_addresses_go_through_the_gathered_output(grids) -> None:
    got, want = _hand_made("addresses", [0, 1, 2, 3, 4])
    assert close(got, want, 1e-5)
    assert grids and not any(s["in_place"] for s in grids)


def test_affine_steps_finds_strided_runs_and_refuses_others() -> None:
    starts = 7 + np.arange(3)[:, None] * 20 + np.arange(4)[None, :] * 5
    assert affine_steps(starts) == (7, (20, 5))
    pool = np.arange(100, dtype=np.float32)
    view = strided_view(pool, 7, (20, 5), (3, 4), 2)
    np.testing.assert_array_equal(view, pool[starts[..., None] + np.arange(2)])
    bent = starts.copy()
    bent[2, 3] += 1
    assert affine_steps(bent) is None
    assert affine_steps(starts[::-1].copy()) is None  # a negative step


@pytest.mark.parametrize("nchw", [False, True])
def test_input_channel_blocks_of_a_pointwise_convolution_run_as_stacks(grids, nchw) -> None:
    """A tight budget splits the 64 input channels into blocks, one grid block each, alike
    but for their offsets: they run as stacks (one batched product, one view per edge),
    from an NHWC input or an NCHW one read channel by channel."""
    x = RNG.standard_normal((1, 8, 8, 64)).astype(np.float32)
    w = RNG.standard_normal((1, 1, 64, 32)).astype(np.float32)
    b = RNG.standard_normal(32).astype(np.float32)
    inputs = {"x": x.transpose(0, 3, 1, 2).copy() if nchw else x, "w": w, "b": b}
    options = {"availableMemoryProportion": 0.002}

    def build(graph, t, prog):
        image = t["x"].dim_shuffle([0, 2, 3, 1]) if nchw else t["x"]
        return poplin.convolution(graph, image, t["w"], prog, "y", bias=t["b"], options=options)

    _, out = run_op(build, inputs, 32)
    assert close(out["out"], reference_conv(x, w, (1, 1), ((0, 0), (0, 0)), (1, 1), 1, b), 1e-5)
    stacks = [s for seen in grids if seen["grid"] is not None for s in seen["grid"].stacks]
    assert stacks and max(s.depth for s in stacks) > 1


@pytest.mark.parametrize("nchw", [False, True])
def test_a_kept_product_computes_every_run_from_memorys_values(nchw) -> None:
    """A pointwise convolution's products whose operands are views of memory are kept from
    one run to the next (``conv_gemm._keep_product``): a second run with new inputs,
    weights and biases computes from those, as a fresh engine does."""
    shapes = {"x": (1, 64, 8, 8) if nchw else (1, 8, 8, 64), "w": (1, 1, 64, 32), "b": (32,)}
    options = {"availableMemoryProportion": 0.002}
    engine = conv_reruns(shapes, 2, nchw=nchw, tiles_per_ipu=32, options=options)
    caches = runner_caches(engine)
    assert [k for c in caches for k in c if isinstance(k, tuple) and k[0] in ("stack", "block")]


def test_output_channel_blocks_side_by_side_are_joined_into_one_product() -> None:
    """The MobileNet block's pointwise convolution (64 -> 64 channels, 56 x 56, NCHW input
    read channel by channel): the plan splits the output channels into blocks of 12 and 13
    (products of 12 and 52 columns), which the kept plan joins into products of all 64
    (``conv_kept``), and its partials' reduction keeps its views too; every run, with new
    values, equals numpy's convolution."""
    shapes = {"x": (1, 64, 56, 56), "w": (1, 1, 64, 64), "b": (64,)}
    caches = runner_caches(conv_reruns(shapes, 3, nchw=True))
    assert any("kept_sum" in c for c in caches)  # the partials' reduction kept its views
    kept = [
        v[1][1]
        for c in caches
        for k, v in c.items()
        if isinstance(k, tuple) and k[0] in ("stack", "block")
    ]
    plans = [c["kept_calls_plan"][1] for c in caches if "kept_calls_plan" in c]
    joined = [args for pieces in plans for _, args in pieces.calls]
    assert kept and max(operands[1].shape[-1] for operands in kept) < 64
    assert joined and all(operands[1].shape[-1] == 64 for operands in joined)


def test_a_padded_windows_copies_are_kept_with_its_product(monkeypatch) -> None:
    """A padded 3x3 convolution's patches (im2col) and its output-channel blocks' weights
    are copies, made into matrices kept with the product (``conv_products.windowed``):
    found on the first run only, while every run, with new inputs and weights, equals
    numpy's convolution."""
    made, weights = [], []
    real, real_weights = conv_products.window_copies, conv_products.weight_copy
    monkeypatch.setattr(conv_products, "window_copies", lambda *a: made.append(1) or real(*a))
    monkeypatch.setattr(
        conv_products, "weight_copy", lambda *a: weights.append(1) or real_weights(*a)
    )
    shapes = {"x": (1, 10, 10, 16), "w": (3, 3, 16, 16), "b": (16,)}
    conv_reruns(shapes, 1, nchw=False, tiles_per_ipu=16, padding=1)  # a first run alone
    first_run = len(made)
    made.clear()
    # three runs of the same engine, each with new values equal to numpy's (conv_reruns)
    engine = conv_reruns(shapes, 3, nchw=False, tiles_per_ipu=16, padding=1)
    assert len(made) == first_run > 0  # found on the first run, then kept
    assert weights  # some products' weights are made too (several output-channel blocks)
    plans = [c["kept_calls_plan"][1] for c in runner_caches(engine) if "kept_calls_plan" in c]
    calls = [fn for pieces in plans for fn, _ in pieces.calls]
    assert conv_products.windowed in calls


def test_a_compute_sets_groups_run_their_kept_calls_together(monkeypatch) -> None:
    """The pointwise convolution's vertices with and without a bias are two codelet
    groups of one compute set: their kept calls are gathered (``workers.gathered``) and
    run as the compute set ends -- every run equal to numpy's (``conv_reruns``) -- and a
    call that fails there is an ExecutionError naming the compute set."""
    monkeypatch.setattr(workers, "cores", lambda: 2)
    monkeypatch.setattr(workers, "MIN_SPLIT_SECONDS", 0.0)  # cut for two cores
    shapes = {"x": (1, 64, 56, 56), "w": (1, 1, 64, 64), "b": (64,)}
    engine = conv_reruns(shapes, 3, nchw=True)
    both = [p for p in engine.executable.plans.values() if len(p.runners) > 1]
    assert both and all("kept_calls_plan" in r.cache for r in both[0].runners)

    def fails(*_):
        raise ValueError("a kept call failed")

    pools, pieces = both[0].runners[0].cache["kept_calls_plan"]
    failing = workers.Pieces(((fails, ()), *pieces.calls[1:]), pieces.seconds)
    both[0].runners[0].cache["kept_calls_plan"] = (pools, failing)
    both[0].runners[0].repeat = None  # the old plan's run, repeated: found again
    name = both[0].groups[0].compute_set.name
    with pytest.raises(ExecutionError, match=f"compute set '{name}' failed: a kept call"):
        engine.run(0)  # raised as the gathered calls ran, after both groups gave theirs
