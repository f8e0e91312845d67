"""Chart axes label each tick with its own value: the Liveness y axis of tutorial 4 (ticks
every 2.5 MiB up to its 15 MiB peak) once read 2, 5, 8, 10, 12 -- rounded neighbours."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage, QPainter

from popvision_py.views.axes import BytesAxis, label_decimals

MIB = 1024 * 1024


def drawn_labels(axis) -> list[tuple[float, str]]:
    """(tick value, text) of every label the axis draws, from pyqtgraph's own draw specs:
    each text is matched to the tick at the centre of its box."""
    image = QImage(max(axis.width(), 1), max(axis.height(), 1), QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    _, ticks, texts = axis.generateDrawSpecs(painter)
    painter.end()
    low, high = axis.range
    size = axis.height()
    positions = {}
    for _spacing, values in axis.tickValues(low, high, size):
        for value in values:
            y = size * (1 - (value - low) / (high - low))  # the y axis grows upwards
            positions[value] = y
    out = []
    for rect, _flags, text in texts:
        centre = rect.center().y()
        value = min(positions, key=lambda v: abs(positions[v] - centre))
        out.append((value, text))
    return out


def test_the_liveness_axis_labels_equal_their_ticks_every_2_5_mib(qtbot, opened_window):
    window = opened_window
    window.resize(1024, 700)  # the size the rounded labels were seen at
    window.show_view("Liveness")
    chart = window.current_view().chart
    qtbot.waitUntil(lambda: window.height() == 700)
    chart.plot.grab()  # laid out and painted, as a user sees it
    axis = chart.left_axis
    assert axis.unit == "MiB"
    low, high = axis.range
    spacings = [spacing for spacing, _ in axis.tickValues(low, high, axis.height())]
    assert 2.5 * MIB in spacings  # the case that was rounded: 2.5, 7.5, 12.5 MiB
    labels = drawn_labels(axis)
    assert labels, "the axis draws labels"
    for value, text in labels:
        assert float(text.replace(",", "")) * MIB == pytest.approx(value), (text, value / MIB)
    shown = {text for _, text in labels}
    assert {"2.5", "7.5", "12.5"} <= shown or {"5.0", "10.0"} <= shown


@pytest.mark.parametrize(
    ("step", "decimals"), [(5.0, 0), (2.5, 1), (0.25, 2), (1.0, 0), (0.5, 1), (20.0, 0)]
)
def test_label_decimals_write_every_multiple_of_the_step_exactly(step, decimals):
    assert label_decimals(step) == decimals
    for k in range(1, 9):
        assert float(f"{k * step:.{decimals}f}") == pytest.approx(k * step)


def test_a_bytes_axis_in_kib_labels_half_steps_with_their_decimal():
    axis = BytesAxis("Memory")
    axis.set_largest(40 * 1024, "KiB")
    assert axis.tickStrings([2560.0, 7680.0], 1.0, 2560.0) == ["2.5", "7.5"]
    assert axis.tickStrings([5120.0, 10240.0], 1.0, 5120.0) == ["5", "10"]
