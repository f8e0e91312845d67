"""The tables' names and the order of reports' names, without pyarrow: what the CLI lists in
its help before any table is made (``schema.py`` gives their columns), and what the window
sorts a folder of reports by."""

from __future__ import annotations

TABLES = ("reports", "runs", "operations", "tile_memory", "liveness_steps", "program_steps")


def natural_key(text: str) -> list:
    """Sort key putting ``run-9`` before ``run-10``."""
    parts: list = []
    number = ""
    word = ""
    for char in text:
        if char.isdigit():
            if word:
                parts.append((1, word, 0))
                word = ""
            number += char
        else:
            if number:
                parts.append((0, "", int(number)))
                number = ""
            word += char
    if number:
        parts.append((0, "", int(number)))
    if word:
        parts.append((1, word, 0))
    return parts
