"""How numbers read in the application: bytes in binary units, counts with separators."""

from __future__ import annotations

UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB")


def format_bytes(value: float, exact: bool = False) -> str:
    """``36,900 bytes`` -> ``36.0 KiB``; ``exact`` adds the byte count in brackets."""
    value = float(value)
    magnitude, unit = abs(value), 0
    while magnitude >= 1024 and unit < len(UNITS) - 1:
        magnitude /= 1024
        unit += 1
    if unit == 0:
        return f"{int(value):,} bytes"
    text = f"{value / 1024**unit:,.1f} {UNITS[unit]}"
    return f"{text} ({int(value):,} bytes)" if exact else text


def format_count(value: float) -> str:
    return f"{int(value):,}"


def format_percent(value: float) -> str:
    return f"{value:.2f}%" if abs(value) < 10 else f"{value:.1f}%"


def format_seconds(seconds: float) -> str:
    """Seconds in the unit that keeps three significant figures readable."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(seconds) >= scale:
            return f"{seconds / scale:,.3g} {unit}"
    return f"{seconds / 1e-9:,.3g} ns"


def byte_unit_for(largest: float) -> tuple[int, str]:
    """The binary unit (divisor, name) an axis up to ``largest`` bytes is labelled in."""
    divisor, unit = 1, 0
    while largest >= 4 * 1024 * divisor and unit < len(UNITS) - 1:
        divisor *= 1024
        unit += 1
    return divisor, UNITS[unit]
