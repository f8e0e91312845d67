"""Charts without pyqtgraph's context menus, and without the menus' leak.

pyqtgraph builds each plot's menus without a parent (the view box's menu, the "Plot Options"
menu and the WidgetGroup behind its controls) and, when they are disabled, only lets go of
the view box's. Each menu's actions are connected to its own methods, a cycle through Qt
that Python's collector cannot see: every closed window left ~120 menus alive for the rest
of the process. Deleting them when the chart is made ends that.
"""

from __future__ import annotations

import pyqtgraph as pg


def drop_context_menus(plot: pg.PlotWidget | pg.PlotItem) -> None:
    """Turn off ``plot``'s right-click menus and delete them."""
    item = plot.getPlotItem() if isinstance(plot, pg.PlotWidget) else plot
    view_menu = item.getViewBox().menu
    item.setMenuEnabled(False)  # the view box forgets its menu; the plot keeps its own
    for menu in (view_menu, item.ctrlMenu, item.stateGroup):
        if menu is not None:
            menu.deleteLater()
    item.ctrlMenu = None  # pyqtgraph's own close() then knows it has nothing to close
