"""Array bundles (the executable cache's file format): arrays and a description come back
as written; damaged and crafted files are a ReportError naming the file and the problem."""

from __future__ import annotations

import hashlib

import cbor2
import numpy as np
import pytest

from profiler_core.errors import FormatVersionError, ReportError
from profiler_core.formats.array_bundle import MAGIC, encode_bundle, read_bundle, write_bundle

KIND = "test bundle"
ARRAYS = {
    "a/int64": np.arange(10, dtype=np.int64).reshape(2, 5),
    "b/int32": np.array([-1, 7, 2**31 - 1], dtype=np.int32),
    "c/bool": np.array([True, False, True]),
    "d/float": np.linspace(0, 1, 7, dtype=np.float32),
    "e/empty": np.zeros((0, 3), dtype=np.int64),
    "f/big-endian": np.array([1, 256], dtype=">i4"),
}


def test_arrays_and_description_come_back_as_written(tmp_path):
    path = tmp_path / "x.bundle"
    write_bundle(path, KIND, (1, 3), {"key": "k", "n": [1, 2]}, ARRAYS)
    bundle = read_bundle(path, KIND, 1, 10**6)
    assert (bundle.kind, bundle.format_major, bundle.format_minor) == (KIND, 1, 3)
    assert bundle.meta == {"key": "k", "n": [1, 2]}
    assert bundle.arrays.keys() == ARRAYS.keys()
    for name, array in ARRAYS.items():
        got = bundle.arrays[name]
        assert got.shape == array.shape and np.array_equal(got, array), name
        assert got.dtype == array.dtype.newbyteorder("<"), name  # stored little-endian
        assert not got.flags.writeable  # a view of the file's bytes
        assert got.ctypes.data % 8 == 0 or got.nbytes == 0  # each array 8-byte aligned


def _seal(header: dict, data: bytes = b"") -> bytes:
    """A bundle with ``header`` and a right checksum: what a crafted file looks like."""
    raw = cbor2.dumps(header)
    body = len(raw).to_bytes(8, "little") + raw + data
    return MAGIC + hashlib.blake2b(body, digest_size=32).digest() + body


def _header(**change) -> dict:
    base = {"kind": KIND, "formatMajor": 1, "formatMinor": 0, "meta": None, "arrays": []}
    return base | change


GOOD_ROW = ["x", "<i8", [2], 0, 16]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "truncated: 0 bytes"),
        (b"PVBUNDLX" + bytes(60), "wrong magic"),
        (encode_bundle(KIND, (1, 0), None, ARRAYS)[:-3], "checksum mismatch"),
        (_seal(_header(kind="another")), "holds 'another', not 'test bundle'"),
        (_seal(_header(formatMajor=2)), "format version 2.0; this reader knows version 1"),
        (_seal(_header(formatMajor="1")), "no format version"),
        (_seal(_header(arrays=None)), "no array table"),
        (_seal(_header(arrays=[["x", "|O", [1], 0, 8]]), bytes(8)), "dtype '|O' is not allowed"),
        (_seal(_header(arrays=[["x", ">i8", [1], 0, 8]]), bytes(8)), "dtype '>i8' is not"),
        (_seal(_header(arrays=[["x", "<i8", [3], 0, 16]]), bytes(16)), "16 bytes do not fit"),
        (_seal(_header(arrays=[["x", "<i8", [-2], 0, 16]]), bytes(16)), "is not a shape"),
        (_seal(_header(arrays=[GOOD_ROW]), bytes(8)), "runs past the end"),
        (_seal(_header(arrays=[GOOD_ROW, GOOD_ROW]), bytes(16)), "'x' is not a new text"),
        (_seal(_header(arrays=[["x", "|b1", [2], 0, 2]]), b"\x01\x07"), "booleans other than"),
        (_seal(_header(arrays=[["x", "<i8", [1], -8, 8]]), bytes(8)), "bad offset or size"),
        (_seal(_header(meta=cbor2.CBORTag(1, 0))), "CBOR tag 1 is not allowed in a bundle"),
        (_seal(_header(meta=cbor2.CBORTag(9999, 0))), "CBOR tag 9999 is not allowed in a bundle"),
        (_seal(_header(meta=[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]])), "nesting depth"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_damaged_and_crafted_files_are_refused_naming_the_file(tmp_path, content, problem):
    path = tmp_path / "bad.bundle"
    path.write_bytes(content)
    with pytest.raises(ReportError, match=problem) as caught:
        read_bundle(path, KIND, 1, 10**6)
    assert str(caught.value).startswith(f"{path}: ")


def test_a_newer_major_version_is_a_format_version_error(tmp_path):
    path = tmp_path / "new.bundle"
    write_bundle(path, KIND, (2, 0), None, {})
    with pytest.raises(FormatVersionError):
        read_bundle(path, KIND, 1, 10**6)


def test_oversized_files_and_folders_are_refused_before_reading(tmp_path):
    path = tmp_path / "big.bundle"
    write_bundle(path, KIND, (1, 0), None, ARRAYS)
    with pytest.raises(ReportError, match=r"over the 100 a bundle may have"):
        read_bundle(path, KIND, 1, 100)
    with pytest.raises(ReportError, match="it is a folder"):
        read_bundle(tmp_path, KIND, 1, 10**6)
    with pytest.raises(ReportError, match="cannot read"):
        read_bundle(tmp_path / "missing", KIND, 1, 10**6)


def test_object_arrays_cannot_be_written():
    with pytest.raises(ValueError, match="array 'o': dtype object cannot go into a bundle"):
        encode_bundle(KIND, (1, 0), None, {"o": np.array([{}], dtype=object)})
