"""Decoding CBOR a hostile file may hold: every tag refused (cbor2 would otherwise build
dates, regexes, sets, shared references that can make cycles...), nesting bounded, duplicate
keys and unhashable keys refused. debug.cbor and the executable cache's bundles use it."""

from __future__ import annotations

from typing import Any, BinaryIO

import cbor2

# Tags cbor2 decodes into Python objects: each gets a decoder that refuses it before it is
# decoded; every other tag reaches the tag hook, which refuses it too.
_KNOWN_TAGS = (0, 1, 2, 3, 4, 5, 25, 28, 29, 30, 35, 36, 37, 52, 54, 100, 256, 258, 260, 261)
_KNOWN_TAGS += (1004, 55799)


class RefusedTagError(ValueError):
    """A CBOR tag where none is allowed."""


def strict_decoder(stream: BinaryIO, what: str, max_depth: int) -> cbor2.CBORDecoder:
    """A decoder of ``stream`` that refuses tags (naming ``what`` was being read) and
    nesting deeper than ``max_depth``."""

    def refuse(tag: Any) -> Any:
        def refused(*_: object) -> Any:
            raise RefusedTagError(f"CBOR tag {tag} is not allowed in {what}")

        return refused

    def refuse_unknown(*args: object) -> Any:
        # cbor2 5 calls tag_hook(decoder, tag), cbor2 6 calls tag_hook(tag, immutable)
        tag = next((arg.tag for arg in args if isinstance(arg, cbor2.CBORTag)), "?")
        raise RefusedTagError(f"CBOR tag {tag} is not allowed in {what}")

    return cbor2.CBORDecoder(
        stream,
        tag_hook=refuse_unknown,
        semantic_decoders={tag: refuse(tag) for tag in _KNOWN_TAGS},
        max_depth=max_depth,
        allow_duplicate_keys=False,
        strict_hashable_types=True,
    )


def refusal_reason(error: BaseException) -> BaseException:
    """The refused tag behind a decoding ``error`` (cbor2 wraps it), else ``error``."""
    if isinstance(error, RefusedTagError):
        return error
    cause = error.__cause__
    return cause if isinstance(cause, RefusedTagError) else error
