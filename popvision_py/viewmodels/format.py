"""How numbers read in the application: bytes in binary units, counts with separators."""

from __future__ import annotations

UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB")
DECIMAL_UNITS = ("bytes", "kB", "MB", "GB", "TB")
BYTE_UNITS = ("KiB", "kB", "bytes")
"""The units a person can choose: binary (PopVision's default), decimal, or plain bytes."""


def _scale_of(units: str) -> tuple[int, tuple[str, ...]]:
    if units not in BYTE_UNITS:
        raise ValueError(f"units must be one of {', '.join(BYTE_UNITS)}, not {units!r}")
    return (1000, DECIMAL_UNITS) if units == "kB" else (1024, UNITS)


def format_bytes(value: float, exact: bool = False, units: str = "KiB") -> str:
    """``36,900 bytes`` -> ``36.0 KiB`` (``36.9 kB`` in decimal ``units``, or ``36,900 bytes``);
    ``exact`` adds the byte count in brackets."""
    value = float(value)
    base, names = _scale_of(units)
    magnitude, unit = abs(value), 0
    while units != "bytes" and magnitude >= base and unit < len(names) - 1:
        magnitude /= base
        unit += 1
    if unit == 0:
        return f"{int(value):,} bytes"
    text = f"{value / base**unit:,.1f} {names[unit]}"
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


def byte_unit_for(largest: float, units: str = "KiB") -> tuple[int, str]:
    """The unit (divisor, name) an axis up to ``largest`` bytes is labelled in."""
    base, names = _scale_of(units)
    divisor, unit = 1, 0
    while units != "bytes" and largest >= 4 * base * divisor and unit < len(names) - 1:
        divisor *= base
        unit += 1
    return divisor, names[unit]
