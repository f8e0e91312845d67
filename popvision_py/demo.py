"""``make run``: the engine runs a bundled example with reports on, then the GUI opens it.

The example runs (with a PVTI trace) as a child process, as every run launched from the
application does, so a slow or failing program never takes the window down with it.
Without a display (``QT_QPA_PLATFORM=offscreen``, or neither ``DISPLAY`` nor
``WAYLAND_DISPLAY``) every view is rendered to PNG files under ``screenshots/`` and their
paths are printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "resources" / "examples" / "tutorial4_matmul.py"
REPORT_DIR = ROOT / "report"
SCREENSHOTS = ROOT / "screenshots"


def run_example() -> int:
    """Run the example with autoReport on and a PVTI trace beside its report (the System
    Trace page shows it); traces of earlier demo runs are removed first."""
    env = dict(os.environ)
    env["POPLAR_ENGINE_OPTIONS"] = json.dumps(
        {"autoReport.all": "true", "autoReport.directory": str(REPORT_DIR)}
    )
    env["PVTI_OPTIONS"] = json.dumps({"enable": "true", "directory": str(REPORT_DIR)})
    REPORT_DIR.mkdir(exist_ok=True)
    for old in REPORT_DIR.glob("*.pvti*"):
        old.unlink()
    print(f"running {EXAMPLE.relative_to(ROOT)} with reports and a trace in {REPORT_DIR}")
    return subprocess.call([sys.executable, str(EXAMPLE)], env=env, cwd=ROOT)


def has_display() -> bool:
    if os.environ.get("QT_QPA_PLATFORM", "") == "offscreen":
        return False
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def main() -> int:
    code = run_example()
    if code != 0:
        print(f"the example failed with exit code {code}", file=sys.stderr)
        return code
    report = REPORT_DIR / "tutorial4"
    from popvision_py.__main__ import main as popvision

    if has_display():
        return popvision([str(report)])
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    print(f"no display: rendering every view of {report.relative_to(ROOT)} to PNG files")
    settings = SCREENSHOTS / "demo-settings.ini"  # the user's settings stay untouched
    return popvision(
        ["--settings", str(settings), "--screenshot-dir", str(SCREENSHOTS), str(report)]
    )


if __name__ == "__main__":
    raise SystemExit(main())
