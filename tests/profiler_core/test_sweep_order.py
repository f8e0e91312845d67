"""Issue 40, the sweep's schedule: runs start longest-predicted first, one per free worker
(profiler_core/runs/order.py), the prediction fitted to the runs of the sweep that ended."""

from __future__ import annotations

import json
from dataclasses import dataclass

from profiler_core.runs.order import LongestFirst
from tests.profiler_core.test_sweep_interrupt import SLEEPER
from tests.profiler_core.test_sweep_local import cli


@dataclass(frozen=True)
class Run:
    name: str
    values: dict


def _grid(rows, cols):
    return [Run(f"{r}x{c}", {"rows": str(r), "cols": str(c)}) for r in rows for c in cols]


def test_before_any_run_ends_the_largest_product_of_sizes_goes_first_ties_in_plan_order():
    waiting = LongestFirst(_grid((1000, 2000, 3000, 4000), (250, 500)))
    order = [waiting.pop().name for _ in range(len(waiting))]
    # products (k): 250 500 | 500 1000 | 750 1500 | 1000 2000
    assert order == ["4000x500", "3000x500", "2000x500", "4000x250", "3000x250",
                     "1000x500", "2000x250", "1000x250"]  # fmt: skip


def test_values_that_are_not_positive_numbers_do_not_order_the_runs():
    runs = [Run(n, {"model": m, "seed": s}) for n, m, s in
            (("a", "resnet", "0"), ("b", "bert", "3"), ("c", "gpt", "1"))]  # fmt: skip
    waiting = LongestFirst(runs)
    # the seed has a 0, the model is a word: neither predicts anything
    assert [waiting.pop().name for _ in range(3)] == ["a", "b", "c"]


def test_the_prediction_follows_the_runs_that_ended():
    """A parameter whose larger values run faster (e.g. more IPUs): once two runs say so,
    the rest go smallest value first."""
    runs = [Run(f"ipus={n}", {"ipus": str(n)}) for n in (1, 2, 4, 8, 16)]
    waiting = LongestFirst(runs)
    first, second = waiting.pop(), waiting.pop()
    assert (first.name, second.name) == ("ipus=16", "ipus=8")  # the prior: larger is longer
    waiting.ended(first, 1.0)  # 16 IPUs: 1 s
    waiting.ended(second, 2.0)  # 8 IPUs: 2 s -- time halves as IPUs double
    assert [waiting.pop().name for _ in range(3)] == ["ipus=1", "ipus=2", "ipus=4"]


def test_a_run_without_a_wall_time_teaches_nothing():
    runs = [Run(f"n={n}", {"n": str(n)}) for n in (1, 2, 3)]
    waiting = LongestFirst(runs)
    run = waiting.pop()
    waiting.ended(run, None)  # lost with its worker
    assert [waiting.pop().name for _ in range(2)] == ["n=2", "n=1"]


def test_a_sweep_starts_its_runs_longest_predicted_first(tmp_path):
    out = tmp_path / "sweep"
    result = cli("sweep", "--workers", "1", "--out", out, "--", SLEEPER, "{t=0.1,0.3,0.2}")
    assert result.returncode == 0, result.stderr
    runs = json.loads((out / "sweep.json").read_text())["runs"]
    assert [r["name"] for r in runs] == ["t=0.1", "t=0.3", "t=0.2"]  # recorded in plan order
    started = sorted(runs, key=lambda r: r["started"])
    assert [r["name"] for r in started] == ["t=0.3", "t=0.2", "t=0.1"]


def test_the_local_clusters_quiet_housekeeping_names_settings_dask_has():
    """A misspelt key would be set and ignored: each must be one of Dask's own settings,
    and a worker of the sweep's cluster must run with it."""
    import dask
    import distributed  # noqa: F401 - loads Dask's distributed settings

    from profiler_core.runs.cluster import QUIET_LOCAL_CLUSTER, sweep_client

    for key in QUIET_LOCAL_CLUSTER:
        dask.config.get(key)  # KeyError when Dask has no such setting
    with sweep_client(1) as (client, _):
        ticks = client.run(lambda dask_worker: dask_worker.periodic_callbacks["tick"].callback_time)
        assert list(ticks.values()) == [1000]
