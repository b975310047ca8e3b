"""Laws of the merge of several scopes' ranked hits (``compose.scoped.interleave``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memhtml.compose.scoped import interleave
from memhtml.contracts.vocabulary import OWN_SCOPE

NAMES = st.sampled_from([OWN_SCOPE, "team", "ops", "family", "z-last"])


@st.composite
def scoped_lists(draw: st.DrawFn) -> list[tuple[str, list[tuple[str, int]]]]:
    """Distinct scopes, each with a ranked list of hits that carry where they came
    from, so a test can tell a hit of one scope from an equal-looking one of another."""
    names = draw(st.lists(NAMES, unique=True, max_size=5))
    return [(name, [(name, place) for place in range(draw(st.integers(0, 6)))])
            for name in names]


LIMITS = st.integers(0, 40)


@given(scoped_lists(), LIMITS, st.randoms(use_true_random=False))
def test_the_merge_is_deterministic_whatever_order_the_scopes_come_in(
        ranked: list[tuple[str, list[tuple[str, int]]]], limit: int, rnd: object) -> None:
    shuffled = list(ranked)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert interleave(shuffled, limit) == interleave(ranked, limit)


@given(scoped_lists(), LIMITS)
def test_each_hit_comes_from_exactly_one_scope_once(
        ranked: list[tuple[str, list[tuple[str, int]]]], limit: int) -> None:
    merged = interleave(ranked, limit)
    assert all(scope == item[0] for scope, item in merged)
    assert len(set(merged)) == len(merged)
    assert len(merged) == min(limit, sum(len(items) for _, items in ranked))


@given(NAMES, st.lists(st.text(max_size=3), max_size=12), LIMITS)
def test_one_scope_alone_is_its_own_ranking(name: str, items: list[str], limit: int) -> None:
    assert interleave([(name, items)], limit) == [(name, item) for item in items[:limit]]


@given(scoped_lists(), LIMITS)
def test_each_scope_keeps_its_order_and_a_better_place_is_never_behind_a_worse(
        ranked: list[tuple[str, list[tuple[str, int]]]], limit: int) -> None:
    merged = interleave(ranked, limit)
    for name, items in ranked:
        mine = [item for scope, item in merged if scope == name]
        assert mine == items[:len(mine)]
    places = [item[1] for _, item in merged]
    assert places == sorted(places)


def test_the_own_store_leads_each_round_and_the_others_follow_by_name() -> None:
    merged = interleave([("team", ["t1", "t2"]), ("ops", ["p1"]), (OWN_SCOPE, ["o1"])], 10)
    assert merged == [(OWN_SCOPE, "o1"), ("ops", "p1"), ("team", "t1"), ("team", "t2")]
