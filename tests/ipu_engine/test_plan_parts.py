"""A kept convolution plan cut into pieces that the machine's cores take in turn
(``codelets/plan_parts.py``, ``poplar/workers.py``): the pieces compute what the whole plan
computes on one thread, to the bit; they go longest first, the cores take them as they
free up; small plans and busy machines stay on the calling thread; an error in a helper's
part reaches the caller; a compute set's groups give their pieces together."""

from __future__ import annotations

import threading

import numpy as np
import psutil
import pytest

from ipu_engine.codelets import conv_products, kernels, plan_parts
from ipu_engine.codelets.conv_products import product, window_copies, windowed
from ipu_engine.poplar import workers

RNG = np.random.default_rng(71)


def _geometry(rows: int, width: int, c: int, f: int, pad: int) -> dict[str, int]:
    return {
        "groups": 1, "inChans": c, "outChans": f, "inRows": rows, "width": width,
        "outRows": rows + 2 * pad - 2, "outWidth": width + 2 * pad - 2, "kernelH": 3,
        "kernelW": 3, "strideH": 1, "strideW": 1, "dilationH": 1, "dilationW": 1,
        "padTop": pad, "padLeft": pad,
    }  # fmt: skip


def _plan() -> tuple[list, list[np.ndarray]]:
    """Three calls over fresh arrays: a stacked product with biases (3 layers), a tall
    one-layer product (300 rows), and a padded 3x3 window's product (2 layers, its
    patches made by copies); and the outputs they write."""
    f32 = np.float32
    stack = (
        RNG.standard_normal((3, 1, 100, 20)).astype(f32),
        RNG.standard_normal((3, 1, 20, 30)).astype(f32),
        RNG.standard_normal((3, 1, 1, 30)).astype(f32),
        np.zeros((3, 1, 100, 30), f32),
    )
    tall = (
        RNG.standard_normal((1, 1, 300, 40)).astype(f32),
        RNG.standard_normal((1, 1, 40, 64)).astype(f32),
        None,
        np.zeros((1, 1, 300, 64), f32),
    )
    g = _geometry(8, 9, 5, 7, 1)
    images = RNG.standard_normal((2, 1, 1, 8, 9, 5)).astype(f32)  # depth, inputs, groups, ...
    patches, copies, blanks = window_copies(images, g)
    weights = RNG.standard_normal((2, 1, 45, 7)).astype(f32)
    out = np.zeros((2, 1, 72, 7), f32)
    window = (copies, blanks, patches, weights, None, out)
    calls = [(product, stack), (product, tall), (windowed, window)]
    return calls, [stack[3], tall[3], out]


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr(workers, "cores", lambda: 2)
    monkeypatch.setattr(workers, "MIN_SPLIT_SECONDS", 0.0)


def test_pieces_compute_what_the_whole_plan_computes_to_the_bit(two_cores) -> None:
    calls, outputs = _plan()
    workers.run_pieces(plan_parts.pieces_of(calls, 1))
    whole = [o.copy() for o in outputs]
    for o in outputs:
        o[...] = np.nan
    pieces = plan_parts.pieces_of(calls, 2)
    assert len(pieces.calls) == 6  # every call cut in two: by layers, rows, layers
    assert list(pieces.seconds) == sorted(pieces.seconds, reverse=True)  # longest first
    workers.run_pieces(pieces)
    for got, want in zip(outputs, whole, strict=True):
        np.testing.assert_array_equal(got, want)
    # and the whole is the convolution: the window's product against numpy's im2col
    _, (_, _, patches, weights, _, out) = calls[2]
    np.testing.assert_allclose(out, patches @ weights, rtol=1e-5, atol=1e-5)


def test_small_plans_stay_whole_in_their_order(two_cores, monkeypatch) -> None:
    calls, _ = _plan()
    monkeypatch.setattr(workers, "MIN_SPLIT_SECONDS", 1.0)  # more than the plan's work
    assert plan_parts.pieces_of(calls, 2).calls == tuple(calls)


def test_the_cores_take_pieces_in_turn_so_they_end_together(monkeypatch) -> None:
    """Estimates that miss: the caller's first piece is slow, so the helper takes every
    other piece meanwhile -- the work is not dealt ahead of time."""
    monkeypatch.setattr(workers, "cores", lambda: 2)
    begun, who = threading.Event(), []

    def slow() -> None:
        who.append(("slow", threading.current_thread().name))
        begun.wait(10)

    def quick(k: int) -> None:
        who.append((k, threading.current_thread().name))
        if k == 3:
            begun.set()

    calls = ((slow, ()), *((quick, (k,)) for k in range(4)))
    workers.run_pieces(workers.Pieces(calls, (1.0, 0.1, 0.1, 0.1, 0.1)))
    helpers = {name for k, name in who if k != "slow"}
    assert len(who) == 5 and len(helpers) == 1 and helpers != {who[0][1]}


def test_a_one_row_piece_is_never_cut(two_cores) -> None:
    """A one-layer product of fewer than twice ``MIN_ROWS`` rows stays whole (a product
    of one row is computed by another BLAS path, rounded otherwise)."""
    rows = 2 * plan_parts.MIN_ROWS - 1
    operands = (
        np.ones((1, 1, rows, 8), np.float32),
        np.ones((1, 1, 8, 4), np.float32),
        None,
        np.zeros((1, 1, rows, 4), np.float32),
    )
    assert plan_parts._pieces((product, operands), 2) == [(product, operands)]


def test_parts_run_at_once_on_a_helper_thread(monkeypatch) -> None:
    """The caller's part waits for the other part to begin: it can only end because a
    helper thread runs that part meanwhile."""
    monkeypatch.setattr(workers, "cores", lambda: 2)
    begun, seen = threading.Event(), {}

    def first() -> None:
        seen["met"] = begun.wait(10)

    def second() -> None:
        seen["thread"] = threading.current_thread().name
        begun.set()

    workers.run_all([first, second])
    assert seen["met"] and seen["thread"].startswith("ipu-codelet")


def test_on_a_busy_machine_every_part_runs_on_the_calling_thread(monkeypatch) -> None:
    monkeypatch.setattr(workers, "cores", lambda: 1)
    ran = []
    workers.run_all(
        [lambda k=k: ran.append((k, threading.current_thread().name)) for k in range(3)]
    )
    assert ran == [(k, threading.current_thread().name) for k in range(3)]


def test_an_error_in_a_helpers_part_is_raised_on_the_caller_after_all_parts(monkeypatch) -> None:
    monkeypatch.setattr(workers, "cores", lambda: 2)
    ended = threading.Event()

    def fails() -> None:
        raise ValueError("part two failed")

    def slow() -> None:
        ended.wait(0.05)
        ended.set()

    with pytest.raises(ValueError, match="part two failed"):
        workers.run_all([slow, fails])
    assert ended.is_set()


def test_cores_leave_out_those_other_processes_keep_busy_now(monkeypatch) -> None:
    """Over the last look's half second: the machine's busy time less this process's own
    CPU time is what other processes took."""
    monkeypatch.setattr(workers, "allowed", lambda: 4)
    clock = {"wall": 100.0, "cpu": 10.0, "busy": 500.0}
    monkeypatch.setattr(workers.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(workers.time, "process_time", lambda: clock["cpu"])
    monkeypatch.setattr(workers, "_machine_busy", lambda: clock["busy"])
    monkeypatch.setattr(workers, "_SEEN", [50.0, 9.0, 499.0, 4])
    # 1 s: the machine busy 3 core-seconds, 1 of them this process's
    clock.update(wall=51.0, cpu=10.0, busy=502.0)
    assert workers.cores() == 2
    clock.update(wall=51.2, busy=504.0)  # within half a second: not looked again
    assert workers.cores() == 2
    clock.update(wall=52.0, cpu=11.8, busy=504.0)  # 2 busy, 1.8 of them its own
    assert workers.cores() == 4
    assert workers._usable(-0.3) == 4 and workers._usable(7.0) == 1


def test_the_machines_busy_time_is_read_from_proc_stat() -> None:
    """Busy core-seconds since boot, as psutil (Dask's dependency) reads the machine's
    CPU times: every core's time less its idle and I/O wait."""
    before = psutil.cpu_times()
    busy = workers._machine_busy()
    after = psutil.cpu_times()

    def busy_of(t) -> float:
        return sum(t) - t.idle - t.iowait - t.guest - t.guest_nice  # guests count in user

    assert busy is not None and busy_of(before) - 0.05 <= busy <= busy_of(after) + 0.05


def test_a_windowed_product_refills_its_patches_from_the_images_values_then() -> None:
    """The kept copies read the images' memory on each call: new values, new product. Its
    matrix lies in space other compute sets overwrite (``window_space``): the padding is
    zeroed again on each call."""
    g = _geometry(6, 6, 3, 4, 1)
    images = RNG.standard_normal((1, 1, 1, 6, 6, 3)).astype(np.float32)
    patches, copies, blanks = window_copies(images, g, lambda s: np.full(s, np.nan, np.float32))
    assert blanks is not None and np.isnan(patches).any()
    weights = RNG.standard_normal((1, 1, 27, 4)).astype(np.float32)
    out = np.zeros((1, 1, 36, 4), np.float32)
    for _ in range(2):
        images[...] = RNG.standard_normal(images.shape)
        patches.base[...] = np.nan  # another compute set's values
        windowed(copies, blanks, patches, weights, None, out)
        want = conv_products.patch_matrix(images, g) @ weights
        np.testing.assert_array_equal(out, want)


def test_pieces_given_within_gathered_run_together_as_it_ends(monkeypatch) -> None:
    """A compute set's codelet groups give their pieces to ``run_pieces`` within
    ``gathered``: nothing runs until the block ends, then every call once, longest
    first; a block that raises runs none of them."""
    monkeypatch.setattr(workers, "cores", lambda: 1)  # in order, on this thread
    monkeypatch.setattr(workers, "MIN_SPLIT_SECONDS", 0.0)
    ran: list[str] = []

    def calls(*names: str) -> tuple:
        return tuple((ran.append, (name,)) for name in names)

    with workers.gathered():
        workers.run_pieces(workers.Pieces(calls("a1", "a2"), (2.0, 1.0)))
        workers.run_pieces(workers.Pieces(calls("b"), (1.5,)))
        assert ran == []
    assert ran == ["a1", "b", "a2"]
    ran.clear()
    with pytest.raises(RuntimeError), workers.gathered():
        workers.run_pieces(workers.Pieces(calls("c"), (1.0,)))
        raise RuntimeError("a group failed")
    assert ran == []


def test_small_gathered_work_runs_on_the_calling_thread(monkeypatch) -> None:
    monkeypatch.setattr(workers, "cores", lambda: 2)
    threads = []
    with workers.gathered():
        for _ in range(2):
            call = (lambda: threads.append(threading.current_thread()), ())
            workers.run_pieces(workers.Pieces((call,), (1e-6,)))
    assert threads == [threading.current_thread()] * 2


@pytest.mark.parametrize("lead", [(3,), ()])
def test_a_depthwise_call_cut_by_lead_axis_or_groups_sums_the_same(two_cores, lead) -> None:
    """x [*lead, H, W, G] by w [*lead, 3, 3, G, 1] into out [*lead, G, 1, rows, cols]:
    cut by its first lead axis, or with none by its groups, each piece sums what the
    whole call sums, to the bit."""
    f32 = np.float32
    x = RNG.standard_normal((*lead, 9, 8, 6)).astype(f32)
    w = RNG.standard_normal((*lead, 3, 3, 6, 1)).astype(f32)
    bias = RNG.standard_normal((*lead, 6, 1)).astype(f32)
    geometry = (1, 1, 1, 1, 1, 1)  # padding top, left; strides; dilations
    whole = np.zeros((*lead, 6, 1, 9, 8), f32)
    kernels.depthwise(x, w, bias, whole, *geometry)
    out = np.full_like(whole, np.nan)
    pieces = plan_parts._pieces((kernels.depthwise, (x, w, bias, out, *geometry)), 2)
    assert len(pieces) == 2
    workers.run_pieces(workers.Pieces(tuple(pieces), (1.0, 1.0)))
    np.testing.assert_array_equal(out, whole)
