"""Before the window opens on an X display: the system libraries Qt's xcb platform plugin
loads. Without them Qt aborts with "could not load the Qt platform plugin" and no hint of
what to install; ``missing_xcb_message`` names the missing ones and the ``apt-get`` line.

Qt is not imported here: the check runs before the application is created.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Mapping

# The libraries PySide6's libqxcb.so and libQt6XcbQpa.so.6 link (``ldd``), with the Debian /
# Ubuntu package that ships each. pip's PySide6 wheels bring Qt, not these.
XCB_LIBRARIES: dict[str, str] = {
    "libxcb.so.1": "libxcb1",
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
}


def loadable(soname: str) -> bool:
    """Whether the dynamic loader finds ``soname`` (as Qt's plugin will look for it)."""
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def uses_xcb(environ: Mapping[str, str]) -> bool:
    """Whether Qt will pick its xcb (X11) platform: asked for, or the default on an X
    display that is not a Wayland session."""
    platform = environ.get("QT_QPA_PLATFORM", "")
    if platform:
        return platform.split(":")[0].split(";")[0] == "xcb"
    return bool(environ.get("DISPLAY")) and not environ.get("WAYLAND_DISPLAY")


def missing_xcb_packages(found: Callable[[str], bool] | None = None) -> list[str]:
    """The packages whose libraries the dynamic loader cannot find (``found``, the loader by
    default), in ``XCB_LIBRARIES`` order, each once."""
    found = found or loadable
    missing = [package for soname, package in XCB_LIBRARIES.items() if not found(soname)]
    return list(dict.fromkeys(missing))


def missing_xcb_message(
    environ: Mapping[str, str] | None = None, found: Callable[[str], bool] | None = None
) -> str:
    """What to tell a user whose X display Qt cannot use, or "" when nothing is missing
    (or Qt will not use xcb)."""
    if not uses_xcb(os.environ if environ is None else environ):
        return ""
    missing = missing_xcb_packages(found)
    if not missing:
        return ""
    return (
        "popvision cannot open a window on this X display: Qt's xcb platform plugin needs "
        f"system libraries that are not installed ({', '.join(missing)}).\n"
        "Install them with:\n"
        f"    sudo apt-get install -y {' '.join(missing)}\n"
        "or render every view to PNG files without a display: "
        "QT_QPA_PLATFORM=offscreen popvision --screenshot-dir DIR REPORT"
    )
