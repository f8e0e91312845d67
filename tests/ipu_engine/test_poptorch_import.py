"""``ipu_engine.poptorch`` without torch: a clear ImportError saying how to install the
``[torch]`` extra -- run in ``make test`` (no torch there) and under ``make torch`` alike,
in a child process whose torch (or onnxscript) is hidden; the rest of the engine imports
without torch."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _import_with(hidden: str) -> subprocess.CompletedProcess:
    code = f"import sys; sys.modules[{hidden!r}] = None; from ipu_engine import poptorch"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("hidden", ["torch", "onnxscript"])
def test_importing_poptorch_without_torch_says_how_to_install_it(hidden):
    done = _import_with(hidden)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: ipu_engine.poptorch needs PyTorch")
    # the first of torch, onnxscript missing is named (without torch, torch is)
    missing = hidden if importlib.util.find_spec("torch") else "torch"
    assert f"{missing} is not installed" in last
    assert "pip install 'popvision-py[torch]'" in last and "make torch" in last


def test_the_engine_and_its_onnx_importer_never_import_torch():
    code = (
        "import sys; sys.modules['torch'] = None; import ipu_engine, ipu_engine.onnx, "
        "profiler_core, popvision_py; print('ok')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "ok", done.stderr
