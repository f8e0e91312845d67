"""Light and dark palettes for the widgets, and the matching colours of the charts."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget


@dataclass(frozen=True)
class ChartColors:
    background: str
    foreground: str  # axes, ticks and labels
    grid: str
    selection: str  # behind the bars of selected tiles
    limit: str  # the tile memory line


LIGHT = ChartColors("#ffffff", "#202020", "#d8d8d8", "#ffe28a", "#c00000")
DARK = ChartColors("#1e1f22", "#e0e0e0", "#3a3c40", "#6b5a1e", "#ff6060")

_PALETTE_COLORS = {
    "dark": {
        QPalette.ColorRole.Window: "#2b2d30",
        QPalette.ColorRole.WindowText: "#e0e0e0",
        QPalette.ColorRole.Base: "#1e1f22",
        QPalette.ColorRole.AlternateBase: "#26282b",
        QPalette.ColorRole.ToolTipBase: "#3c3f41",
        QPalette.ColorRole.ToolTipText: "#f0f0f0",
        QPalette.ColorRole.Text: "#e0e0e0",
        QPalette.ColorRole.Button: "#3c3f41",
        QPalette.ColorRole.ButtonText: "#e0e0e0",
        QPalette.ColorRole.BrightText: "#ff6060",
        QPalette.ColorRole.Link: "#6ea8fe",
        QPalette.ColorRole.Highlight: "#2f65ca",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.PlaceholderText: "#8a8a8a",
    },
    "light": {
        QPalette.ColorRole.Window: "#f2f2f2",
        QPalette.ColorRole.WindowText: "#202020",
        QPalette.ColorRole.Base: "#ffffff",
        QPalette.ColorRole.AlternateBase: "#f5f7fa",
        QPalette.ColorRole.ToolTipBase: "#ffffdc",
        QPalette.ColorRole.ToolTipText: "#202020",
        QPalette.ColorRole.Text: "#202020",
        QPalette.ColorRole.Button: "#e8e8e8",
        QPalette.ColorRole.ButtonText: "#202020",
        QPalette.ColorRole.BrightText: "#c00000",
        QPalette.ColorRole.Link: "#0b57d0",
        QPalette.ColorRole.Highlight: "#2f65ca",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.PlaceholderText: "#808080",
    },
}


def make_palette(name: str) -> QPalette:
    palette = QPalette()
    for role, color in _PALETTE_COLORS[name].items():
        palette.setColor(role, QColor(color))
    disabled = "#6a6a6a" if name == "dark" else "#a0a0a0"
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
        QPalette.ColorRole.WindowText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(disabled))
    return palette


def apply_theme(name: str, window: QWidget | None = None) -> None:
    """Fusion style with the named palette, for the whole application; ``window``'s
    widgets that carry their own style sheet are repolished to follow it."""
    app = QApplication.instance()
    if app is None:
        return
    app.setStyle("Fusion")
    app.setPalette(make_palette(name))
    app.setProperty("popvision_theme", name)
    # A widget with its own style sheet keeps the palette it was polished with until its
    # sheet is set again (the rail stayed white in dark mode). Only the window's own
    # widgets: allWidgets() may hand back wrappers of widgets Qt has already deleted.
    if window is not None:
        for widget in [window, *window.findChildren(QWidget)]:
            sheet = widget.styleSheet()
            if sheet:
                widget.setStyleSheet(sheet)


def current_theme() -> str:
    app = QApplication.instance()
    value = app.property("popvision_theme") if app is not None else None
    return value if value in ("light", "dark") else "light"


def chart_colors(widget: QWidget | None = None) -> ChartColors:
    """The chart colours matching the widget's palette (dark when its window is dark)."""
    if widget is not None:
        dark = widget.palette().color(QPalette.ColorRole.Window).lightness() < 128
        return DARK if dark else LIGHT
    return DARK if current_theme() == "dark" else LIGHT
