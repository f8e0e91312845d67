"""The lightweight-profiling tutorial's examples (resources/examples/lightweight_profiling.py)
for tests of every package: run in-process, with their report folders when asked."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

EXAMPLE = (
    Path(__file__).resolve().parents[1] / "resources" / "examples" / "lightweight_profiling.py"
)


@cache
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lightweight_profiling", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lightweight_report(directory: Path, name: str) -> Path:
    """Run example ``name`` (pipeline, growing, streamed) with autoReport into ``directory``;
    its report folder."""
    engine = example().run_example(name, str(directory))
    return Path(engine.report_folder)
