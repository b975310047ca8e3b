"""Entity resolution's deterministic passes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Success

from memhtml.domain.entities import (
    EntityClaim,
    ProposedMerge,
    ReviewCandidate,
    alias_pairs,
    character_pairs,
    decompose_cluster,
    entity_centroids,
    lcs_length,
    merge_guard,
    name_fullness,
    name_similarity,
    name_words,
    nearest_centroids,
    normalize_entity_name,
    normalize_names,
    resolve_names,
    union_pairs,
    validate_cluster,
)
from memhtml.domain.errors import ClusterRefused


def test_normalize_collapses_case_and_whitespace() -> None:
    assert normalize_entity_name("  Checkout\t  API ") == "checkout api"
    assert normalize_entity_name("Cafe\u0301") == "caf\u00e9"


def test_exact_merge_sums_counts_onto_the_normalized_name() -> None:
    names = normalize_names({"Checkout API": 2, "checkout api": 3, "  ": 4})
    assert dict(names.counts) == {"checkout api": 5}
    assert dict(names.canonical_of) == {"Checkout API": "checkout api"}


def test_similarity_edges() -> None:
    assert name_similarity("a", "a") == 1.0
    assert name_similarity("", "a") == 0.0
    assert name_similarity("checkout-api", "checkout api") == 11 / 12


def test_character_pairs_split_at_the_bands() -> None:
    pairs = character_pairs(["checkout-api", "checkout api", "payments-api", "abcd", "abce"])
    assert pairs.auto == (("checkout api", "checkout-api"),)
    assert pairs.review == (("abcd", "abce"),)


def test_lcs_length_is_bit_parallel_and_exact() -> None:
    assert lcs_length("checkout-api", "checkout api") == 11
    assert lcs_length("laith", "laith al-saadoon") == 5
    assert lcs_length("", "abc") == lcs_length("abc", "") == 0
    assert lcs_length("ab\u00e9c", "\u00e9c") == 2
    # Longer than one machine word: Python integers carry any width.
    assert lcs_length("ab" * 100, "ba" * 100) == 199


@pytest.mark.parametrize(
    ("left", "right", "ratio", "reason"),
    [
        ("postgres-14", "postgres-15", 0.909, "digits"),
        ("us-east-1", "us-east-2", 0.889, "digits"),
        ("service-a", "service-b", 0.889, "one-character"),
        ("service-a", "service", 0.875, "one-character"),
        ("node 20.11", "node 20.1", 0.947, "digits"),
    ],
)
def test_siblings_above_the_auto_line_go_to_review(
    left: str, right: str, ratio: float, reason: str
) -> None:
    assert round(name_similarity(left, right), 3) == ratio
    assert merge_guard(left, right) == reason
    pairs = character_pairs([left, right])
    assert pairs.auto == ()
    assert pairs.guarded == (tuple(sorted((left, right))),)
    resolution = resolve_names({left: 1, right: 1})
    assert dict(resolution.alias_to_canonical) == {}
    (candidate,) = resolution.review_candidates
    assert candidate.reason == reason
    assert round(candidate.similarity, 3) == ratio


def test_casing_and_separator_variants_still_merge() -> None:
    for left, right in [
        ("checkout api", "checkout-api"),
        ("checkout-api", "checkout_api"),
        ("postgres-14", "postgres 14"),
        ("postgres14", "postgres-14"),
    ]:
        assert merge_guard(left, right) is None
    resolution = resolve_names({"Checkout API": 1, "checkout-api": 3, "checkout_api": 1})
    assert dict(resolution.alias_to_canonical) == {
        "checkout api": "checkout-api",
        "checkout_api": "checkout-api",
    }
    assert resolution.review_candidates == ()


def test_a_declared_alias_merges_what_the_guard_holds_back() -> None:
    resolution = resolve_names(
        {"service-a": 2, "service-b": 1}, alias_groups=[{"service-a", "service-b"}]
    )
    assert dict(resolution.alias_to_canonical) == {"service-b": "service-a"}
    assert resolution.review_candidates == ()


def test_review_candidates_carry_the_band_and_the_guard() -> None:
    resolution = resolve_names({"abcd": 1, "abce": 1, "us-east-1": 1, "us-east-2": 1})
    assert resolution.review_candidates == (
        ReviewCandidate("abcd", "abce", 0.75, "band"),
        ReviewCandidate("us-east-1", "us-east-2", 8 / 9, "digits"),
    )
    assert resolution.review == (("abcd", "abce"), ("us-east-1", "us-east-2"))


def test_union_find_survivor_is_heaviest_then_smallest() -> None:
    counts = {"a": 1, "b": 5, "c": 5, "d": 2}
    merged = union_pairs(counts, [("a", "b"), ("c", "d"), ("b", "c")])
    assert dict(merged) == {"a": "b", "c": "b", "d": "b"}


def test_a_persons_survivor_is_the_fullest_name_then_heaviest() -> None:
    counts = {"laith": 9, "laith al-saadoon": 1, "l. al-saadoon": 3, "mira": 2}
    pairs = [("laith", "laith al-saadoon"), ("l. al-saadoon", "laith")]
    assert dict(union_pairs(counts, pairs, fullest=True)) == {
        "l. al-saadoon": "laith al-saadoon", "laith": "laith al-saadoon"}
    assert dict(union_pairs(counts, pairs)) == {
        "l. al-saadoon": "laith", "laith al-saadoon": "laith"}
    assert (name_words("laith al-saadoon"), name_words("l. al-saadoon"),
            name_words("laith"), name_words("---")) == (3, 3, 1, 0)
    assert name_fullness("laith al-saadoon") > name_fullness("l. al-saadoon")


@given(st.permutations([("a b", "a"), ("a", "c d"), ("c d", "e f"), ("x", "a")]),
       st.dictionaries(st.sampled_from(["a", "a b", "c d", "e f", "x"]),
                       st.integers(1, 5)))
def test_the_fullest_rule_is_a_total_order_so_pair_order_does_not_matter(
        pairs: list[tuple[str, str]], counts: dict[str, int]) -> None:
    merged = union_pairs(counts, pairs, fullest=True)
    survivor = set(merged.values())
    assert len(survivor) == 1
    (name,) = survivor
    assert name_fullness(name) == (2, 2)
    assert merged == union_pairs(counts, sorted(pairs), fullest=True)


def test_decompose_cluster_orients_by_weight_then_name() -> None:
    counts = {"laith": 4, "laith al-saadoon": 4, "l. al-saadoon": 1}
    assert decompose_cluster(["laith al-saadoon", "laith", "l. al-saadoon"], counts) == (
        ProposedMerge("l. al-saadoon", "laith"),
        ProposedMerge("laith al-saadoon", "laith"),
    )
    assert decompose_cluster(["solo", "solo"], counts) == ()


def test_validate_cluster_refuses_an_outside_canonical() -> None:
    assert validate_cluster(["b", "a"], "a") == Success(("a", "b"))
    refused = validate_cluster(["b", "a"], "c")
    assert isinstance(refused, Failure)
    assert refused.failure() == ClusterRefused(("a", "b"), "c", "canonical is not a member")


def test_alias_groups_merge_what_characters_cannot() -> None:
    groups = [frozenset({"laith", "laith al-saadoon", "unknown"})]
    assert alias_pairs(groups, ["laith", "laith al-saadoon", "other"]) == (
        ("laith", "laith al-saadoon"),
    )
    resolution = resolve_names(
        {"Laith": 3, "laith al-saadoon": 1, "Checkout-API": 1, "checkout api": 2},
        alias_groups=[{"Laith", "Laith Al-Saadoon"}],
    )
    assert dict(resolution.alias_to_canonical) == {
        "checkout-api": "checkout api",
        "laith al-saadoon": "laith",
    }


def test_review_pairs_already_merged_are_not_review_candidates() -> None:
    resolution = resolve_names({"abcd": 1, "abce": 1}, extra_pairs=[("abcd", "abce")])
    assert resolution.review == ()
    assert resolve_names({"abcd": 1, "abce": 1}).review == (("abcd", "abce"),)


def test_centroids_are_normalized_means_counting_a_file_once() -> None:
    vectors = {
        "a.html": np.array([1.0, 0.0], dtype=np.float32),
        "b.html": np.array([0.0, 1.0], dtype=np.float32),
    }
    claims = [
        EntityClaim("service", "Checkout API", "b.html", "B"),
        EntityClaim("service", "checkout api", "b.html", "B"),
        EntityClaim("service", "checkout api", "a.html", " A "),
        EntityClaim("person", "sanju", "c.html", ""),
    ]
    centroids = entity_centroids(claims, vectors)
    assert list(centroids) == ["person", "service"]
    (service,) = centroids["service"]
    assert service.name == "checkout api"
    assert service.memories == 2
    assert service.titles == ("A", "B")
    assert service.vector is not None
    np.testing.assert_allclose(service.vector, [2**-0.5, 2**-0.5])
    assert centroids["person"][0].vector is None


def test_nearest_centroids_sort_by_similarity_then_name() -> None:
    vectors = {p: np.array(v, dtype=np.float32) for p, v in
               {"1": [1, 0], "2": [1, 0], "3": [1, 0], "4": [0, 1]}.items()}  # fmt: skip
    claims = [EntityClaim("t", n, p) for n, p in [("x", "1"), ("c", "2"), ("b", "3"), ("a", "4")]]
    centroids = entity_centroids(claims, vectors)["t"]
    assert [n.name for n in nearest_centroids(centroids, "x", 2)] == ["b", "c"]
    assert nearest_centroids(centroids, "missing", 2) == ()
