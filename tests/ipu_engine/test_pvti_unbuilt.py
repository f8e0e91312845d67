"""A checkout whose C modules were never built says how to build them when the tracepoints
are imported -- the ring's module first (the .pvti format's), then the tracepoints' -- not
Python's bare "No module named" or a circular-import guess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_CHILD = r"""
import sys

class Unbuilt:  # as if the extension modules were never compiled
    def find_spec(self, name, path=None, target=None):
        if name in sys.argv[1:]:
            raise ImportError(f"No module named {name!r}")

sys.meta_path.insert(0, Unbuilt())
try:
    import ipu_engine.pvti
except ImportError as error:
    print(error)
else:
    print("imported")
"""


@pytest.mark.parametrize(
    ("missing", "what"),
    [
        ("profiler_core.formats.pvti._ring", "the .pvti record ring is a C module"),
        ("ipu_engine.pvti._tracepoint", "the tracepoints are a C module"),
    ],
)
def test_an_unbuilt_checkout_says_how_to_build(missing: str, what: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, missing],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=120,
    )
    said = done.stdout.strip()
    assert missing in said and what in said, said
    assert "`pip install -e .` in the" in said and "C compiler" in said
