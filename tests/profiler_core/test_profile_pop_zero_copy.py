"""profile.pop arrays are views onto the file's bytes (found by following the message's
pointers), equal to what pycapnp copies out, and the bytes are freed with the last user."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import mmap
import os
import tracemalloc
import weakref
from pathlib import Path

import numpy as np
import pytest

from profiler_core.errors import ReportError
from profiler_core.formats.profile_pop import (
    ProfileReader,
    read_profile,
    section_arrays,
    write_profile,
)
from profiler_core.formats.profile_pop import writer as writer_module
from profiler_core.formats.profile_pop.locate import Locator
from profiler_core.formats.profile_pop.locate import pointer_slot as _slot
from profiler_core.formats.profile_pop.schema import profile_schema
from tests.profiler_core.factories import make_profile
from tests.profiler_core.test_profile_pop_round_trip import assert_same


@pytest.mark.parametrize("on_demand", [False, True])
def test_memory_per_tile_is_a_view_of_the_file_bytes_not_a_copy(profile_path, on_demand):
    by_category = ProfileReader(profile_path, on_demand).memory.by_category
    owner = by_category
    while isinstance(owner, np.ndarray):
        owner = owner.base
    if isinstance(owner, memoryview):
        owner = owner.obj
    # on demand, the bytes are anonymous memory whose pages can be given back
    assert isinstance(owner, mmap.mmap if on_demand else bytes)
    assert len(owner) == profile_path.stat().st_size


def test_located_bytes_equal_what_pycapnp_copies_for_every_array(profile_path):
    opened = ProfileReader(profile_path)
    data = profile_path.read_bytes()
    schema = profile_schema()
    with schema.Profile.from_bytes(data, traversal_limit_in_words=len(data)) as root:
        for section, struct_name in [("graph", "Graph"), ("memory", "Memory")]:
            section_reader = getattr(root, section)
            where = opened._arrays.section_ref(section)
            for field in getattr(schema, struct_name).schema.fieldnames:
                if field in ("strings", "numEdges") or not section_reader._has(field):
                    continue  # not an Array, or a 1.1 Array this report does not carry
                array = opened._arrays._locator.child(where, _slot(struct_name, field))
                offset, length = opened._arrays._locator.data_span(array, _slot("Array", "data"))
                assert data[offset : offset + length] == getattr(section_reader, field).data
        runs = opened._arrays.execution_ref()
        for index, run in enumerate(root.execution.profile.runs):
            element = opened._arrays.run_ref(runs, index)
            ids = opened._arrays._locator.child(element, _slot("Run", "stepIds"))
            offset, length = opened._arrays._locator.data_span(ids, _slot("Array", "data"))
            assert data[offset : offset + length] == run.stepIds.data


def test_without_located_spans_pycapnp_copies_give_the_same_profile(
    profile_path, report, monkeypatch
):
    monkeypatch.setattr(Locator, "data_span", lambda self, parent, pointer: None)
    assert_same(report[0], read_profile(profile_path))


def test_a_message_of_many_segments_reads_the_same(tmp_path, monkeypatch):
    """Far pointers between segments are left to pycapnp; the result is identical."""
    profile = make_profile(6, num_variables=40)
    monkeypatch.setattr(writer_module, "_estimate_words", lambda profile: 32)
    write_profile(tmp_path / "profile.pop", profile)
    segments = int.from_bytes((tmp_path / "profile.pop").read_bytes()[:4], "little") + 1
    assert segments > 1
    assert_same(profile, read_profile(tmp_path / "profile.pop"))


def _open_descriptors(path: Path) -> int:
    """How many of this process's file descriptors are open on ``path``."""
    found = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile (the listing's own descriptor)
            found += os.readlink(f"/proc/self/fd/{fd}") == str(path)
    return found


def test_dropping_readers_frees_the_file_bytes_and_closes_the_file(tmp_path):
    profile = make_profile(2, num_ipus=2, tiles_per_ipu=1472, num_variables=200)
    path = tmp_path / "profile.pop"
    write_profile(path, profile)

    reader = ProfileReader(path, on_demand=True)
    held = weakref.ref(reader._bytes.data)
    assert _open_descriptors(path) == 1  # kept open to read unread sections later
    by_category = reader.memory.by_category
    reader.close()
    assert _open_descriptors(path) == 0
    assert held() is not None  # an array handed out keeps its bytes
    assert by_category.sum() == profile.memory.by_category.sum()

    unclosed = ProfileReader(path, on_demand=True)
    unclosed_bytes = weakref.ref(unclosed._bytes.data)
    del reader, by_category, unclosed
    gc.collect()
    assert held() is None and unclosed_bytes() is None
    assert _open_descriptors(path) == 0  # a reader dropped without close() closes too


def _resident_bytes(buffer: mmap.mmap) -> int:
    """How many bytes of ``buffer`` are in memory: the Rss of its mapping in smaps."""
    address = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    lines = Path("/proc/self/smaps").read_text().splitlines()
    for at, line in enumerate(lines):
        start = line.split("-", 1)[0]
        if (
            " " in line
            and all(c in "0123456789abcdef" for c in start)
            and int(start, 16) == address
        ):
            rss = next(x for x in lines[at + 1 :] if x.startswith("Rss:"))
            return int(rss.split()[1]) * 1024
    raise AssertionError("the buffer's mapping is not in /proc/self/smaps")


def test_sections_not_decoded_hold_no_memory_until_they_are(tmp_path):
    profile = make_profile(3, num_ipus=4, tiles_per_ipu=1472, num_variables=20_000)
    path = tmp_path / "profile.pop"
    write_profile(path, profile)
    reader = ProfileReader(path, on_demand=True)
    spans = reader._arrays.array_spans("graph", reader._root)
    graph_bytes = sum(length for _, length in spans)
    assert graph_bytes > 1_000_000
    size = path.stat().st_size
    assert _resident_bytes(reader._bytes.data) < size - graph_bytes  # given back after opening
    graph = reader.graph
    assert _resident_bytes(reader._bytes.data) >= graph_bytes  # read again when decoded...
    assert np.array_equal(graph.var_bytes, profile.graph.var_bytes)
    assert_same(profile, reader.to_profile())  # ...every section equal to what was written


def test_a_file_cut_in_place_after_opening_names_the_section_that_needed_it(tmp_path):
    profile = make_profile(3, num_ipus=4, tiles_per_ipu=1472, num_variables=20_000)
    path = tmp_path / "profile.pop"
    write_profile(path, profile)
    reader = ProfileReader(path, on_demand=True)
    memory = reader.memory
    with open(path, "r+b") as file:  # rewritten in place, not replaced as the writers do
        file.truncate(1000)
    with pytest.raises(ReportError, match=r"profile\.pop.*section 'graph'.*cut to"):
        _ = reader.graph
    assert memory.by_category.sum() == profile.memory.by_category.sum()  # read before: kept


def test_a_report_replaced_after_opening_still_reads_the_opened_one(tmp_path):
    first = make_profile(3, num_variables=300)
    second = make_profile(4, num_variables=500)
    path = tmp_path / "profile.pop"
    write_profile(path, first)
    reader = ProfileReader(path, on_demand=True)
    write_profile(path, second)  # atomic: a new file under the same name
    assert_same(first, reader.to_profile())


def test_dropping_readers_that_hold_the_whole_file_frees_it(tmp_path):
    profile = make_profile(2, num_ipus=2, tiles_per_ipu=1472, num_variables=200)
    path = tmp_path / "profile.pop"
    write_profile(path, profile)

    def open_and_drop():
        reader = ProfileReader(path)
        reader.to_profile()
        reader.close()

    tracemalloc.start()
    try:
        open_and_drop()
        gc.collect()
        first, _ = tracemalloc.get_traced_memory()
        for _ in range(5):
            open_and_drop()
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - first < path.stat().st_size  # five leaked files would be 5 x its size
    assert _open_descriptors(path) == 0


def test_a_run_list_longer_than_the_file_is_not_walked_when_opening_on_demand(
    tmp_path, monkeypatch
):
    """A list of empty structs can claim 2^29 runs in a few bytes: opening on demand keeps
    the runs' pages instead of walking them one by one (the decode then refuses them)."""
    profile_path = tmp_path / "profile.pop"
    write_profile(profile_path, make_profile(3, num_steps=2000))  # runs of pages of steps
    honest = ProfileReader(profile_path, on_demand=True)
    assert honest._bytes._released.get("execution")  # an honest file's runs are given back

    walked = []
    real_element = Locator.element

    def counting_element(self, parent, pointer, index):
        walked.append(index)
        if len(walked) > 10_000:  # fail at once rather than walk 2^29 runs for minutes
            raise AssertionError("opening walks the claimed runs one by one")
        return real_element(self, parent, pointer, index)

    monkeypatch.setattr(Locator, "element", counting_element)
    monkeypatch.setattr(section_arrays, "_count_runs", lambda root: 2**29 - 1)
    opened = ProfileReader(profile_path, on_demand=True)
    assert walked == []
    assert "execution" not in opened._bytes._released  # kept: read from memory as a whole
    assert opened.graph.num_variables > 0
