"""Laws of the entity passes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.domain.entities import (
    CharacterPairs,
    character_pairs,
    lcs_length,
    match_masks,
    merge_guard,
    name_similarity,
    normalize_entity_name,
    union_pairs,
)
from memhtml.domain.thresholds import AUTO_MERGE_THRESHOLD, REVIEW_THRESHOLD

names = st.text(alphabet="ab -K", max_size=8)
# Small alphabets make long common subsequences likely; the non-ASCII letters, a
# combining mark and an astral character keep the masks honest beyond ASCII.
lcs_text = st.text(alphabet="abc-1\u00e9\u0301\u4e2d\U0001f600", max_size=80) | st.text(max_size=40)
# Names in the shape the pre-pass sees: words, separators, digits, near-duplicates.
entity_names = st.lists(
    st.text(alphabet="abcs-e 12", min_size=1, max_size=12), max_size=40
) | st.lists(st.text(min_size=1, max_size=10), max_size=30)
"""The second arm draws from all of Unicode, so batches pass the prefilter's 64
counted characters and share its overflow column."""


def reference_lcs(left: str, right: str) -> int:
    """The textbook dynamic program, row by row."""
    previous = [0] * (len(right) + 1)
    for ch in left:
        current = [0]
        for j, other in enumerate(right):
            current.append(previous[j] + 1 if ch == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def reference_pairs(names: list[str]) -> CharacterPairs:
    """Every pair scored with the dynamic program, in sorted pair order."""
    ordered = sorted(set(names))
    auto: list[tuple[str, str]] = []
    review: list[tuple[str, str]] = []
    guarded: list[tuple[str, str]] = []
    for i, left in enumerate(ordered):
        for right in ordered[i + 1 :]:
            if not left or not right:
                continue
            similarity = 2 * reference_lcs(left, right) / (len(left) + len(right))
            if similarity >= AUTO_MERGE_THRESHOLD:
                (auto if merge_guard(left, right) is None else guarded).append((left, right))
            elif similarity >= REVIEW_THRESHOLD:
                review.append((left, right))
    return CharacterPairs(tuple(auto), tuple(review), tuple(guarded))


@settings(max_examples=500)
@given(lcs_text, lcs_text)
def test_bit_parallel_lcs_equals_the_dynamic_program(a: str, b: str) -> None:
    expected = reference_lcs(a, b)
    assert lcs_length(a, b) == expected
    assert lcs_length(b, a) == expected
    assert lcs_length(a, b, match_masks(a)) == expected


@settings(max_examples=300)
@given(entity_names)
def test_character_pairs_equal_the_pairwise_reference(batch: list[str]) -> None:
    assert character_pairs(batch) == reference_pairs(batch)


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


wide_alphabet = (
    "".join(chr(c) for c in range(0x3B1, 0x3B1 + 25))  # Greek
    + "abcdefghijklmnopqrstuvwxyz0123456789-_ \u00e9\u4e2d"
)


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(
            st.text(alphabet=wide_alphabet, min_size=3, max_size=14),
            st.text(alphabet=wide_alphabet, max_size=2),
        ),
        max_size=20,
    )
)
def test_near_duplicates_over_a_wide_alphabet_equal_the_reference(
    stems: list[tuple[str, str]],
) -> None:
    """Each name beside a variant of itself, over more characters than the prefilter
    counts one by one: many pairs reach the bands and the overflow column is used."""
    batch = [name for stem, extra in stems for name in (stem, stem + extra, extra + stem)]
    assert character_pairs(batch) == reference_pairs(batch)
