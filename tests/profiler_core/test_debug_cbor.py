"""debug.cbor version 2: debug contexts as typed columns over one string table. They round
trip, open without a Python object per context, and bad columns are named."""

from __future__ import annotations

import itertools
import json
import os

import cbor2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from profiler_core.analysis.debug_groups import debug_column, debug_groups
from profiler_core.errors import ReportError
from profiler_core.formats.debug_cbor import content_checksum, read_debug, write_debug
from profiler_core.model.lazy_columns import JsonColumn, StringColumn
from tests.fuzzing import DERANDOMIZE, byte_edits, edited, examples
from tests.profiler_core.factories import make_debug


def document_of(path):
    return cbor2.loads(path.read_bytes())


def rewrite(path, document):
    """``document`` as a writer would write it: with a checksum of its (edited) content, so
    the reader's own checks see the edit (test_debug_cbor_checksum.py damages files)."""
    if "crc32" in document:
        document["crc32"] = content_checksum(document)
    path.write_bytes(cbor2.dumps(document))


def assert_refused(path, problem):
    with pytest.raises(ReportError, match=problem) as caught:
        read_debug(path)
    assert caught.value.path == path
    return caught.value


def test_each_distinct_text_is_stored_once_and_columns_are_int32(debug_path, report):
    debug = report[1]
    document = document_of(debug_path)
    assert (document["formatMajor"], document["formatMinor"]) == (2, 1)
    assert document["count"] == len(debug.name) == 12
    data, ends = document["strings"]["data"], np.frombuffer(document["strings"]["offsets"], "<i8")
    texts = [data[a:b].decode() for a, b in itertools.pairwise(ends.tolist())]
    assert texts.count("poplin") == 1  # a layer shared by three contexts, once in the table
    assert len(texts) == len(set(texts))
    for name, column in document["columns"].items():
        assert len(column) == 4 * 12, name
    parents = np.frombuffer(document["columns"]["parent"], "<i4")
    assert parents.tolist() == debug.parent.tolist()


def test_reading_makes_no_string_until_one_is_asked_for(debug_path, report):
    read = read_debug(debug_path)
    assert isinstance(read.name, StringColumn) and isinstance(read.args, JsonColumn)
    assert read.name.table._decoded is None
    assert read.name[3] == report[1].name[3]  # one string decoded on its own
    assert read.name.table._decoded is None
    assert read.op.ids.dtype == np.int32
    assert read.args[1] == report[1].args[1]
    read.args[1]["alpha"] = "changed"  # each access is a fresh map
    assert read.args[1] == report[1].args[1]


def test_grouping_lazy_columns_gives_what_lists_give(debug_path, report):
    lists, columns = report[1], read_debug(debug_path)
    ids = np.array([-1, 0, 5, 11, 12, 99])
    for group_by in ("op", "layer", "name", "context"):
        expected, actual = debug_groups(lists, group_by), debug_groups(columns, group_by)
        assert actual.labels == expected.labels, group_by
        assert actual.group_of(ids).tolist() == expected.group_of(ids).tolist(), group_by
    assert debug_column(columns, "name", ids) == debug_column(lists, "name", ids)
    assert (
        debug_column(columns, "name", ids)[0] == "" and debug_column(columns, "name", ids)[-1] == ""
    )


def test_a_newer_minor_with_more_fields_is_read(debug_path):
    document = document_of(debug_path)
    document["formatMinor"] = 3
    document["columns"]["color"] = b"\x00" * 48
    rewrite(debug_path, document)
    assert len(read_debug(debug_path)) == 12


def _edit(debug_path, change):
    document = document_of(debug_path)
    change(document)
    rewrite(debug_path, document)
    return debug_path


def _set_int(document, column, index, value):
    values = np.frombuffer(document["columns"][column], "<i4").copy()
    values[index] = value
    document["columns"][column] = values.tobytes()


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d.update(count=-1), "count must be a number of contexts"),
        (lambda d: d.update(count="12"), "count must be a number of contexts"),
        (lambda d: d.update(count=13), r"columns.name has 48 bytes but 13 contexts need 52"),
        (lambda d: d["columns"].pop("op"), "columns lack op"),
        (lambda d: d["columns"].update(line=[1] * 12), "columns.line must be bytes, not list"),
        (lambda d: d.update(columns=[]), "columns must be a map, not list"),
        (lambda d: d.update(strings=None), "strings must be a map, not nothing"),
        (lambda d: d["strings"].update(offsets=b"\x00" * 7), "strings.offsets has 7 bytes"),
        (
            lambda d: d["strings"].update(offsets=d["strings"]["offsets"][:-8]),
            r"strings.offsets do not run from 0 up to the \d+ bytes",
        ),
        (
            lambda d: d["strings"].update(data=b"\xff" + d["strings"]["data"][1:]),
            "strings.data is not UTF-8 at byte 0",
        ),
        (lambda d: _set_int(d, "layer", 4, 10**6), r"columns.layer\[4\] is 1000000, not a string"),
        (lambda d: _set_int(d, "name", 0, -1), r"columns.name\[0\] is -1, not a string"),
        (lambda d: _set_int(d, "parent", 2, 12), r"columns.parent\[2\] is 12, not -1 or a context"),
        (lambda d: _set_int(d, "args", 2, -2), r"columns.args\[2\] is -2, not -1 or a string"),
    ],
)
def test_bad_columns_are_named(debug_path, change, problem):
    assert_refused(_edit(debug_path, change), problem)


def test_arguments_that_are_not_json_are_named_when_read(debug_path):
    def point_args_at_a_name(document):
        name_id = np.frombuffer(document["columns"]["name"], "<i4")[0]
        _set_int(document, "args", 1, name_id)

    debug = read_debug(_edit(debug_path, point_args_at_a_name))
    assert debug.args[0] == {}
    with pytest.raises(ReportError, match="arguments text .* is not JSON") as caught:
        debug.args[1]
    assert caught.value.path == debug_path


def test_a_big_report_round_trips_with_one_table_entry_per_distinct_text(tmp_path):
    count = 100_000
    debug = make_debug("big", count=count)
    path = tmp_path / "debug.cbor"
    write_debug(path, debug)
    read = read_debug(path)
    assert len(read) == count and read.name[count - 1] == debug.name[count - 1]
    assert read.line.tolist() == debug.line.tolist()
    texts = {t for name in ("name", "layer", "op", "api", "file") for t in getattr(debug, name)}
    texts |= {json.dumps(a, separators=(",", ":")) for a in debug.args if a}
    assert len(read.layer.table) == len(texts)
    assert list(read.args) == debug.args


@settings(
    max_examples=examples(200),
    derandomize=DERANDOMIZE,
    deadline=1000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(edits=byte_edits())
def test_fuzzed_columnar_files_raise_only_report_errors(debug_path, edits):
    path = debug_path.with_name("fuzzed.cbor")
    path.write_bytes(edited(debug_path.read_bytes(), edits))
    try:
        debug = read_debug(path)
        assert len(debug.parent) == len(debug.name) == len(debug.args)
        for name in ("name", "layer", "op", "api", "file"):
            list(getattr(debug, name))
        list(debug.args)
    except ReportError as error:
        assert error.path == path


def test_a_fifo_named_debug_cbor_is_refused_not_waited_on(tmp_path):
    path = tmp_path / "debug.cbor"
    os.mkfifo(path)
    assert_refused(path, "is not a regular file")


@pytest.mark.parametrize("group_by", ["op", "layer", "name", "context"])
def test_grouping_a_few_contexts_labels_them_as_grouping_all_does(debug_path, report, group_by):
    from profiler_core.analysis.debug_groups import groups_of

    ids = np.array([-1, 0, 5, 11, 12, 99, 5, 3])
    for debug in (report[1], read_debug(debug_path)):
        everything = debug_groups(debug, group_by)
        labels, groups = groups_of(debug, group_by, ids)
        expected = [everything.labels[g] for g in everything.group_of(ids).tolist()]
        assert [labels[g] for g in groups.tolist()] == expected
        assert labels == sorted(set(expected) | {""})


def test_the_string_table_utf8_check_reads_across_megabyte_chunks():
    from profiler_core.formats.debug_cbor import _UTF8_CHUNK, _check_utf8

    split = b"a" * (_UTF8_CHUNK - 1) + "é".encode() + b"b" * 10  # é straddles the chunks
    _check_utf8(split)
    bad = split + b"\xff" + b"c" * 5
    with pytest.raises(UnicodeDecodeError) as caught:
        _check_utf8(bad)
    assert caught.value.start == len(split)  # the offset in the whole table, not the chunk
