"""Laws of the merge veto and the role guard."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.domain.decay import decay_confidence, is_committable_change
from memhtml.domain.merge import (
    MergeProposal,
    MergeText,
    merge_outcomes,
    merge_veto,
    negation_divergent,
    numeric_token_divergent,
    variant_qualifier_divergent,
)

WORDS = ["the", "deploy", "step", "is", "safe", "not", "isn't", "never", "v2.1", "3", "13",
         "2026-01-02", "pro", "beta", "M1", "cache", "no", "retry"]  # fmt: skip
sentences = st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join) | st.text(max_size=30)
texts = st.builds(MergeText, sentences, sentences)

paths = st.sampled_from([f"m{i}.html" for i in range(8)])
proposals = st.lists(
    st.builds(MergeProposal, paths, paths, st.sampled_from(["model", "cosine"])), max_size=40
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
        assert accounted + out.self_merges + out.capped == len(order)


@given(st.floats(0, 1), st.integers(0, 50))
def test_decay_never_increases_and_stays_on_the_grid(confidence: float, cycles: int) -> None:
    after = decay_confidence(confidence, cycles)
    assert after <= round(confidence, 4)
    assert after == round(after, 4)
    assert is_committable_change(confidence, after) == (
        abs(round(confidence * 10_000) - round(after * 10_000)) >= 50
    )
