"""PopTorch's model annotations: ``BeginBlock`` (a layer and all that runs after it),
``Block`` (a ``with`` scope) and ``BlockFunction`` (a decorated function) place the
operations traced inside them on an IPU.

While ``torch.export`` traces the model (``exporting()``), the block in force is written
into the tracer's node metadata (``node.meta["custom"]``, what ``torch.fx.traceback.annotate``
sets), which survives the exporter's decompositions; the export then gives each ONNX node
PopART's ``__ipu_number`` / ``__pipeline_stage`` attributes from its FX node's block
(``onnx_markers.py``). Run natively on the CPU, the annotations do nothing, as in PopTorch.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.fx.traceback as fx_traceback

from ipu_engine.common.errors import EngineError

__all__ = ["BLOCK_KEY", "BeginBlock", "Block", "BlockFunction", "exporting"]

#: The key of a node's block in ``node.meta["custom"]``: (user_id, ipu_id).
BLOCK_KEY = "ipu_engine.poptorch.block"

_state: dict[str, Any] = {"exporting": False, "auto_id": 0}


@contextlib.contextmanager
def exporting() -> Iterator[None]:
    """The model is being traced for export: blocks annotate the nodes it makes. The
    metadata is restored afterwards (``preserve_node_meta`` puts it back as it was)."""
    before = dict(_state)
    with fx_traceback.preserve_node_meta():
        _state.update(exporting=True, auto_id=0)
        try:
            yield
        finally:
            _state.clear()
            _state.update(before)


def _check_id(name: str, value: Any, kind: type) -> None:
    ok = value is None or isinstance(value, kind)
    if kind is int:
        ok = ok and not isinstance(value, bool) and (value is None or value >= 0)
    if not ok:
        raise EngineError(
            f"poptorch block: {name} must be {'a whole number >= 0' if kind is int else 'a str'} "
            f"or None, got {value!r}"
        )


def _current() -> tuple[str | None, int | None] | None:
    return fx_traceback.current_meta.get("custom", {}).get(BLOCK_KEY)


def _enter(user_id: str | None, ipu_id: int | None) -> None:
    """The block in force from now on. The metadata dict is replaced, never changed in
    place: ``preserve_node_meta`` restores a shallow copy of it."""
    if user_id is None:
        user_id = str(_state["auto_id"])
        _state["auto_id"] += 1
    custom = dict(fx_traceback.current_meta.get("custom", {}))
    custom[BLOCK_KEY] = (user_id, ipu_id)
    fx_traceback.current_meta["custom"] = custom


def _restore(previous: tuple[str | None, int | None] | None) -> None:
    custom = dict(fx_traceback.current_meta.get("custom", {}))
    if previous is None:
        custom.pop(BLOCK_KEY, None)
    else:
        custom[BLOCK_KEY] = previous
    if custom:
        fx_traceback.current_meta["custom"] = custom
    else:
        fx_traceback.current_meta.pop("custom", None)


class Block:
    """``with poptorch.Block(user_id=None, ipu_id=None):`` -- the operations inside run
    on IPU ``ipu_id`` (its pipeline stage too, under PipelinedExecution)."""

    def __init__(self, user_id: str | None = None, ipu_id: int | None = None) -> None:
        _check_id("user_id", user_id, str)
        _check_id("ipu_id", ipu_id, int)
        self._user_id, self._ipu_id = user_id, ipu_id
        self._previous: list[Any] = []

    @staticmethod
    def useAutoId() -> None:
        """Blocks without a ``user_id`` are numbered from 0 again."""
        _state["auto_id"] = 0

    @staticmethod
    def start(user_id: str | None = None, ipu_id: int | None = None) -> None:
        """A block from here on, as a ``BeginBlock`` starts one."""
        if _state["exporting"]:
            _enter(user_id, ipu_id)

    def __enter__(self) -> Block:
        if _state["exporting"]:
            self._previous.append(_current())
            _enter(self._user_id, self._ipu_id)
        return self

    def __exit__(self, *exc: object) -> None:
        if _state["exporting"] and self._previous:
            _restore(self._previous.pop())


class _BlockHook:
    """A forward pre-hook: the layer and everything after it run in the block."""

    def __init__(self, user_id: str | None, ipu_id: int | None) -> None:
        self.user_id, self.ipu_id = user_id, ipu_id

    def __call__(self, module: torch.nn.Module, args: Any) -> None:
        Block.start(self.user_id, self.ipu_id)

    def __repr__(self) -> str:
        return f"BeginBlock(user_id={self.user_id!r}, ipu_id={self.ipu_id!r})"


def BeginBlock(
    layer_to_call: torch.nn.Module | Callable,
    user_id: str | None = None,
    ipu_id: int | None = None,
) -> torch.nn.Module | Callable:
    """``model.layer = poptorch.BeginBlock(model.layer, ipu_id=1)``: the layer and every
    operation after it (until the next block) run on IPU ``ipu_id``. Returns the layer."""
    _check_id("user_id", user_id, str)
    _check_id("ipu_id", ipu_id, int)
    hook = _BlockHook(user_id, ipu_id)
    if not isinstance(layer_to_call, torch.nn.Module):
        if not callable(layer_to_call):
            raise EngineError(
                f"poptorch.BeginBlock: {layer_to_call!r} is neither a torch.nn.Module nor a "
                "function"
            )

        @functools.wraps(layer_to_call)
        def call(*args: Any, **kwargs: Any) -> Any:
            hook(None, args)  # type: ignore[arg-type]
            return layer_to_call(*args, **kwargs)

        return call
    hooks = layer_to_call._forward_pre_hooks.values()
    if any(isinstance(h, _BlockHook) for h in hooks):
        raise EngineError(
            f"poptorch.BeginBlock: {type(layer_to_call).__name__} has already been assigned "
            "to a block"
        )
    layer_to_call.register_forward_pre_hook(hook)
    return layer_to_call


def BlockFunction(
    user_id: str | None = None, ipu_id: int | None = None
) -> Callable[[Callable], Callable]:
    """``@poptorch.BlockFunction(ipu_id=1)``: the decorated function runs in the block."""
    _check_id("user_id", user_id, str)
    _check_id("ipu_id", ipu_id, int)

    def decorator(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with Block(user_id, ipu_id):
                return func(*args, **kwargs)

        return wrapper

    return decorator
