"""profile.pop arrays are views onto the file's bytes (found by following the message's
pointers), equal to what pycapnp copies out, and the bytes are freed with the last user."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np

from profiler_core.formats.profile_pop import ProfileReader, read_profile, write_profile
from profiler_core.formats.profile_pop import writer as writer_module
from profiler_core.formats.profile_pop.locate import Locator
from profiler_core.formats.profile_pop.locate import pointer_slot as _slot
from profiler_core.formats.profile_pop.schema import profile_schema
from tests.profiler_core.factories import make_profile
from tests.profiler_core.test_profile_pop_round_trip import assert_same


def test_memory_per_tile_is_a_view_of_the_file_bytes_not_a_copy(profile_path):
    by_category = ProfileReader(profile_path).memory.by_category
    owner = by_category
    while isinstance(owner, np.ndarray):
        owner = owner.base
    assert isinstance(owner, bytes)
    assert len(owner) == profile_path.stat().st_size


def test_located_bytes_equal_what_pycapnp_copies_for_every_array(profile_path):
    opened = ProfileReader(profile_path)
    data = profile_path.read_bytes()
    schema = profile_schema()
    with schema.Profile.from_bytes(data, traversal_limit_in_words=len(data)) as root:
        for section, struct_name in [("graph", "Graph"), ("memory", "Memory")]:
            section_reader = getattr(root, section)
            where = opened._section_ref(section)
            for field in getattr(schema, struct_name).schema.fieldnames:
                if field in ("strings", "numEdges") or not section_reader._has(field):
                    continue  # not an Array, or a 1.1 Array this report does not carry
                array = opened._locator.child(where, _slot(struct_name, field))
                offset, length = opened._locator.data_span(array, _slot("Array", "data"))
                assert data[offset : offset + length] == getattr(section_reader, field).data
        runs = opened._locator.child(opened._root_ref, _slot("Profile.execution", "profile"))
        for index, run in enumerate(root.execution.profile.runs):
            element = opened._locator.element(runs, _slot("Execution", "runs"), index)
            ids = opened._locator.child(element, _slot("Run", "stepIds"))
            offset, length = opened._locator.data_span(ids, _slot("Array", "data"))
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


def test_dropping_readers_frees_the_file_bytes(tmp_path):
    profile = make_profile(2, num_ipus=2, tiles_per_ipu=1472, num_variables=200)
    path = tmp_path / "profile.pop"
    write_profile(path, profile)
    size = path.stat().st_size

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
    assert after - first < size  # five leaked files would be 5 x size
