"""How trace times read: ns durations in readable units (``<1 µs`` below a microsecond),
and wall-clock times of day for an absolute time axis."""

from __future__ import annotations

import datetime as dt


def format_ns(ns: float) -> str:
    """A time in ns in the unit that keeps it readable (``1.234 ms``)."""
    magnitude = abs(ns)
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if magnitude >= scale:
            return f"{ns / scale:,.3f} {unit}"
    return f"{ns:,.0f} ns"


def format_duration(ns: float) -> str:
    """A duration; below a microsecond ``<1 µs (250 ns)``, as such spans are drawn 1 px wide."""
    if 0 <= ns < 1000:
        return f"<1 µs ({ns:,.0f} ns)"
    return format_ns(ns)


def format_clock(epoch_ns: float, step_s: float) -> str:
    """Epoch ns as a UTC time of day, with the decimals a tick step of ``step_s`` needs."""
    moment = dt.datetime.fromtimestamp(epoch_ns / 1e9, tz=dt.UTC)
    decimals = 0 if step_s >= 1 else 3 if step_s >= 1e-3 else 6
    text = moment.strftime("%H:%M:%S")
    if decimals:
        text += f"{moment.microsecond / 1e6:.{decimals}f}"[1:]
    return text


#: Longest label shown whole: a damaged or generated trace can hold a 100 MB label, which
#: text layout would measure glyph by glyph (minutes and gigabytes) before eliding it.
MAX_LABEL_CHARS = 200


def shown_label(text: str) -> str:
    """``text`` as the views draw it: cut to ``MAX_LABEL_CHARS`` with its length said."""
    if len(text) <= MAX_LABEL_CHARS:
        return text
    return f"{text[:MAX_LABEL_CHARS]}… ({len(text):,} characters)"
