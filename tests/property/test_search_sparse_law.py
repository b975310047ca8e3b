"""The lexical arm sums scores two ways (into an array the size of the base segment,
or over just the documents the query's postings name), picked by how many postings a
query touches. Both must give the same floats: a ranking may never depend on which
way a query happened to be summed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memhtml.head.search as search_module
from memhtml.contracts.ops import OverlayOp, Put
from memhtml.contracts.view import HeadView
from memhtml.head import version_from_records, with_overlay
from memhtml.head.indexes import indexes_of
from memhtml.head.search import arm_ranks, bm25_scores
from tests.property.head_support import memory, record_at

WORDS = ("alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "tau")
_TEXT = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)


def _view(docs: list[str], edits: list[tuple[int, str]]) -> HeadView:
    """A version of ``docs``, with ``edits`` as a delta on top of its base segment
    (edits re-score documents outside it)."""
    records = [record_at(f"areas/d{i:02d}.html", memory(f"Doc {i}", text + "."))
               for i, text in enumerate(docs)]
    version = version_from_records(records, "s")
    ops: list[OverlayOp] = [Put(records[i % len(records)].path, memory(f"Doc {i}", text + "."))
                            for i, text in edits]
    return with_overlay(version, ops).unwrap() if ops else version


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(_TEXT, min_size=1, max_size=25), query=_TEXT,
       edits=st.lists(st.tuples(st.integers(0, 24), _TEXT), max_size=3))
def test_dense_and_sparse_sums_agree(docs: list[str], query: str,
                                     edits: list[tuple[int, str]]) -> None:
    view = _view(docs, edits)
    results = []
    for share in (0, 10**9):  # never dense, always dense
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(search_module, "_DENSE_SHARE", share)
            results.append(bm25_scores(indexes_of(view), query))
    assert results[0] == results[1]


@settings(max_examples=50, deadline=None)
@given(docs=st.lists(_TEXT, min_size=1, max_size=40), query=_TEXT,
       edits=st.lists(st.tuples(st.integers(0, 39), _TEXT), max_size=3),
       cap=st.integers(1, 12), share=st.sampled_from((0, 4, 10**9)),
       warm=st.sampled_from((0, 10**9)))
def test_the_arms_candidates_hold_exactly_the_best_of_every_score(
        docs: list[str], query: str, edits: list[tuple[int, str]], cap: int,
        share: int, warm: int) -> None:
    # The arm picks its best without listing every match (a partition of the summed
    # array, above a floor read from the heaviest tokens' shares), from shares
    # computed per query or sliced from the segment's whole impacts: whatever way the
    # sum took, the ranked top must be the top of every document's full score.
    indexes = indexes_of(_view(docs, edits))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search_module, "_DENSE_SHARE", share)
        patch.setattr(search_module, "_WARM_SEARCHES", warm)
        candidates = search_module._lexical_candidates(indexes, query, None, cap)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search_module, "_WARM_SEARCHES", 10**9)
        full = bm25_scores(indexes, query)
    assert dict(candidates).items() <= full.items()
    assert arm_ranks(candidates, cap) == arm_ranks(list(full.items()), cap)
