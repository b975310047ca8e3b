"""``cache_from``: every vector of the cache a flat, read-only float32 array, and the
caller's own arrays left as they were."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from memhtml.contracts.services import VectorSpace
from memhtml.contracts.vectors import cache_from

SPACE = VectorSpace("m", 4)


def test_a_row_of_a_read_only_matrix_is_taken_as_it_is() -> None:
    matrix = np.arange(8, dtype=np.float32).reshape(2, 4)
    matrix.setflags(write=False)
    first, second = matrix
    cache = cache_from(SPACE, {"a": first, "b": second})
    assert cache.vectors["a"] is first
    assert cache.vectors["b"] is second


@given(hnp.arrays(st.sampled_from([np.float32, np.float64, np.int32]),
                  st.sampled_from([(4,), (1, 4), (4, 1)]),
                  elements=st.integers(min_value=-1000, max_value=1000)),
       st.booleans())
def test_every_vector_is_flat_read_only_float32_and_the_caller_s_array_unchanged(
        array: np.ndarray, writable: bool) -> None:
    array.setflags(write=writable)
    before = array.copy()
    vector = cache_from(SPACE, {"a": array}).vectors["a"]
    assert vector.dtype == np.float32
    assert vector.shape == (4,)
    assert not vector.flags.writeable
    assert np.array_equal(vector, before.astype(np.float32).ravel())
    assert array.flags.writeable == writable
    assert np.array_equal(array, before)
