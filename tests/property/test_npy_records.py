"""``load_npy`` reads what ``np.save`` wrote exactly as ``np.load(allow_pickle=False)``
does: the same dtype, shape, values and a writable array, the stream left at the next
record, whatever the header (plain ones on the quick path, the rest through numpy);
and it refuses what numpy refuses (an object array, a truncated record)."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from memhtml.contracts.array_records import load_npy

_DTYPES = st.one_of(
    hnp.integer_dtypes(), hnp.unsigned_integer_dtypes(), hnp.floating_dtypes(),
    hnp.complex_number_dtypes(), hnp.boolean_dtypes(), hnp.byte_string_dtypes(),
    hnp.unicode_string_dtypes(), hnp.datetime64_dtypes())
_ARRAYS = st.builds(
    lambda array, fortran: np.asfortranarray(array) if fortran else array,
    hnp.arrays(_DTYPES, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)),
    st.booleans())


@given(st.lists(_ARRAYS, min_size=1, max_size=4))
def test_load_npy_reads_every_record_as_numpy_does(arrays: list[np.ndarray]) -> None:
    stream = io.BytesIO()
    for array in arrays:
        np.save(stream, array, allow_pickle=False)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "records.npy"
        path.write_bytes(stream.getvalue())
        file = path.open("rb")  # a file under the stream: read with np.fromfile
        for source in (stream, file):
            for reader in (load_npy, lambda s: np.load(s, allow_pickle=False)):
                source.seek(0)
                for array in arrays:
                    read = reader(source)
                    assert read.dtype == array.dtype
                    assert read.shape == array.shape
                    assert read.tobytes() == np.ascontiguousarray(array).tobytes()
                    assert read.flags.writeable
                assert source.read(1) == b""
        file.close()


def test_an_object_array_is_refused_as_numpy_refuses_it() -> None:
    stream = io.BytesIO()
    np.save(stream, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    stream.seek(0)
    with pytest.raises(ValueError, match="allow_pickle"):
        load_npy(stream)


@given(st.integers(min_value=1, max_value=39))
def test_a_truncated_record_is_refused(cut: int) -> None:
    stream = io.BytesIO()
    np.save(stream, np.arange(10, dtype="<u4"))
    data = stream.getvalue()
    with pytest.raises(ValueError, match="truncated"):
        load_npy(io.BytesIO(data[:-cut]))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cut.npy"
        path.write_bytes(data[:-cut])
        with path.open("rb") as file, pytest.raises(ValueError, match="truncated"):
            load_npy(file)


@pytest.mark.parametrize("descr", ["<u3", "|u0", "<x8"])
def test_a_header_naming_no_dtype_is_refused_as_numpy_refuses_it(descr: str) -> None:
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': (2,), }}"
    header += " " * (63 - len(header)) + "\n"
    record = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode()
    for read in (lambda s: np.load(s, allow_pickle=False), load_npy):
        with pytest.raises(ValueError, match="not a valid dtype"):
            read(io.BytesIO(record + b"\0" * 16))
