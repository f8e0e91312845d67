"""Issue 21: opening, comparing and closing windows 20 times in one process exits 0. A scripted
open + compare + close once aborted at interpreter exit ("Fatal Python error: bool_dealloc",
PySide6 6.12.0), so the session runs in a child process (window_cycles_child.py, a pytest-qt
test) whose exit code and stderr are checked here: an abort is not an exception."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("window_cycles_child.py")


def test_open_compare_close_twenty_windows_in_one_process_exits_0(
    tutorial4_report, tutorial4_variant_report
):
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "WINDOW_CYCLES": "20",
        "WINDOW_CYCLES_A": str(tutorial4_report),
        "WINDOW_CYCLES_B": str(tutorial4_variant_report),
    }
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", str(CHILD)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
    )  # fmt: skip
    output = result.stdout[-3000:] + result.stderr[-3000:]
    assert result.returncode == 0, output  # -6 (SIGABRT) for an abort at exit
    assert "Fatal" not in result.stderr, output
    assert "window cycles done: 20" in result.stdout, output  # every cycle's checks ran
    assert "1 passed" in result.stdout, output
