"""Compaction is a rebuild: the segment ``compacted_segment`` makes from a base and its
delta is, array for array, the one ``build_segment`` makes from the live documents.

Generated over small vocabularies (so tokens are shared, and some stop being used),
documents with no tokens, removed documents, edited ones (removed from the base and
added again with new counts) and new ones.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from immutables import Map

from memhtml.head.lexical import (
    LexicalIndex,
    Segment,
    TermCounts,
    build_segment,
    compacted_segment,
)

_tokens = st.sampled_from(["alpha", "beta", "gamma", "delta", "épée", "z", "10", "a_b"])
_counts = st.dictionaries(_tokens, st.integers(1, 3), max_size=5).map(
    lambda counts: TermCounts(counts, sum(counts.values())))
_paths = st.sampled_from([f"{folder}/{name}.html" for folder in ("a", "b", "a/c")
                          for name in ("x", "y", "z", "w")])


@st.composite
def _indexes(draw: st.DrawFn) -> tuple[LexicalIndex, dict[str, TermCounts]]:
    """An index (a base and a delta over it) and the live documents it stands for."""
    base_docs = draw(st.dictionaries(_paths, _counts, max_size=10))
    base = build_segment(base_docs.items())
    removed = draw(st.sets(st.sampled_from(sorted(base_docs)), max_size=len(base_docs))
                   if base_docs else st.just(set[str]()))
    live = {p: c for p, c in base_docs.items() if p not in removed}
    free = st.sampled_from(["n/1.html", "n/2.html", "0.html", *sorted(removed)])
    added = draw(st.dictionaries(free, _counts, max_size=5))
    live.update(added)
    index = LexicalIndex(
        base,
        Map({p: base_docs[p] for p in removed}),
        Map(added),
        len(live),
        sum(c.length for c in live.values()),
    )
    return index, live


def _same(one: Segment, other: Segment) -> None:
    assert one.paths == other.paths
    assert dict(one.vocab) == dict(other.vocab)
    assert dict(one.doc_index) == dict(other.doc_index)
    for name in ("lengths", "doc_ids", "tfs"):
        mine, theirs = getattr(one, name), getattr(other, name)
        assert mine.dtype == theirs.dtype, name
        assert np.array_equal(mine, theirs), name
        assert not mine.flags.writeable, name
    assert one.total_length == other.total_length


@settings(max_examples=300)
@given(case=_indexes())
def test_a_compacted_segment_is_the_fresh_build_of_the_live_documents(
        case: tuple[LexicalIndex, dict[str, TermCounts]]) -> None:
    index, live = case
    _same(compacted_segment(index), build_segment(live.items()))


def test_compacting_everything_away_leaves_the_empty_segment() -> None:
    counts = TermCounts({"alpha": 2}, 2)
    base = build_segment([("a.html", counts)])
    index = LexicalIndex(base, Map({"a.html": counts}), Map(), 0, 0)
    _same(compacted_segment(index), build_segment(()))
