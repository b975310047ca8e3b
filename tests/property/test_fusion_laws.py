"""Laws of the fusion rules (``head.fusion``), over arbitrary arm lists."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memhtml.head.fusion import ArmList, FusionRule, fuse, shares
from memhtml.head.search import FUSION_RULE

RULES: tuple[FusionRule, ...] = ("rrf", "minmax", "confidence")
PATHS = [f"p{i}" for i in range(12)]


def _ranked(scored: dict[str, float]) -> list[tuple[str, int, float]]:
    order = sorted(scored, key=lambda path: (-scored[path], path))
    out: list[tuple[str, int, float]] = []
    for position, path in enumerate(order, start=1):
        same = out and out[-1][2] == scored[path]
        out.append((path, out[-1][1] if same else position, scored[path]))
    return out


scores = st.dictionaries(st.sampled_from(PATHS),
                         st.floats(min_value=-1.0, max_value=30.0, allow_nan=False),
                         max_size=len(PATHS))
weights = st.floats(min_value=0.0, max_value=3.0, allow_nan=False)


@given(scores, scores, weights, st.sampled_from(RULES))
def test_the_fused_score_is_the_sum_of_the_shares(lex: dict[str, float], vec: dict[str, float],
                                                  weight: float, rule: FusionRule) -> None:
    arms = [ArmList("lexical", 1.0, _ranked(lex)), ArmList("vector", weight, _ranked(vec))]
    fused = fuse(arms, rule)
    assert set(fused) == set(lex) | set(vec)
    by_arm = [shares(arm, rule) for arm in arms]
    for path, score in fused.items():
        total = 0.0
        for part in by_arm:
            total += part.get(path, 0.0)
        assert score == total


@given(scores, weights, st.sampled_from(RULES))
def test_within_an_arm_a_better_score_never_has_a_smaller_share(
        lex: dict[str, float], weight: float, rule: FusionRule) -> None:
    share = shares(ArmList("lexical", weight, _ranked(lex)), rule)
    for a, score_a in lex.items():
        for b, score_b in lex.items():
            if score_a > score_b:
                assert share[a] >= share[b]
            if score_a == score_b:
                assert share[a] == share[b]


@given(scores, scores)
def test_weight_zero_keeps_the_lexical_order(lex: dict[str, float],
                                             vec: dict[str, float]) -> None:
    """A vector weight of 0 orders the lexical arm's paths as that arm does."""
    fused = fuse([ArmList("lexical", 1.0, _ranked(lex)), ArmList("vector", 0.0, _ranked(vec))],
                 FUSION_RULE)
    for a, score_a in lex.items():
        for b, score_b in lex.items():
            if score_a > score_b:
                assert fused[a] >= fused[b]


@given(scores)
def test_two_arms_that_agree_never_invert_their_order(lex: dict[str, float]) -> None:
    """Two arms ranking alike fuse to their order (scores too close for a float to
    tell apart after normalizing may tie, and ties go by path)."""
    ranked = _ranked(lex)
    fused = fuse([ArmList("lexical", 1.0, ranked), ArmList("vector", 1.0, ranked)], FUSION_RULE)
    for a, score_a in lex.items():
        for b, score_b in lex.items():
            if score_a > score_b:
                assert fused[a] >= fused[b]
