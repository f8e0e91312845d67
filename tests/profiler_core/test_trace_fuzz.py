"""Fuzzing: randomly damaged real .pvti and Chrome JSON files raise ReportError or read."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiler_core.errors import ReportError
from profiler_core.trace import export_chrome, open_trace
from tests.fuzzing import DERANDOMIZE, examples
from tests.profiler_core.pvti_samples import write_small_trace

_SAMPLES: dict[str, bytes] = {}


def sample(kind: str) -> bytes:
    """The bytes of one real small trace of ``kind`` ("pvti" or "json"), made once."""
    if kind not in _SAMPLES:
        with tempfile.TemporaryDirectory() as tmp:
            path = write_small_trace(Path(tmp)).path
            _SAMPLES["pvti"] = path.read_bytes()
            _SAMPLES["json"] = export_chrome(open_trace(path), Path(tmp) / "t.json").read_bytes()
    return _SAMPLES[kind]


mutations = st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)),
                     min_size=1, max_size=12)  # fmt: skip


def damaged(data: bytes, edits: list[tuple[float, int]], cut: float | None) -> bytes:
    out = bytearray(data)
    for where, value in edits:
        out[int(where * len(out))] = value
    return bytes(out[: int(cut * len(out))] if cut is not None else out)


@pytest.mark.parametrize(("kind", "suffix"), [("pvti", ".pvti"), ("json", ".json")])
@settings(
    max_examples=examples(150),
    derandomize=DERANDOMIZE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(edits=mutations, cut=st.one_of(st.none(), st.floats(0, 1)))
def test_damaged_traces_only_ever_raise_report_error(
    kind: str, suffix: str, edits: list[tuple[float, int]], cut: float | None
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"fuzzed{suffix}"
        path.write_bytes(damaged(sample(kind), edits, cut))
        try:
            trace = open_trace(path)
        except ReportError as err:
            assert path.name in str(err)
        else:
            trace.time_range()
            for thread in range(len(trace.threads)):
                trace.events_in_range(thread, *trace.time_range())
