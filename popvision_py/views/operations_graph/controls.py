"""The Operations graph's controls row: the metric nodes are coloured by, the bands (pipeline
stages or IPUs), edge labels on or off, folding every layer or none, and Fit; the legend
(colour ramp and how many nodes have no figures) sits under the chart."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from popvision_py.viewmodels.graph_colors import NO_FIGURES, RAMP
from popvision_py.viewmodels.operations_graph import BAND_CHOICES, METRIC_HELP, METRICS
from popvision_py.views.flow_layout import FlowLayout, group
from popvision_py.views.plain_text import plain_tooltip


class GraphControls(QWidget):
    """Widgets only; the view connects them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.metric = QComboBox()
        self.metric.addItems(list(METRICS))
        self.metric.setToolTip(
            plain_tooltip(
                "What the nodes are coloured by:\n"
                + "\n".join(f"{name}: {text}" for name, text in METRIC_HELP.items())
            )
        )
        self.bands = QComboBox()
        self.bands.addItems(list(BAND_CHOICES))
        self.bands.setToolTip(
            "Bands behind the nodes: the layers of each pipeline stage, or of each IPU."
        )
        self.edge_labels = QCheckBox("Edge labels")
        self.edge_labels.setToolTip(
            "Label each edge with the type and shape of the tensor it carries (shown when "
            "zoomed in enough to read)."
        )
        self.fold_all = QPushButton("Fold layers")
        self.fold_all.setToolTip(
            "Fold every layer (name scope) into one node; double-click a node to open its "
            "layer again, or use the Layers tab."
        )
        self.open_all = QPushButton("Open layers")
        self.open_all.setToolTip("Show every traced op: open every folded layer.")
        self.fit = QPushButton("Fit")
        self.fit.setToolTip("Show the whole graph.")
        self.note = QLabel()
        self.note.setWordWrap(True)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        row = FlowLayout()
        row.addWidget(group(QLabel("Colour by:"), self.metric))
        row.addWidget(group(QLabel("Bands:"), self.bands))
        row.addWidget(self.edge_labels)
        row.addWidget(self.fold_all)
        row.addWidget(self.open_all)
        row.addWidget(self.fit)
        column.addLayout(row)
        column.addWidget(self.note)


class GraphLegend(QWidget):
    """The colour ramp from the smallest to the largest figure, grey for none, and the
    model's legend text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 2, 8, 4)
        row.setSpacing(0)
        for color in RAMP:
            row.addWidget(_swatch(color))
        row.addSpacing(10)
        row.addWidget(_swatch(NO_FIGURES))
        row.addSpacing(10)
        self.text = QLabel()
        self.text.setWordWrap(True)
        row.addWidget(self.text, 1)
        self.setToolTip(
            "Light to dark: the smallest to the largest figure of the metric picked (log "
            "scale); grey: no figures (weights, inputs, views, or ops the report has no "
            "operation of)."
        )


def _swatch(color: str) -> QLabel:
    swatch = QLabel()
    swatch.setFixedSize(18, 14)
    swatch.setStyleSheet(f"background: {color}; border: 1px solid #70757c;")
    return swatch
