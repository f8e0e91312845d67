"""A controls row that wraps: widgets left to right at their size hint, the next line when
the width runs out, so at 1024 px no control is squeezed below its size (cut text such as
"BSP pha") or drawn over its neighbour. Widgets added after ``addStretch`` sit at the
right end while everything fits on one line, as a row with a stretch would place them.

Keep a label with its field by adding them as one ``group`` (they wrap together).
"""

from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QLayout, QLayoutItem, QWidget


def group(*widgets: QWidget, spacing: int = 4) -> QWidget:
    """``widgets`` side by side as one item of a flow (a label and the field it names)."""
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    row.setSpacing(spacing)
    for widget in widgets:
        row.addWidget(widget)
    return box


class FlowLayout(QLayout):
    """Left to right, wrapping; every item gets its size hint (at most the line's width)."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._stretch_at: int | None = None  # items from here go right on a single line
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    # -- QLayout ----------------------------------------------------------------------------
    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def addStretch(self) -> None:
        self._stretch_at = len(self._items)

    def addSpacing(self, size: int) -> None:
        """A gap before the next item (kept only where the line goes on)."""
        self.addItem(_Gap(size))

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        if not 0 <= index < len(self._items):
            return None
        if self._stretch_at is not None and index < self._stretch_at:
            self._stretch_at -= 1
        return self._items.pop(index)

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:
        """One line of everything."""
        shown = [i for i in self._items if not _hidden(i)]
        width = sum(i.sizeHint().width() for i in shown) + self._spacing * max(len(shown) - 1, 0)
        height = max((i.sizeHint().height() for i in shown), default=0)
        margins = self.contentsMargins()
        return QSize(width, height) + QSize(
            margins.left() + margins.right(), margins.top() + margins.bottom()
        )

    def minimumSize(self) -> QSize:
        """The widest item: narrower than that, one item would be cut."""
        size = QSize()
        for item in self._items:
            if not _hidden(item):
                size = size.expandedTo(item.sizeHint())
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    # -- placing ------------------------------------------------------------------------------
    def _place(self, rect: QRect, move: bool) -> int:
        """Lay the items out in ``rect`` (when ``move``); the height they take."""
        margins: QMargins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        shown = [(i, item) for i, item in enumerate(self._items) if not _hidden(item)]
        lines: list[list[tuple[int, QLayoutItem]]] = [[]]
        x = 0
        for i, item in shown:
            width = min(item.sizeHint().width(), area.width())
            if lines[-1] and x + width > area.width() and not isinstance(item, _Gap):
                lines.append([])
                x = 0
            if isinstance(item, _Gap) and not lines[-1]:
                continue  # no gap at the start of a line
            lines[-1].append((i, item))
            x += width + self._spacing
        y = area.y()
        one_line = len(lines) == 1
        for line in lines:
            height = max((_height(item, area.width()) for _, item in line), default=0)
            if move:
                self._move_line(line, area, y, height, right=one_line)
            y += height + self._spacing
        return y - self._spacing - area.y() + margins.top() + margins.bottom()

    def _move_line(
        self, line: list[tuple[int, QLayoutItem]], area: QRect, y: int, height: int, right: bool
    ) -> None:
        widths = [min(item.sizeHint().width(), area.width()) for _, item in line]
        used = sum(widths) + self._spacing * max(len(line) - 1, 0)
        push = area.width() - used if right and self._stretch_at is not None else 0
        x = area.x()
        for (i, item), width in zip(line, widths, strict=True):
            if push > 0 and i >= self._stretch_at:
                x += push
                push = 0
            hint = _height(item, area.width())
            top = y + (height - hint) // 2  # each item centred on its line
            item.setGeometry(QRect(QPoint(x, top), QSize(width, hint)))
            x += width + self._spacing


class _Gap(QLayoutItem):
    """Empty room of a fixed width between items."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self._size = QSize(size, 0)
        self._geometry = QRect()

    def sizeHint(self) -> QSize:
        return self._size

    def minimumSize(self) -> QSize:
        return self._size

    def maximumSize(self) -> QSize:
        return self._size

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def isEmpty(self) -> bool:
        return False

    def geometry(self) -> QRect:
        return self._geometry

    def setGeometry(self, rect: QRect) -> None:
        self._geometry = rect


def _hidden(item: QLayoutItem) -> bool:
    """Hidden widgets, and widgets with nothing to show (an empty note), take no room."""
    widget = item.widget()
    return widget is not None and (widget.isHidden() or item.sizeHint().width() <= 0)


def _height(item: QLayoutItem, line_width: int) -> int:
    """An item's height at the width it gets (a wrapped note is taller when narrower)."""
    width = min(item.sizeHint().width(), line_width)
    if item.hasHeightForWidth():
        return max(item.heightForWidth(width), item.minimumSize().height())
    return item.sizeHint().height()
