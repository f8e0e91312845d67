"""The Operations table's frozen first column survives its table losing its model (a page
rebuilt for another report, a window closing): it hides instead of raising inside Qt's
geometry update, which showed as a cascade of Python errors on opening ResNet-50."""

from __future__ import annotations

from PySide6.QtGui import QStandardItemModel

from popvision_py.views.frozen_column import FrozenColumnTable, freeze_first_column


def test_a_table_without_a_model_hides_its_frozen_column(qtbot):
    model = QStandardItemModel(3, 4)
    table = FrozenColumnTable()
    qtbot.addWidget(table)
    table.setModel(model)
    frozen = freeze_first_column(table)
    table.resize(400, 200)
    table.show()
    qtbot.waitExposed(table)
    assert frozen.isVisible()
    assert [frozen.isColumnHidden(c) for c in range(4)] == [False, True, True, True]
    table.setModel(None)  # pytest-qt fails the test on an exception in a Qt override
    table.resize(300, 150)
    table.updateGeometries()
    assert not frozen.isVisible()
