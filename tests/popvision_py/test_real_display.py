"""The real application on a real X server (Xvfb, Qt's xcb platform, not offscreen): started
from the command line with a report, pages switched with the mouse and the keyboard by
``xdotool``, and the X server's root window checked for each page (real_display_child.py).
``.ci/run`` installs xvfb, xdotool and the xcb libraries; every wait is bounded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from popvision_py.app.display_check import missing_xcb_message

CHILD = Path(__file__).with_name("real_display_child.py")
ROOT = Path(__file__).resolve().parents[2]


def test_popvision_on_xvfb_opens_the_report_and_follows_mouse_and_keyboard(
    tutorial4_report, tmp_path, screenshot_dir
):
    for tool in ("xvfb-run", "xdotool"):
        assert shutil.which(tool), f"{tool} is missing: .ci/run installs it (apt-get install)"
    assert missing_xcb_message({"DISPLAY": ":0"}) == "", "install the xcb libraries (.ci/run)"
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY")}
    env["PYTHONPATH"] = str(ROOT)
    command = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", "timeout", "-k", "5", "120"]
    done = subprocess.run(
        [*command, sys.executable, str(CHILD), str(tutorial4_report), str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["platform"] == "xcb" and result["visible"]  # a real window, not offscreen
    assert result["window_ids"]  # xdotool finds it on the X server by its title
    steps = {step["name"]: step for step in result["steps"]}
    assert list(steps) == ["memory", "liveness", "summary"]
    for name, title, row in (("memory", "Memory", 3), ("liveness", "Liveness", 4),
                             ("summary", "Summary", 1)):  # fmt: skip
        step = steps[name]
        assert step["title"] == title and step["rail_row"] == row
        assert step["window_title"] == "tutorial4 — PopVision-py"
        # the X server shows what the page draws, pixel for pixel (sampled every 4th)
        assert step["same_fraction"] > 0.98, (name, step["same_fraction"])
        # on the root window, the clicked / keyed row is the one highlighted in the rail
        colors = step["rail_colors"]
        assert colors[row] != colors[0] and colors.count(colors[0]) == len(colors) - 1
        shutil.copy(tmp_path / f"root-{name}.png", screenshot_dir / f"xvfb-root-{name}.png")
    assert len({step["crop_hash"] for step in steps.values()}) == 3  # three different pages
