"""Laws of the merge veto and the role guard."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.domain.decay import (
    CONFIDENCE_FLOOR,
    decay_confidence,
    decayed_stored,
    is_committable_change,
)
from memhtml.domain.merge import (
    CorpusMember,
    MergeProposal,
    MergeText,
    VetoCache,
    group_proposals,
    keeper_key,
    merge_outcomes,
    merge_veto,
    negation_divergent,
    numeric_token_divergent,
    variant_qualifier_divergent,
)
from memhtml.eval.veto_pairs import flip_pair, unrelated_pair

WORDS = ["the", "deploy", "step", "is", "safe", "not", "isn't", "never", "v2.1", "3", "13",
         "2026-01-02", "pro", "beta", "M1", "cache", "no", "retry", "available",
         "unavailable", "active", "inactive", "non-blocking", "blocking", "non", "enabled",
         "disabled", "on", "off", "index", "dex", "input", "put"]  # fmt: skip
sentences = st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join) | st.text(max_size=30)
texts = st.builds(MergeText, sentences, sentences)

# Words no negating prefix, antonym or marker touches, so an affixed twin is the
# only polarity change between a text and its edit.
NEUTRAL = ["deploy", "step", "cache", "queue", "writer", "mounted", "stable", "signed",
           "locked", "visible", "loaded", "valid", "the", "is", "and", "x", "to"]  # fmt: skip
neutral_words = st.lists(st.sampled_from(NEUTRAL), min_size=1, max_size=10)

paths = st.sampled_from([f"m{i}.html" for i in range(8)])
maybe_text = st.none() | st.sampled_from(
    [MergeText("the step is safe"), MergeText("the step is not safe"), MergeText("retry 3")]
)
proposals = st.lists(
    st.builds(
        MergeProposal,
        paths,
        paths,
        st.sampled_from(["model", "cosine"]),
        st.none(),
        maybe_text,
        maybe_text,
    ),
    max_size=40,
)


@settings(max_examples=300)
@given(texts, texts)
def test_veto_is_symmetric(a: MergeText, b: MergeText) -> None:
    assert merge_veto(a, b) == merge_veto(b, a)
    assert negation_divergent(a.claim, b.claim) == negation_divergent(b.claim, a.claim)
    assert numeric_token_divergent(a.claim, b.claim) == numeric_token_divergent(b.claim, a.claim)
    assert variant_qualifier_divergent(a.article, b.article) == variant_qualifier_divergent(
        b.article, a.article
    )


@given(texts)
def test_a_text_never_vetoes_itself(a: MergeText) -> None:
    assert merge_veto(a, a) == ()
    assert not negation_divergent(a.claim, a.claim)


@settings(max_examples=300)
@given(texts, texts)
def test_the_cache_agrees_with_the_veto(a: MergeText, b: MergeText) -> None:
    cache = VetoCache()
    assert cache.veto(a, b) == merge_veto(a, b)
    assert cache.veto(b, a) == merge_veto(a, b)


@settings(max_examples=300)
@given(st.data(), neutral_words, st.sampled_from(["un", "in", "dis", "non", "non-"]))
def test_an_affixed_twin_of_a_word_fires(
    data: st.DataObject, words: list[str], prefix: str
) -> None:
    """A word of three letters or more replaced by its affixed form flips the text."""
    stems = sorted({w for w in words if len(w) >= 3})
    if not stems:
        words = [*words, "stable"]
        stems = ["stable"]
    stem = data.draw(st.sampled_from(stems))
    before = " ".join(words)
    after = " ".join(prefix + w if w == stem else w for w in words)
    assert negation_divergent(before, after)
    assert negation_divergent(after, before)
    assert "negation" in merge_veto(MergeText(before), MergeText(after))
    # Only the affixed side changes: the same edit on both sides is agreement.
    assert merge_veto(MergeText(after), MergeText(after)) == ()


@settings(max_examples=200)
@given(st.randoms(use_true_random=False))
def test_every_generated_flip_is_vetoed_by_negation(rng: random.Random) -> None:
    """A claim against its negation, in every form a correction takes (is not, does
    not, never, cannot, do not, without, a flip in the article): always refused."""
    pair = flip_pair(rng)
    a, b = MergeText(*pair.first), MergeText(*pair.second)
    assert "negation" in merge_veto(a, b), pair
    assert merge_veto(a, b) == merge_veto(b, a)


@settings(max_examples=200)
@given(st.randoms(use_true_random=False))
def test_an_unrelated_negated_remark_is_never_vetoed(rng: random.Random) -> None:
    """One claim and article twice, the second adding a negated remark about something
    else, or about the claim's subject: two statements of one memory, never refused."""
    pair = unrelated_pair(rng)
    a, b = MergeText(*pair.first), MergeText(*pair.second)
    assert merge_veto(a, b) == (), pair
    assert VetoCache().veto(b, a) == ()


@settings(max_examples=300)
@given(st.data(), proposals)
def test_role_guard_holds_in_any_arrival_order(
    data: st.DataObject, pairs: list[MergeProposal]
) -> None:
    shuffled = data.draw(st.permutations(pairs))
    for order in (pairs, shuffled):
        out = merge_outcomes(order)
        drops = [d.drop_path for d in out.committed]
        keeps = {d.keep_path for d in out.committed}
        assert len(drops) == len(set(drops)), "a dropped file was dropped again"
        assert keeps.isdisjoint(drops), "a keeper was dropped, or a dropped file kept"
        accounted = len(out.committed) + len(out.vetoed) + len(out.role_guarded)
        accounted += len(out.missing_text)
        assert accounted + out.self_merges + out.capped == len(order)
        assert all(p.keep_text is None or p.drop_text is None for p in out.missing_text)
        assert all(p.keep_text is not None and p.drop_text is not None for p in out.role_guarded)


@given(st.floats(0, 1), st.integers(0, 50))
def test_decay_never_increases_and_stays_on_the_grid(confidence: float, cycles: int) -> None:
    after = decay_confidence(confidence, cycles)
    assert after <= round(confidence, 4)
    assert after == round(after, 4)
    assert is_committable_change(confidence, after) == (
        abs(round(confidence * 10_000) - round(after * 10_000)) >= 50
    )


MAX_NIGHTS = 80
"""From 1.00 to the 0.20 floor one hundredth a night at the slowest."""


@pytest.mark.parametrize("hundredths", range(101))
def test_stored_decay_reaches_the_floor_exactly_and_never_passes_it(hundredths: int) -> None:
    """Iterating the stored step from any two-decimal value ends on the floor (or
    stays put at or below it), never rising, within a bounded number of nights.
    Every one of the 101 start values is checked, not a sample."""
    value = hundredths / 100
    nights = 0
    while (after := decayed_stored(value)) is not None:
        assert after < value
        assert after >= CONFIDENCE_FLOOR
        assert after == round(after, 2)
        assert is_committable_change(value, after)
        value = after
        nights += 1
        assert nights <= MAX_NIGHTS
    if hundredths / 100 <= CONFIDENCE_FLOOR:
        assert (nights, value) == (0, hundredths / 100)
    else:
        assert value == CONFIDENCE_FLOOR


@given(st.floats(0, 1))
def test_stored_decay_never_lifts_and_never_passes_the_floor(confidence: float) -> None:
    after = decayed_stored(confidence)
    if after is None:
        return
    assert CONFIDENCE_FLOOR <= after < confidence
    assert after == round(after, 2)
    # The stored value is never above what the unrounded step would store.
    assert after <= decay_confidence(confidence)


files = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 6), st.sampled_from([f"m{i}.html" for i in
                                                                     range(8)])),
    min_size=2, max_size=8, unique_by=lambda row: row[2])


@given(files)
def test_the_keeper_is_the_oldest_then_the_first_committed(rows: list[tuple[int, int, str]]
                                                            ) -> None:
    """Members numbered in ``keeper_key`` order: a model's group keeps the member with
    the earliest creation second; of those, the one longest on the branch (committed
    first); of those, the smallest path. The newer file never keeps."""
    def stamp(second: int) -> str:
        return f"2026-05-01T12:00:0{second}Z"

    ordered = sorted(rows, key=lambda r: keeper_key(stamp(r[0]), r[1], r[2]))
    members = [CorpusMember(path, n, MergeText("same")) for n, (_, _, path) in
               enumerate(ordered)]
    keepers = {p.keep_path for p in group_proposals(members)}
    earliest = min(r[0] for r in rows)
    tied = [r for r in rows if r[0] == earliest]
    longest = max(r[1] for r in tied)
    expected = min(r[2] for r in tied if r[1] == longest)
    assert keepers == {expected}
