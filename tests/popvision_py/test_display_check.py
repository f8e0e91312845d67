"""Before Qt starts on an X display: the xcb libraries Qt's platform plugin needs, the
missing ones named with the one apt-get line (app/display_check.py, ``popvision``)."""

from __future__ import annotations

import os
import subprocess
import sys

from popvision_py.app.display_check import missing_xcb_message, missing_xcb_packages, uses_xcb

X_DISPLAY = {"DISPLAY": ":0"}
# what a fresh Debian machine lacked: the two libraries this very machine was missing
ABSENT = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-cursor.so.0"}


def test_the_missing_libraries_are_named_with_one_apt_get_line():
    message = missing_xcb_message(X_DISPLAY, lambda soname: soname not in ABSENT)
    assert "(libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1)" in message
    lines = message.splitlines()
    assert "    sudo apt-get install -y libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1" in lines
    assert "QT_QPA_PLATFORM=offscreen" in message  # the way on without a display


def test_every_library_qt_links_has_its_package():
    # ldd of PySide6's libQt6XcbQpa.so.6 lists these (besides glibc and Qt's own)
    packages = missing_xcb_packages(lambda soname: False)
    assert len(packages) == 18 and len(set(packages)) == 18
    assert {"libxcb-cursor0", "libxkbcommon-x11-0", "libxcb-render-util0"} <= set(packages)


def test_nothing_is_said_when_all_are_there_or_qt_uses_another_platform():
    assert missing_xcb_message(X_DISPLAY, lambda soname: True) == ""
    nothing = lambda soname: False  # noqa: E731
    assert missing_xcb_message({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"}, nothing) == ""
    assert missing_xcb_message({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, nothing) == ""
    assert missing_xcb_message({}, nothing) == ""  # no display at all: Qt says so itself
    assert uses_xcb({"QT_QPA_PLATFORM": "xcb"}) and uses_xcb({"QT_QPA_PLATFORM": "xcb:foo=1"})


def test_popvision_prints_the_line_and_exits_before_qt_aborts(tmp_path):
    # The real command line, in a process whose loader lacks libxcb-icccm.so.4: exit code 1,
    # the apt-get line on stderr, and no Qt abort (which would be a signal, not 1).
    script = (
        "import popvision_py.app.display_check as check\n"
        "real = check.loadable\n"
        "check.loadable = lambda soname: soname != 'libxcb-icccm.so.4' and real(soname)\n"
        "from popvision_py.__main__ import main\n"
        "raise SystemExit(main(['--settings', r'%s']))\n" % (tmp_path / "s.ini")
    )
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env["DISPLAY"] = ":77"  # no server there: the check must come before Qt connects
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1, done.stderr
    assert "sudo apt-get install -y libxcb-icccm4" in done.stderr
    assert "could not load the Qt platform plugin" not in done.stderr
