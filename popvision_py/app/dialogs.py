"""Messages to the user that never block the event loop (tests and workers keep running)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget


def show_message(
    parent: QWidget, title: str, text: str, icon: QMessageBox.Icon = QMessageBox.Icon.Warning
) -> QMessageBox:
    """A window-modal message box shown with ``open()``, so nothing waits on it."""
    box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)  # messages quote names from reports
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    box.open()
    return box


HELP_INTRO = (
    "Open a report folder (Ctrl+O) written by a program run with\n"
    'POPLAR_ENGINE_OPTIONS=\'{"autoReport.all":"true","autoReport.directory":"./report"}\'.\n'
    "Pick a report on the left rail. Hover anything for what it shows.\n\n"
    "Keys: Ctrl+O open, Ctrl+R reload, Ctrl+W close, F1 this help, Ctrl+Q quit."
)
