"""The System Trace page's Channels and Tracks menus: a channel filter, and a Pin action per
thread and a Collapse action per process (made when the Tracks menu first opens)."""

from __future__ import annotations

from PySide6.QtGui import QAction


class TrackMenus:
    """Part of ``SystemTraceView``: fills its control bar's menus from the model. It uses the
    view's ``model``, ``control_bar``, ``instants``, ``_tracks_filled`` and ``_relayout``."""

    def _fill_menus(self) -> None:
        model = self.model
        assert model is not None
        trace = model.tables
        c = self.control_bar
        c.channel_menu.clear()
        for i, name in enumerate(trace.channels):
            action = c.channel_menu.addAction(name)
            action.setCheckable(True)
            action.setChecked(i in model.shown_channels)
            action.toggled.connect(lambda _on: self._channels_changed())
        c.track_menu.clear()
        self._tracks_filled = False

    def _fill_track_menu(self) -> None:
        """A Pin action per thread and a Collapse action per process, made when the menu
        first opens: a trace of 100k threads must not make 100k actions to show itself."""
        model = self.model
        if self._tracks_filled or model is None:
            return
        self._tracks_filled = True
        trace = model.tables
        c = self.control_bar
        for t in model.thread_order():
            action = c.track_menu.addAction(f"Pin {model.thread_title(t)} to the top")
            action.setCheckable(True)
            action.setChecked(t in model.pinned)
            action.toggled.connect(
                lambda on, t=t: self._relayout(lambda m: m.set_pinned(t, on))
            )  # fmt: skip
        c.track_menu.addSeparator()
        for p, process in enumerate(trace.processes):
            action = c.track_menu.addAction(f"Collapse {process.name} (pid {process.pid})")
            action.setCheckable(True)
            action.setChecked(p in model.collapsed)
            action.toggled.connect(
                lambda on, p=p: self._relayout(lambda m: m.set_collapsed(p, on))
            )  # fmt: skip

    def _channels_changed(self) -> None:
        shown = {i for i, a in enumerate(self.control_bar.channel_menu.actions()) if a.isChecked()}
        self._relayout(lambda m: m.set_channels(shown))
        if self.instants is not None:
            self.instants.item.update()

    def channel_action(self, name: str) -> QAction:
        return next(a for a in self.control_bar.channel_menu.actions() if a.text() == name)

    def track_action(self, prefix: str) -> QAction:
        self._fill_track_menu()
        return next(a for a in self.control_bar.track_menu.actions() if a.text().startswith(prefix))
