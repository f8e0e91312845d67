"""Names from reports and traces (programs, targets, folders, variables, debug names) are
shown as plain text: Qt guesses rich text for any label, tooltip or message that looks like
HTML, so a name such as ``<img src=...>`` would otherwise render."""

from __future__ import annotations

import html

from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QGraphicsView, QLabel, QToolTip, QWidget


def make_labels_plain(root: QWidget) -> None:
    """Every label under ``root`` that would guess its format shows plain text.

    Labels that mean to show markup say so with ``setTextFormat(Qt.RichText)`` (and escape
    the names they mix in, see ``escape``); they are left alone.
    """
    for label in root.findChildren(QLabel):
        if label.textFormat() == Qt.TextFormat.AutoText:
            label.setTextFormat(Qt.TextFormat.PlainText)


def plain_label(text: str = "") -> QLabel:
    """A label that shows ``text`` exactly, whatever it contains."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def rich_label(text: str = "") -> QLabel:
    """A label that shows markup the program writes (colours, bold); names mixed into it
    must go through ``escape``. Kept rich by ``make_labels_plain``."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.RichText)
    return label


def escape(text: object) -> str:
    """``text`` for mixing into rich text (a label set to Qt.RichText)."""
    return html.escape(str(text), quote=False)


def plain_tooltip(text: str) -> str:
    """A tooltip that shows ``text`` exactly: tooltips always guess, so text with markup
    is escaped inside a rich-text paragraph that keeps its line breaks."""
    if "<" not in text and "&" not in text:
        return text
    return f"<p style='white-space:pre'>{escape(text)}</p>"


def show_hover_text(plot: QGraphicsView, scene_pos: QPointF, text: str) -> None:
    """A chart's hover callout: ``text`` (plain) at a scene point of ``plot``, or none."""
    if text:
        global_pos = plot.mapToGlobal(plot.mapFromScene(scene_pos))
        QToolTip.showText(global_pos, plain_tooltip(text), plot)
    else:
        QToolTip.hideText()
