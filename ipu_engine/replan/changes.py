"""The changes a what-if plans, as Insights names them: an operation's
``availableMemoryProportion``, ``type`` half for a set of tensors, a split over more
``ipus``, or a layer's ``pipelineStage``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ipu_engine.replan.decode import ReplanError

AMP = "availableMemoryProportion"
TYPE = "type"
IPUS = "ipus"
STAGE = "pipelineStage"
OPTIONS = (AMP, TYPE, IPUS, STAGE)


@dataclass(frozen=True)
class Change:
    """One change: ``option`` of ``operation`` (an op call's name, a layer, "" for the
    whole program) set to ``value``; ``tensors`` names the tensors a ``type`` change makes
    half."""

    operation: str
    option: str
    value: Any
    tensors: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def from_dict(cls, raw: Any) -> Change:
        """A change from its JSON form; a malformed one is a ``ReplanError`` saying why."""
        if not isinstance(raw, dict):
            raise ReplanError(f"a change must be a map, got {type(raw).__name__}")
        operation, option, value = raw.get("operation", ""), raw.get("option"), raw.get("value")
        tensors = raw.get("tensors", [])
        if not isinstance(operation, str) or option not in OPTIONS:
            raise ReplanError(f"change {raw!r:.120}: option must be one of {', '.join(OPTIONS)}")
        if not isinstance(tensors, list) or not all(isinstance(t, str) for t in tensors):
            raise ReplanError(f"change {raw!r:.120}: tensors must be a list of names")
        change = cls(operation, option, value, tuple(tensors))
        change.check()
        return change

    def check(self) -> None:
        value = self.value
        if self.option == AMP:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or not 0 < value <= 1:
                raise ReplanError(f"{AMP} of {self.operation!r} must be in (0, 1], got {value!r}")
        elif self.option == TYPE:
            if value != "half" or not self.tensors:
                raise ReplanError("a type change makes a list of tensors half: value 'half'")
        elif not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ReplanError(f"{self.option} must be a whole number >= 0, got {value!r}")
        if self.option == IPUS and value < 1:
            raise ReplanError(f"{IPUS} must be at least 1, got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        out = {"operation": self.operation, "option": self.option, "value": self.value}
        if self.tensors:
            out["tensors"] = list(self.tensors)
        return out

    def describe(self) -> str:
        if self.option == TYPE:
            return f"{len(self.tensors)} tensors in half"
        if self.option == IPUS:
            return f"the program over {self.value} IPUs"
        if self.option == STAGE:
            return f"{self.operation} in pipeline stage {self.value}"
        return f"{AMP} of {self.operation} = {self.value:g}"
