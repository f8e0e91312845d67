"""A checkout whose C modules were never built says how to build them when a module that
needs one is imported (``profiler_core.native``) -- not Python's bare "No module named", a
circular-import guess, or a slower path taken silently. For the tracepoints the ring's
module is asked for first (the .pvti format's), then the tracepoints'."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_CHILD = r"""
import importlib
import sys

class Unbuilt:  # as if the extension modules were never compiled
    def find_spec(self, name, path=None, target=None):
        if name in sys.argv[2:]:
            raise ImportError(f"No module named {name!r}")

sys.meta_path.insert(0, Unbuilt())
try:
    importlib.import_module(sys.argv[1])
except ImportError as error:
    print(error)
else:
    print("imported")
"""


@pytest.mark.parametrize(
    ("importer", "missing", "what"),
    [
        ("ipu_engine.pvti", "profiler_core.formats.pvti._ring", "the .pvti record ring is"),
        ("ipu_engine.pvti", "ipu_engine.pvti._tracepoint", "the tracepoints are"),
        (
            "ipu_engine.codelets.kernels",
            "ipu_engine.codelets._kernels",
            "the codelets' kernels are",
        ),
        ("ipu_engine.poplar.strided", "ipu_engine.poplar._strided", "strided copy is"),
        ("profiler_core.trace", "profiler_core.trace._chrome_scan", "JSON import's kernel is"),
        ("profiler_core.trace.nesting", "profiler_core.trace._walk", "nesting walk is"),
    ],
)
def test_an_unbuilt_checkout_says_how_to_build(importer: str, missing: str, what: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, importer, missing],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=120,
    )
    said = done.stdout.strip()
    assert missing in said and f"{what} a C module" in said, said
    assert "`pip install -e .` in the" in said and "C compiler" in said
