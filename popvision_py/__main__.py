"""``popvision [REPORT|TRACE ...]``, ``popvision --compare A B``, ``--screenshot-dir DIR``,
``popvision ssh://user@host[:port]/path`` (a report or trace on another machine),
``popvision --record -- python script.py args`` (run it with PVTI on and watch it live).

Opens each report in a window (or two reports compared in one), and every trace given
(.pvti files, folders of them, Chrome trace JSON) together in one more window. With
``--screenshot-dir`` it renders every view to PNG files, prints their paths and exits,
which is what ``make run`` does on a machine without a display.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PySide6.QtCore import QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from popvision_py.app.display_check import missing_xcb_message
from popvision_py.app.main_window import MainWindow
from popvision_py.app.settings import AppSettings, make_settings
from popvision_py.viewmodels.trace_open import is_trace_path
from profiler_core.formats.pvti.salvage import sweep_stale_copies
from profiler_core.heap import limit_malloc_arenas
from profiler_core.remote import is_remote, source_of


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="popvision", description="PopVision-style graph analyser for IPU reports."
    )
    parser.add_argument(
        "reports",
        nargs="*",
        type=source_of,
        help="report folders, or traces (.pvti, folders of .pvti, Chrome JSON) to open; "
        "ssh://user@host[:port]/path for one on another machine",
    )
    parser.add_argument(
        "--compare", nargs=2, type=source_of, metavar=("A", "B"), help="compare two reports"
    )
    parser.add_argument(
        "--screenshot-dir", type=Path, help="render every view to PNG files here and exit"
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="run the command after -- (python script.py args) with reports and PVTI on, "
        "watch its System Trace live, then open its report",
    )
    parser.add_argument("--settings", type=Path, help="an INI file for settings (tests, demos)")
    parser.add_argument("--theme", choices=("light", "dark"), help="palette for this session")
    return parser.parse_args(argv)


def _path_groups(paths: list[str | Path]) -> list[list[str | Path]]:
    """A window per report (and per ssh:// address); all local traces (.pvti, .json,
    folders of .pvti) together in one."""
    traces = [p for p in paths if not is_remote(p) and is_trace_path(p)]
    groups = [[p] for p in paths if is_remote(p) or not is_trace_path(p)]
    return groups + ([traces] if traces else [])


def _quiet_offscreen(kind: QtMsgType, context: object, message: str) -> None:
    """Drop the offscreen platform's note that windows have no size hints; print the rest."""
    if "propagateSizeHints" not in message:
        print(message, file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    missing = missing_xcb_message() if QApplication.instance() is None else ""
    if missing:  # Qt would abort with "could not load the Qt platform plugin", no hint
        print(missing, file=sys.stderr)
        return 1
    if args.screenshot_dir:
        qInstallMessageHandler(_quiet_offscreen)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("PopVision-py")
    limit_malloc_arenas()  # windows opened and closed for hours do not creep up
    sweep_stale_copies()  # salvage copies of a .pvti left by a window that was killed
    settings = AppSettings(make_settings(args.settings))
    if args.theme:
        settings.set_theme(args.theme)
    if args.record:
        return _record(app, settings, [str(p) for p in args.reports], args.screenshot_dir)
    groups: list[list[str | Path]] = [list(args.compare)] if args.compare else []
    groups += _path_groups(args.reports)
    windows = [MainWindow(settings) for _ in groups or [[]]]
    for window, paths in zip(windows, groups, strict=False):
        if args.screenshot_dir:
            window.resize(1400, 900)
        window.show()
        if paths:
            window.open_paths(paths)
    if not groups:
        windows[0].show()
    if args.screenshot_dir:
        return _screenshots(windows, groups, args.screenshot_dir)
    return app.exec()


def _record(
    app: QApplication, settings: AppSettings, command: list[str], directory: Path | None
) -> int:
    from popvision_py.app.record_cli import record_screenshots, start_recording

    window = MainWindow(settings)
    window.resize(1400, 900)
    window.show()
    if directory is not None:
        code = record_screenshots(window, command, directory)
        window.close()
        return code
    start_recording(window, command)
    return app.exec()


def _screenshots(windows: list[MainWindow], groups: list[list[str | Path]], directory: Path) -> int:
    from popvision_py.app.screenshots import save_screenshots, wait_for_loader

    code = 0
    for i, window in enumerate(windows):
        wait_for_loader(window)
        if groups and not window.opened and window.traces.opened is None:
            print(f"could not open {groups[i][0]}: {window.statusBar().currentMessage()}")
            if window.message_box is not None:
                print(window.message_box.text())
            code = 1
        prefix = "-vs-".join(o.name for o in window.opened) or "start"
        for path in save_screenshots(window, directory, prefix if len(windows) > 1 else ""):
            print(path)
        for failure in window.page_failures:
            print(failure)
            code = 1
        window.close()
    return code


if __name__ == "__main__":
    raise SystemExit(main())
