"""Property: Chrome JSON whose events hold any JSON values (huge, negative, wrong types,
missing keys) is read or refused with a ReportError naming the file -- nothing else."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiler_core.errors import ReportError
from profiler_core.trace import import_chrome_file
from tests.fuzzing import DERANDOMIZE, examples

numbers = st.one_of(
    st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.sampled_from([10**400, -1])
)
values = st.one_of(numbers, st.text(max_size=5), st.none(), st.booleans(),
                   st.lists(st.integers(), max_size=2))  # fmt: skip
keys = st.sampled_from(["ph", "ts", "dur", "pid", "tid", "name", "cat", "args", "s", "id"])
events = st.dictionaries(
    keys,
    st.one_of(values, st.sampled_from(["X", "B", "E", "i", "I", "C", "M"]),
              st.dictionaries(st.sampled_from(["name", "v", "pvti_open"]), values)),
)  # fmt: skip


def _text(value: object) -> str:
    # json.dumps refuses ints past 4,300 digits only when parsing; inf is not JSON.
    return json.dumps(value, allow_nan=False)


@settings(
    max_examples=examples(150), derandomize=DERANDOMIZE, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
@given(st.lists(events, max_size=8), st.booleans())
def test_any_chrome_events_read_or_raise_report_error(evs: list[dict], wrapped: bool) -> None:
    doc = {"traceEvents": evs, "otherData": {"pvti_origin_wall_ns": 2**70}} if wrapped else evs
    try:
        text = _text(doc)
    except ValueError:
        return  # floats outside JSON (inf) cannot be written as JSON at all
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzzed.json"
        path.write_text(text)
        try:
            trace = import_chrome_file(path)
        except ReportError as err:
            assert path.name in str(err)
        else:
            trace.time_range()
