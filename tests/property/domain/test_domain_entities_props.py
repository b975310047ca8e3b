"""Laws of the entity passes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memhtml.domain.entities import name_similarity, normalize_entity_name, union_pairs

names = st.text(alphabet="ab -K", max_size=8)
pool = [f"n{i}" for i in range(8)]
pairs = st.lists(st.tuples(st.sampled_from(pool), st.sampled_from(pool)), max_size=20)
counts = st.fixed_dictionaries({n: st.integers(0, 3) for n in pool})


@given(names, names)
def test_similarity_is_symmetric_and_bounded(a: str, b: str) -> None:
    assert name_similarity(a, b) == name_similarity(b, a)
    assert 0.0 <= name_similarity(a, b) <= 1.0


@given(names)
def test_normalization_is_idempotent(a: str) -> None:
    once = normalize_entity_name(a)
    assert normalize_entity_name(once) == once


@given(st.data(), counts, pairs)
def test_union_is_independent_of_pair_order_and_direction(
    data: st.DataObject, weights: dict[str, int], merges: list[tuple[str, str]]
) -> None:
    expected = dict(union_pairs(weights, merges))
    shuffled = data.draw(st.permutations(merges))
    assert dict(union_pairs(weights, [(b, a) for a, b in shuffled])) == expected
    for alias, canonical in expected.items():
        assert canonical not in expected
        # The survivor outranks every name it absorbed: heavier, or as heavy and smaller.
        assert (-weights[canonical], canonical) < (-weights[alias], alias)
