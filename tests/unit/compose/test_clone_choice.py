"""Which branch a clone takes when the remote's HEAD leads to no store: one rule, the
same on every machine, and never a branch that carries no store."""

from __future__ import annotations

from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful

from memhtml.compose import SeveralStores, choose_branch
from memhtml.compose.stores import NotAStore
from memhtml.store.layout import StoreMark

URL = "file:///srv/memory.git"


def marker(branch: str | None) -> StoreMark:
    return StoreMark("marker", branch)


@pytest.mark.parametrize(("head", "marks", "taken", "rule"), [
    # HEAD on a store: what git clone checks out.
    ("main", {"main": marker("main")}, "main", "head"),
    ("notes", {"main": marker("main"), "notes": marker("notes")}, "notes", "head"),
    # HEAD on a branch cut from the store: the branch its marker names.
    ("topic", {"main": marker("main"), "topic": marker("main")}, "main", "marker"),
    # HEAD names a missing branch.
    ("master", {"main": marker("main")}, "main", "marker"),
    ("master", {"memory": marker("memory"), "docs": None}, "memory", "marker"),
    ("master", {"memory": marker("memory"), "topic": marker("memory")}, "memory", "marker"),
    ("master", {"main": marker("main"), "notes": marker("notes")}, "main", "main"),
    ("master", {"main": StoreMark("layout"), "notes": StoreMark("layout")}, "main", "main"),
    ("master", {"memory": StoreMark("layout"), "docs": None}, "memory", "only"),
    # HEAD names a branch without a store.
    ("docs", {"docs": None, "main": marker("main")}, "main", "marker"),
    (None, {"memory": marker(None)}, "memory", "only"),
    # A sleep run's branch is never a store's, even with the marker.
    ("master", {"sleep/2026-01-01": marker("sleep/2026-01-01"), "main": marker("main")},
     "main", "marker"),
])
def test_the_rule(head: str | None, marks: dict[str, StoreMark | None], taken: str,
                  rule: str) -> None:
    chosen = choose_branch(URL, head, marks).unwrap()
    assert (chosen.branch, chosen.rule) == (taken, rule), chosen


@pytest.mark.parametrize(("marks", "error"), [
    ({}, NotAStore),
    ({"docs": None}, NotAStore),
    ({"sleep/x": marker("sleep/x")}, NotAStore),
    ({"alpha": marker("alpha"), "beta": marker("beta")}, SeveralStores),
    ({"alpha": StoreMark("layout"), "beta": marker(None)}, SeveralStores),
])
def test_refusals_name_the_remote_and_its_branches(
        marks: dict[str, StoreMark | None], error: type) -> None:
    refused = choose_branch(URL, "master", marks).failure()
    assert type(refused) is error
    assert URL in refused.reason and (not marks or "master" in refused.reason)
    assert all(name in refused.reason for name in marks)


BRANCHES = st.sampled_from(["main", "master", "alpha", "beta", "topic", "sleep/x", "docs"])
MARKS = st.one_of(st.none(), st.just(StoreMark("layout")),
                  st.builds(StoreMark, st.just("marker"), st.one_of(st.none(), BRANCHES)))


@given(head=st.one_of(st.none(), BRANCHES), marks=st.dictionaries(BRANCHES, MARKS),
       order=st.randoms(use_true_random=False))
def test_the_choice_is_a_store_and_does_not_hang_on_listing_order(
        head: str | None, marks: dict[str, StoreMark | None], order: Random) -> None:
    items = list(marks.items())
    order.shuffle(items)
    chosen = choose_branch(URL, head, marks)
    assert choose_branch(URL, head, dict(items)) == chosen
    if is_successful(chosen):
        branch = chosen.unwrap().branch
        assert marks.get(branch) is not None and not branch.startswith("sleep")
