"""PopTorch's documented examples (``resources/examples/poptorch/``: inferenceModel with a
torchvision MobileNet v2 and a half layer; BeginBlock over 4 IPUs with deviceIterations,
Block and BlockFunction), each run as a user runs it -- a script in its own process with
``POPLAR_ENGINE_OPTIONS`` asking for reports -- then their reports read back and opened in
the window offscreen, every page rendered. About two minutes: ``make torch`` runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ipu_engine.poptorch_helpers import require_torch

require_torch()
pytest.importorskip("torchvision", reason="PopTorch's examples use torchvision's models")

from profiler_core.report.open import open_report  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "resources" / "examples" / "poptorch"


def run_example(name: str, reports: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env["POPLAR_ENGINE_OPTIONS"] = json.dumps(
        {"autoReport.all": "true", "autoReport.directory": str(reports)}
    )
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        cwd=reports.parent, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> tuple[Path, str, str]:
    folder = tmp_path_factory.mktemp("poptorch") / "report"
    inference = run_example("inference_model.py", folder)
    pipelined = run_example("pipelined_blocks.py", folder)
    return folder, inference, pipelined


def test_the_inference_model_example_runs_mobilenet_and_half(reports):
    folder, out, _ = reports
    assert "largest difference from torch" in out and "half output" in out
    with open_report(folder / "inference") as report:  # MobileNet v2
        assert report.target.num_ipus == 1 and report.execution is not None
    assert (folder / "inference_2" / "profile.pop").is_file()  # the half layer


def test_the_begin_block_example_pipelines_resnet18_over_four_ipus(reports):
    folder, _, out = reports
    assert "ResNet-18 over 4 IPUs: (4, 1000)" in out
    assert "Network: (4, 5) equal to torch's" in out
    assert "DecoratedNetwork: (4, 5) equal to torch's" in out
    with open_report(folder / "resnet18_pipelined") as report:
        assert report.target.num_ipus == 4
    with open_report(folder / "DecoratedNetwork") as report:
        assert report.target.num_ipus == 2


@pytest.mark.parametrize("name", ["inference", "resnet18_pipelined"])
def test_the_examples_reports_open_in_the_window_page_by_page(reports, tmp_path, name):
    folder = reports[0]
    shots = tmp_path / "shots"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "popvision_py", "--settings", str(tmp_path / "s.ini"),
         "--screenshot-dir", str(shots), str(folder / name)],
        env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    pages = {p.name for p in shots.glob("*.png")}
    for page in ("01-summary", "03-memory", "04-liveness", "05-program-tree", "06-operations",
                 "08-execution-trace"):  # fmt: skip
        assert f"{page}.png" in pages
