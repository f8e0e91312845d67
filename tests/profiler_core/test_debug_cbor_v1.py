"""debug.cbor version 1 (a CBOR list per column), as earlier popvision-py wrote it: still read
into the same columns; bad, hostile or foreign files raise only ReportError naming the file.
Hostile bytes that no version can hold (tags, nesting, truncation) are tested here too."""

from __future__ import annotations

import datetime
import re

import cbor2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from profiler_core.errors import FormatVersionError, ReportError
from profiler_core.formats import debug_cbor
from profiler_core.formats.debug_cbor import check_pair, read_debug, write_debug
from profiler_core.model.profile import DebugData
from tests.fuzzing import DERANDOMIZE, byte_edits, edited, examples
from tests.profiler_core.factories import make_debug, make_report


def assert_same_debug(expected: DebugData, actual: DebugData) -> None:
    assert actual.report_id == expected.report_id
    for name in ("name", "layer", "op", "api", "file", "args"):
        assert getattr(actual, name) == getattr(expected, name), name
    for name in ("parent", "line"):
        assert getattr(actual, name).dtype == np.int32, name
        assert np.array_equal(getattr(actual, name), getattr(expected, name)), name


@pytest.fixture
def debug_path(tmp_path, report):
    """Seed 7's contexts written in format 1."""
    path = tmp_path / "debug.cbor"
    write_debug(path, report[1], format_major=1)
    return path


def document_of(path):
    return cbor2.loads(path.read_bytes())


def rewrite(path, document, **options):
    path.write_bytes(cbor2.dumps(document, **options))


def assert_refused(path, problem):
    with pytest.raises(ReportError, match=problem) as caught:
        read_debug(path)
    assert caught.value.path == path
    assert str(caught.value).startswith(f"{path}: ")
    return caught.value


@pytest.mark.parametrize("major", [1, 2])
@pytest.mark.parametrize("count", [0, 1, 12, 500])
def test_debug_contexts_round_trip_exactly(tmp_path, count, major):
    debug = make_debug("report-x", seed=count, count=count)
    write_debug(tmp_path / "debug.cbor", debug, format_major=major)
    assert_same_debug(debug, read_debug(tmp_path / "debug.cbor"))


def test_the_file_is_one_cbor_map_with_magic_version_and_columns(debug_path, report):
    document = document_of(debug_path)
    assert document["magic"] == "popvision-py debug"
    assert (document["formatMajor"], document["formatMinor"]) == (1, 0)
    assert document["reportId"] == report[0].header.report_id
    assert document["contexts"]["parent"] == report[1].parent.tolist()
    assert set(document["contexts"]) == set(debug_cbor.COLUMNS)


def test_check_pair_accepts_the_matching_profile_and_names_both_ids_otherwise(debug_path):
    profile, debug = make_report(7)
    check_pair(profile.header, read_debug(debug_path))  # no error: same report
    other = make_report(8)[0].header
    with pytest.raises(ReportError) as caught:
        check_pair(other, debug, debug_path)
    message = str(caught.value)
    assert message.startswith(f"{debug_path}: debug.cbor does not belong to this profile.pop")
    assert debug.report_id in message and other.report_id in message


def test_a_newer_major_version_is_refused_and_a_newer_minor_is_read(debug_path):
    document = document_of(debug_path)
    document["formatMajor"], document["formatMinor"] = 3, 0
    rewrite(debug_path, document)
    with pytest.raises(FormatVersionError, match="debug format 3.0.*reads formats 1 and 2"):
        read_debug(debug_path)
    document["formatMajor"], document["formatMinor"] = 1, 4
    document["a field from 1.4"] = [1, 2]
    rewrite(debug_path, document)
    assert len(read_debug(debug_path)) == 12


def with_context_column(debug_path, name, value):
    document = document_of(debug_path)
    document["contexts"][name] = value
    rewrite(debug_path, document)
    return debug_path


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("name", ["a"] * 11, r"contexts.parent has 12 entries but contexts.name has 11: every"),
        ("line", [1] * 13, r"contexts.line has 13 entries but contexts.name has 12"),
        ("layer", "popops", r"contexts.layer must be a list, not str"),
        ("op", [*["x"] * 11, 5], r"contexts.op\[11\] is 5, not a string"),
        ("parent", [-1, "0", *[0] * 10], r"contexts.parent\[1\] is '0', not a 32-bit integer"),
        ("parent", [-1, True, *[0] * 10], r"contexts.parent\[1\] is True, not a 32-bit"),
        ("parent", [-1, 2**31, *[0] * 10], r"contexts.parent\[1\] is 2147483648, not a 32"),
        ("parent", [-1, 12, *[0] * 10], r"contexts.parent\[1\] is 12, not -1 or a context"),
        ("line", [0.5] * 12, r"contexts.line\[0\] is 0.5, not a 32-bit integer"),
        ("args", [[1], *[{}] * 11], r"contexts.args\[0\] must be a map, not list"),
        (
            "args",
            [{"x": b"raw"}, *[{}] * 11],
            r"contexts.args\[0\]: bytes is not a JSON-like value",
        ),
    ],
)
def test_columns_of_wrong_type_or_length_are_named(debug_path, name, value, problem):
    assert_refused(with_context_column(debug_path, name, value), problem)


def test_a_missing_column_or_header_field_is_named(debug_path):
    document = document_of(debug_path)
    del document["contexts"]["api"], document["contexts"]["file"]
    rewrite(debug_path, document)
    assert_refused(debug_path, "contexts lack the column.s. api, file")
    rewrite(debug_path, {"magic": "popvision-py debug", "formatMajor": 1, "formatMinor": 0})
    assert_refused(debug_path, "reportId must be a string, not nothing")
    rewrite(debug_path, {"magic": "something else", "formatMajor": 1})
    assert_refused(debug_path, "not a popvision-py debug.cbor .magic 'something else'")
    rewrite(debug_path, [1, 2, 3])
    assert_refused(debug_path, "not a popvision-py debug.cbor")


@pytest.mark.parametrize(
    ("value", "tag"),
    [
        (datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone.utc), "0"),
        (re.compile("(a+)+$"), "35"),
        (frozenset({1, 2}), "258"),
        (cbor2.CBORTag(4242, "mine"), "4242"),
        (10**30, "2"),
    ],
)
def test_cbor_tags_are_refused_before_they_become_python_objects(debug_path, value, tag):
    with_context_column(debug_path, "args", [{"x": value}, *[{}] * 11])
    assert_refused(debug_path, f"CBOR tag {tag} is not allowed")


def test_shared_references_that_make_a_cycle_are_refused(debug_path):
    cycle = []
    cycle.append(cycle)
    document = document_of(debug_path)
    document["contexts"]["args"][0] = {"x": cycle}
    rewrite(debug_path, document, value_sharing=True)
    assert_refused(debug_path, "CBOR tag 28 is not allowed")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "is empty"),
        (b"\x81" * 100_000 + b"\x00", "nesting depth"),
        (b"\x9f" * 5_000, "nesting depth"),
        (b"\x9b" + (2**62).to_bytes(8, "big"), "truncated"),
        (b"\x5b" + (2**62).to_bytes(8, "big"), "truncated"),
        (b"\xa2\x61a\x01\x61a\x02", "not a valid debug.cbor: .*[Dd]uplicate"),
        (b"\xa1\x01\x02", "not a valid debug.cbor"),
        (b"\x62\xff\xfe", "not a valid debug.cbor"),
        (b"debug.cbor as a text file\n", "not a popvision-py debug.cbor"),
    ],
)
def test_hostile_and_foreign_bytes_are_refused(tmp_path, content, problem):
    path = tmp_path / "debug.cbor"
    path.write_bytes(content)
    assert_refused(path, problem)


def test_truncated_files_and_trailing_bytes_are_refused(tmp_path, debug_path):
    data = debug_path.read_bytes()
    cut = tmp_path / "cut.cbor"
    for end in range(1, len(data), 13):
        cut.write_bytes(data[:end])
        assert_refused(cut, "truncated")
    cut.write_bytes(data + b"\x00")
    assert_refused(cut, "1 bytes after its CBOR map")


def test_a_file_over_the_size_limit_is_refused_before_reading(debug_path, monkeypatch):
    monkeypatch.setattr(debug_cbor, "MAX_DEBUG_BYTES", 100)
    assert_refused(debug_path, r"over the 100 bytes a debug.cbor may have .*MAX_DEBUG_BYTES")


def test_a_missing_file_is_refused(tmp_path):
    assert_refused(tmp_path / "debug.cbor", "No such file")


def test_the_writer_refuses_inconsistent_contexts_and_leaves_the_old_file(debug_path):
    old = debug_path.read_bytes()
    debug = make_debug("r", count=4)
    debug.line = debug.line[:3]
    with pytest.raises(ReportError, match="cannot write: contexts.line has 3 entries"):
        write_debug(debug_path, debug)
    debug = make_debug("r", count=4)
    debug.args[0] = {"when": datetime.date(2024, 1, 1)}
    with pytest.raises(ReportError, match=r"args\[0\]: date is not a JSON-like value"):
        write_debug(debug_path, debug)
    assert debug_path.read_bytes() == old


def test_the_writer_names_an_unwritable_directory(tmp_path):
    with pytest.raises(ReportError, match="No such file or directory") as caught:
        write_debug(tmp_path / "missing" / "debug.cbor", make_debug("r"))
    assert caught.value.path == tmp_path / "missing" / "debug.cbor"


@settings(
    max_examples=examples(200),
    derandomize=DERANDOMIZE,
    deadline=1000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(edits=byte_edits())
def test_fuzzed_debug_files_raise_only_report_errors(debug_path, edits):
    path = debug_path.with_name("fuzzed.cbor")
    path.write_bytes(edited(debug_path.read_bytes(), edits))
    try:
        debug = read_debug(path)
    except ReportError as error:
        assert error.path == path
    else:
        assert len(debug.parent) == len(debug.name) == len(debug.args)
