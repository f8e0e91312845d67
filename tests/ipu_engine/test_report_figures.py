"""The engine's modelled figures (memory per tile and category, cycles per step and IPU,
exchange bytes, liveness, regions, vertex counts, run timelines) equal those saved from the
engine before tensors and edges became intervals (issue 18): representation must not
change what a report says."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import run_example_with_reports
from tests.ipu_engine.report_figures import DATA, EXAMPLES, all_figures, report_figures


def saved(name: str) -> dict[str, np.ndarray]:
    with np.load(DATA / f"{name}_figures.npz") as data:
        return {k: data[k] for k in data.files}


def assert_same(fresh: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    assert sorted(fresh) == sorted(expected)
    for key, want in expected.items():
        got = fresh[key]
        assert got.shape == want.shape, key
        diff = np.flatnonzero((got != want).reshape(-1))
        assert diff.size == 0, (
            f"{key}: {diff.size} values differ, first at {int(diff[0])}: "
            f"{got.reshape(-1)[diff[0]]} instead of {want.reshape(-1)[diff[0]]}"
        )


def test_tutorial4_figures_unchanged(tutorial4_report: Path) -> None:
    fresh = {f"tutorial4/{k}": v for k, v in report_figures(tutorial4_report).items()}
    assert_same(fresh, saved("tutorial4"))
    # the safety net holds real figures: every tile holds data, steps take cycles
    expected = saved("tutorial4")
    assert (expected["tutorial4/memory_by_category"].sum(axis=0) > 0).all()
    assert expected["tutorial4/step_cycles"].sum() > 0


def test_tutorial4_variant_figures_unchanged(tutorial4_variant_report: Path) -> None:
    fresh = {f"tutorial4/{k}": v for k, v in report_figures(tutorial4_variant_report).items()}
    assert_same(fresh, saved("tutorial4_variant"))


@pytest.mark.parametrize("name", ["mlp_training", "four_shards"])
def test_example_figures_unchanged(name: str, tmp_path: Path) -> None:
    script, args = EXAMPLES[name]
    run_example_with_reports(script, tmp_path, *args)
    assert_same(all_figures(tmp_path), saved(name))
