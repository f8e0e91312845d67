"""A minimal observer: view models announce changes, widgets subscribe (napari-style)."""

from __future__ import annotations

from collections.abc import Callable


class Emitter:
    """Calls every connected callback with the emitted value, in connection order."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[..., None]] = []

    def connect(self, callback: Callable[..., None]) -> None:
        self._callbacks.append(callback)

    def disconnect(self, callback: Callable[..., None]) -> None:
        self._callbacks.remove(callback)

    def emit(self, *args: object) -> None:
        for callback in list(self._callbacks):
            callback(*args)
