"""``popvision-cli ... --json`` run as a user runs it (a child process), its JSON parsed."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any


def popvision_cli(*argv: object) -> Any:
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", *map(str, argv), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
