"""Layer names in a trace: a layer's weights are named by where it lives, so two layers
share a weight only when they are one layer object.

Within one name scope each layer object gets one name. An unnamed layer whose default
name (``linear``) is already another layer's takes the next free one (``linear_1``), as
Keras names its layers; a name the user chose is never changed, so a clash with it is an
error naming both layers -- sharing their weights silently would be a wrong answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ipu_engine.common.errors import GraphError

Scope = tuple[str, ...]


@dataclass
class LayerNames:
    """Which layer object holds each name in each scope of one trace."""

    owners: dict[tuple[Scope, str], tuple[Any, str]] = field(default_factory=dict)
    chosen: dict[tuple[Scope, int], str] = field(default_factory=dict)

    def claim(self, layer: Any, scope: Scope, where: str) -> str:
        """The name ``layer`` has in ``scope``; ``where`` is the user's line calling it.

        An unnamed layer that has to be renamed keeps its new name (``layer.name``), so
        the next trace of the same model gives every layer the same name again.
        """
        key = (scope, id(layer))
        if key in self.chosen:
            return self.chosen[key]
        name = layer.name
        owner = self.owners.get((scope, name))
        if owner is not None and owner[0] is not layer:
            if layer.named or owner[0].named:
                raise GraphError(_clash_text(layer, where, owner, scope, name))
            name = self._free_name(scope, name)
            layer.name = name
        self.owners[(scope, name)] = (layer, where)
        self.chosen[key] = name
        return name

    def _free_name(self, scope: Scope, name: str) -> str:
        n = 1
        while (scope, f"{name}_{n}") in self.owners:
            n += 1
        return f"{name}_{n}"


def _clash_text(layer: Any, where: str, owner: tuple[Any, str], scope: Scope, name: str) -> str:
    path = "/".join((*scope, name))
    other, other_where = owner
    return (
        f"{where}: two different layers are called {path!r}: {other!r} first called at "
        f"{other_where} and {layer!r} here; they would share one set of weights. Give them "
        "different names, or call the same layer object twice to share its weights"
    )
