"""What a libpva attribute we do not model does: it raises ``AttributeError`` saying so and
naming the nearest attribute we cover, never a silent zero (an unknown name gets the
nearest covered name as a hint too)."""

from __future__ import annotations

import difflib
from functools import cached_property
from typing import Any, ClassVar, NoReturn


def not_modelled(owner: str, name: str, why: str, nearest: str) -> NoReturn:
    raise AttributeError(
        f"{owner}.{name} is libpva's but popvision-py does not model it: {why}; "
        f"the nearest covered attribute is {nearest}"
    )


class PvaObject:
    """Base of the pva objects: ``NOT_MODELLED`` maps libpva attribute names this object
    lacks to (why, nearest covered attribute)."""

    __slots__ = ()
    NOT_MODELLED: ClassVar[dict[str, tuple[str, str]]] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        owner = type(self).__name__
        attr = getattr(type(self), name, None)
        if isinstance(attr, (property, cached_property)):
            # the property itself raised AttributeError (e.g. not_modelled): raise it again
            # rather than let Python's fallback to __getattr__ hide its message
            return attr.__get__(self, type(self))
        entry = type(self).NOT_MODELLED.get(name)
        if entry is not None:
            not_modelled(owner, name, *entry)
        covered = [n for n in dir(self) if not n.startswith("_") and n != "NOT_MODELLED"]
        near = difflib.get_close_matches(name, covered, n=1, cutoff=0.5)
        hint = f"; the nearest covered attribute is {near[0]}" if near else ""
        raise AttributeError(f"{owner} has no attribute {name!r}{hint}")
