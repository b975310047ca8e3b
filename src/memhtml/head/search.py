"""Ranking over one view: a BM25 arm and an optional vector arm, fused by normalized scores.

Recency only breaks exact ties. Hits are ordered by fused score, then newest first
by event time (else update time, clamped to ``now``), then by path. Recency never
overturns a score difference and never adds a record: an earlier design that ran
recency as a weighted arm made it a second full ranking, so a landing that made
survivors newer let newer, weaker matches bury older targets. As a tie-break, a
byte-identical newer twin still wins, and a clearly better older match stays above.

The function is pure and never embeds; the caller owns vectors and the query vector.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.head.fusion import RRF_K, ArmList, FusionRule, finite_weight, shares
from memhtml.head.indexes import Indexes, indexes_of
from memhtml.head.lexical import Segment, bm25_norms, bm25_weight, index_terms, segment_impacts
from memhtml.head.vector_arm import HeadVectors, vector_scores
from memhtml.head.when import Holds

SearchArm = Literal["lexical", "recency", "time", "vector"]

DEFAULT_LIMIT = 10
DEFAULT_ARM_LIMIT = 40
LEXICAL_ARM_LIMIT = DEFAULT_ARM_LIMIT
"""BM25 scores every record sharing one token with the query; uncapped, hundreds of
weak matches each collect fused mass that a record found by meaning alone cannot."""
VECTOR_ARM_LIMIT = DEFAULT_ARM_LIMIT
"""Cosine scores every embedded record; the cap keeps the arm's vote to the records
it is confident about instead of spreading it over the whole corpus."""
LEXICAL_WEIGHT = 1.0
VECTOR_WEIGHT = 1.0
"""Both arms count the same, which measured best on the dev queries of short and
long memories alike (docs/design.md, "Fusion"). ``SearchHeadInput.vector_weight``
changes it per search (a store's ``vector_weight`` setting, chosen with ``memhtml eval
beir --weight`` on a judged split): 0 ranks as the lexical arm does, the vector arm
only appending what it alone found."""
FUSION_RULE: FusionRule = "minmax"
"""How two arms fuse (``head.fusion``): each arm's scores min-max normalized over its
own capped list, then summed with the arms' weights. Chosen on the dev half of
SciFact's train queries over short and long memories, against reciprocal-rank fusion
at four weights and a per-query confidence rule; a rank-only rule gives a weak arm's
tenth hit the same pull as a strong arm's, while normalized scores let an arm that
is sure of one memory say so. A single arm keeps ``1 / (RRF_K + rank)``: one arm's
order is its own whatever the scale, and the figure stays the one readers know."""


@dataclass(frozen=True, slots=True)
class SearchHeadInput:
    """A query, and what narrows or extends it."""

    query: str
    limit: int = DEFAULT_LIMIT
    now: str | None = None
    """When set, event/update times later than this are clamped to it for tie-breaks."""
    admit: Callable[[MemoryRecord], bool] | None = field(default=None, compare=False)
    """Which active records each arm ranks, applied before the arm's cap. BM25's
    statistics stay those of every active record, so a scope narrows candidates
    without changing how any one of them scores."""
    vectors: HeadVectors | None = field(default=None, compare=False)
    query_vector: npt.ArrayLike | None = field(default=None, compare=False)
    vector_weight: float = VECTOR_WEIGHT
    """The vector arm's weight in the reciprocal-rank fusion, the lexical arm's being
    ``LEXICAL_WEIGHT``; finite and not negative."""


@dataclass(frozen=True, slots=True)
class ArmRank:
    """Where one arm placed a hit, the arm's own score for it (BM25 for the lexical
    arm, the best passage's cosine for the vector arm), and its share of the fused
    score. The fused score only says how the arms combined; these say why, in units a
    reader can compare across queries."""

    arm: Literal["lexical", "vector"]
    rank: int
    score: float
    share: float = 0.0
    """What this arm added to the hit's fused score: the fused score is the sum of its
    arms' shares (``head.fusion``)."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    path: str
    score: float
    """The fused score, the sum of its arms' shares (``ArmRank.share``): comparable
    within one result list only."""
    claim: str
    arms: tuple[SearchArm, ...]
    """The arms that ranked the hit, plus ``recency`` when its fused score equals
    another candidate's (then recency, or the path after it, decided its place), or
    ``time`` alone when a query named only a time and the hit is a memory of it."""
    ranks: tuple[ArmRank, ...] = ()
    """Each ranking arm's rank and raw score for this hit, in arm order."""
    holds: Holds | None = None
    """When the hit's fact holds (``head.when.holds_of``); set by the search door,
    which reads the records, None from ``search_head`` itself."""


def arm_ranks(scored: list[tuple[str, float]], cap: int) -> list[tuple[str, int]]:
    """Best ``cap`` of ``(path, score)`` with shared ranks: equal scores take the best
    rank of their run (1, 1, 3), so records an arm cannot tell apart get the same
    fused share. Ordered by score descending, then path."""
    scored.sort(key=lambda item: (-item[1], item[0]))
    out: list[tuple[str, int]] = []
    previous: float | None = None
    rank = 0
    for position, (path, score) in enumerate(scored[:cap], start=1):
        if score != previous:
            rank = position
            previous = score
        out.append((path, rank))
    return out


def _explained(name: Literal["lexical", "vector"], scored: list[tuple[str, float]],
               cap: int, keep: int | None = None) -> tuple[list[tuple[str, int]], _Explained]:
    """``arm_ranks`` of ``scored``, and each ranked path's rank with its raw score.

    With ``keep``, only the best ``keep`` and whoever shares the last one's rank are
    kept: when this arm alone is fused, nothing below them can reach the hits.
    """
    ranked = arm_ranks(scored, cap)
    if keep is not None and keep < len(ranked):
        end = keep
        if keep > 0:
            last = ranked[keep - 1][1]
            while end < len(ranked) and ranked[end][1] == last:
                end += 1
        ranked = ranked[:end]
    # arm_ranks sorted ``scored`` in place, so its head lines up with ``ranked``.
    return ranked, (name, {path: (rank, raw) for (path, rank), (_, raw)
                           in zip(ranked, scored, strict=False)})


_Explained = tuple[Literal["lexical", "vector"], dict[str, tuple[int, float]]]
"""An arm's name and each ranked path's (rank, raw score); the ``ArmRank`` values are
made only for the hits returned, not for every path an arm ranked."""


_DENSE_SHARE = 4
"""Postings per document above which the query's scores are summed into an array the
size of the segment (``np.add.at`` token by token); below, over just the documents the
postings name (``unique`` then ``bincount``). Both add a document's terms in the same order,
so the floats are the same; the sparse path keeps a rare-word query's cost off the
store's size."""


@dataclass(frozen=True, slots=True)
class _QueryPlan:
    """What one query asks of a version's lexical index: each query token found in the
    base segment as ``(weight, start, end)`` in sorted-token order (the order every
    document's terms are added in), the delta's scores, and the BM25 norms in force."""

    terms: list[tuple[float, int, int]]
    delta_scores: dict[str, float]
    norm_a: float
    norm_b: float
    exact_base: bool
    """The live documents are exactly the base segment's (no delta), so the segment's
    impacts (``segment_impacts``) are this version's shares."""


def _plan(indexes: Indexes, query: str) -> _QueryPlan:
    """Weights of the query's tokens, with the delta's documents scored in Python.

    Base documents are scored with numpy and delta documents here with the same
    operations in the same order, so a document scores the same float whichever side
    of the segment boundary it sits on.
    """
    lexical = indexes.lexical
    base = lexical.base
    delta_scores: dict[str, float] = {}
    terms: list[tuple[float, int, int]] = []
    n = lexical.documents
    norm_a, norm_b = bm25_norms(lexical.average_length)
    has_delta = bool(lexical.removed) or bool(lexical.added)
    if n == 0:
        return _QueryPlan(terms, delta_scores, norm_a, norm_b, not has_delta)
    # Both sides compute weight * (tf / (tf + norm_a + norm_b * length)), and both add
    # a document's terms in sorted-token order (bincount accumulates in input order),
    # so the float is identical wherever the document sits.
    for token in sorted(set(index_terms(query))):
        df = lexical.df(token) if has_delta else base.df(token)
        if df <= 0:
            continue
        weight = bm25_weight(n, df)
        span = base.vocab.get(token)
        if span is not None:
            terms.append((weight, span[0], span[1]))
        for path, tc in lexical.added.items():
            tf = tc.counts.get(token)
            if tf:
                term = weight * (tf / (tf + norm_a + norm_b * tc.length))
                delta_scores[path] = delta_scores.get(path, 0.0) + term
    return _QueryPlan(terms, delta_scores, norm_a, norm_b, not has_delta)


def _removed_ids(indexes: Indexes) -> npt.NDArray[np.intp]:
    lexical = indexes.lexical
    return np.array([lexical.base.doc_index[path] for path in lexical.removed], dtype=np.intp)


_WARM_SEARCHES = 8
"""Searches of one base segment in a process after which its impacts are computed
whole (``segment_impacts``) and kept: a command running one query computes the shares
of just the postings it touches, a long-lived process slices the stored ones."""
_IMPACTS_KEPT = 4
_impacts_lock = threading.Lock()
_impacts: OrderedDict[int, tuple[weakref.ref[Segment], int, npt.NDArray[np.float64] | None]] = (
    OrderedDict())
"""By the segment's identity, the segment held weakly: the impacts go when the last
version on their segment does. Held strongly, a server kept the segment a compaction
had replaced (its vocabulary, postings and impacts: about 10 MB at 4,000 memories)
until four newer ones had been searched."""


def _forget(key: int) -> Callable[[weakref.ref[Segment]], None]:
    """The callback that drops ``key``'s entry when its segment is freed. No lock: it
    runs wherever the last reference goes, and one dict operation is atomic."""
    def drop(ref: weakref.ref[Segment]) -> None:
        held = _impacts.get(key)
        if held is not None and held[0] is ref:
            _impacts.pop(key, None)

    return drop


def _stored_impacts(segment: Segment) -> npt.NDArray[np.float64] | None:
    """The segment's impacts once it has been searched ``_WARM_SEARCHES`` times in
    this process, else ``None`` (and one more search counted). Keyed by identity, as
    the stacked vectors are: a segment is immutable, so its impacts never go stale."""
    key = id(segment)
    with _impacts_lock:
        held = _impacts.get(key)
        if held is not None and held[0]() is segment:
            _impacts.move_to_end(key)
            if held[2] is not None:
                return held[2]
            ref, searches = held[0], held[1] + 1
        else:
            ref, searches = weakref.ref(segment, _forget(key)), 1
        _impacts[key] = (ref, searches, None)
        while len(_impacts) > _IMPACTS_KEPT:
            _impacts.popitem(last=False)
        if searches < _WARM_SEARCHES:
            return None
    impacts = segment_impacts(segment)
    with _impacts_lock:
        if key in _impacts and _impacts[key][0] is ref:
            _impacts[key] = (ref, searches, impacts)
    return impacts


def _shares(indexes: Indexes, plan: _QueryPlan, terms: list[tuple[float, int, int]]
            ) -> list[tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]]:
    """Each of ``terms``' postings as (doc ids, shares of the score), token by token in
    the order given."""
    base = indexes.lexical.base
    impacts = _stored_impacts(base) if plan.exact_base else None
    if impacts is not None:
        # The segment's statistics are the version's: each token's shares were
        # computed whole, so each token costs one slice.
        return [(base.doc_ids[start:end], impacts[start:end]) for _, start, end in terms]
    # Weigh and normalize just the postings the query touches (the same operations as
    # ``segment_impacts``, so the same floats).
    out = []
    lengths, doc_ids, tfs = base.lengths, base.doc_ids, base.tfs
    for weight, start, end in terms:
        ids, counts = doc_ids[start:end], tfs[start:end]
        out.append((ids, weight * (counts / (counts + plan.norm_a + plan.norm_b * lengths[ids]))))
    return out


def _dense_sums(size: int, shares: list[tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]]
                ) -> npt.NDArray[np.float64]:
    """Every base document's summed shares (0 where none), as a fresh array of
    ``size``. ``np.add.at`` token by token adds a document's shares in token order, as
    ``bincount`` over the concatenation does (so the same floats), without copying
    the postings into one array first (the arm took 0.70-0.74 ms against 0.87-0.88 ms
    at 100,000 documents, docs/benchmarks.md)."""
    dense = np.zeros(size, dtype=np.float64)
    for ids, parts in shares:
        np.add.at(dense, ids, parts)
    return dense


def _is_dense(indexes: Indexes, plan: _QueryPlan) -> bool:
    """Whether the query's postings are summed into an array the size of the segment
    (``_DENSE_SHARE``)."""
    postings = sum(end - start for _, start, end in plan.terms)
    return postings * _DENSE_SHARE >= len(indexes.lexical.base.paths)


def _sparse_sums(shares: list[tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]]
                 ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """The summed shares of every document the postings name, ids ascending."""
    if not shares:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float64)
    ids = np.concatenate([ids for ids, _ in shares])
    parts = np.concatenate([parts for _, parts in shares])
    hit_ids, inverse = np.unique(ids, return_inverse=True)
    return hit_ids, np.bincount(inverse, weights=parts, minlength=len(hit_ids)).astype(
        np.float64, copy=False)


def _live(indexes: Indexes, ids: npt.NDArray[np.intp], scores: npt.NDArray[np.float64]
          ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """``ids`` and their ``scores`` less the base documents the delta removed."""
    if not indexes.lexical.removed or not len(ids):
        return ids, scores
    keep = ~np.isin(ids, _removed_ids(indexes))
    return ids[keep], scores[keep]


def _best(ids: npt.NDArray[np.intp], scores: npt.NDArray[np.float64], cap: int
          ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """The entries scoring at or above the ``cap``-th best (ties included), in order."""
    if len(scores) <= cap:
        return ids, scores
    kth = float(np.partition(scores, len(scores) - cap)[len(scores) - cap])
    chosen = scores >= kth
    return ids[chosen], scores[chosen]


def _bm25_parts(
    indexes: Indexes, query: str
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64], dict[str, float]]:
    """BM25 scores split by where a document lives: the base segment's matching doc
    ids with their scores (removed documents left out), and a dict for the delta."""
    plan = _plan(indexes, query)
    shares = _shares(indexes, plan, plan.terms)
    if _is_dense(indexes, plan):
        dense = _dense_sums(len(indexes.lexical.base.paths), shares)
        hit_ids = np.flatnonzero(dense > 0.0)
        hit_scores = dense[hit_ids]
    else:
        hit_ids, hit_scores = _sparse_sums(shares)
    return (*_live(indexes, hit_ids, hit_scores), plan.delta_scores)


def bm25_scores(indexes: Indexes, query: str) -> dict[str, float]:
    """BM25 (k1 1.2, b 0.75, Robertson-Sparck Jones idf with +1) of every active record
    sharing a token with the query. Each distinct query token counts once."""
    hit_ids, hit_scores, delta_scores = _bm25_parts(indexes, query)
    paths = indexes.lexical.base.paths
    scores = dict(zip((paths[i] for i in hit_ids.tolist()), hit_scores.tolist(), strict=True))
    scores.update(delta_scores)
    return scores


def _base_top(indexes: Indexes, plan: _QueryPlan,
              cap: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """The live base documents scoring at or above the ``cap``-th best (ties
    included), ids ascending, with their scores.

    A query touching many postings is summed into an array the size of the segment,
    and its best are found without listing every match: above a floor the ``cap``-th
    best surely reaches (``_score_floor``), else by one ``partition`` of the array
    (``flatnonzero`` of the whole float array cost more than the sum at 100,000
    documents). Every match scores above zero (idf and saturation are both positive),
    so zeros are exactly the documents not matched.
    """
    shares = _shares(indexes, plan, plan.terms)
    if not _is_dense(indexes, plan):
        return _best(*_live(indexes, *_sparse_sums(shares)), cap)
    size = len(indexes.lexical.base.paths)
    dense = _dense_sums(size, shares)
    floor = 0.0
    if indexes.lexical.removed:
        dense[_removed_ids(indexes)] = 0.0
    else:
        floor = _score_floor(plan, shares, cap)
    if floor > 0.0:
        # At least ``cap`` documents score at or above the floor, so the cap-th best
        # does too: only the few documents above it need sorting out.
        top = np.flatnonzero(dense >= floor)
        return _best(top, dense[top], cap)
    if size > cap:
        kth = float(np.partition(dense, size - cap)[size - cap])
        top = np.flatnonzero(dense >= kth) if kth > 0.0 else np.flatnonzero(dense > 0.0)
    else:
        top = np.flatnonzero(dense > 0.0)
    return top, dense[top]


_FLOOR_TOKENS = 2
"""How many of a query's heaviest tokens (with at least ``cap`` postings) bound the
``cap``-th best score from below; each costs one partition of its postings."""


def _score_floor(plan: _QueryPlan,
                 shares: list[tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]],
                 cap: int) -> float:
    """A score the ``cap``-th best base document reaches for sure, or 0.0.

    ``shares`` holds each of ``plan.terms``' postings with their shares of the score.
    A document's score is a sum of non-negative shares, so it is at least any one of
    them (float addition of a non-negative number never rounds below the other
    addend), and the ``cap``-th largest share among one token's postings is reached
    by ``cap`` distinct documents. Valid only while no base document is removed (a
    removed one's shares are still among the postings).
    """
    heaviest = sorted(((weight, i) for i, (weight, start, end) in enumerate(plan.terms)
                       if end - start >= cap), reverse=True)[:_FLOOR_TOKENS]
    floor = 0.0
    for _weight, i in heaviest:
        share = shares[i][1]
        floor = max(floor, float(np.partition(share, len(share) - cap)[len(share) - cap]))
    return floor


def _lexical_candidates(
    indexes: Indexes, query: str, admit: Callable[[MemoryRecord], bool] | None, cap: int
) -> list[tuple[str, float]]:
    """Scored candidates guaranteed to contain the arm's top ``cap`` (ties included).

    Without a scope the base segment's best are picked in numpy (``_base_top``), so a
    query that matches thousands of records converts only a few dozen to Python
    objects.
    """
    paths = indexes.lexical.base.paths
    if admit is None:
        plan = _plan(indexes, query)
        hit_ids, hit_scores = _base_top(indexes, plan, cap)
        delta_scores = plan.delta_scores
    else:
        hit_ids, hit_scores, delta_scores = _bm25_parts(indexes, query)
    scored = list(zip((paths[i] for i in hit_ids.tolist()), hit_scores.tolist(), strict=True))
    scored.extend(delta_scores.items())
    if admit is not None:
        records = indexes.records
        scored = [(path, score) for path, score in scored if admit(records[path])]
    return scored


def search_head(view: HeadView, search: SearchHeadInput) -> list[SearchHit]:
    """Rank the active records of ``view`` for ``search.query``.

    A version built from two records, searched lexically (no vectors given); each
    hit carries its fused score and, per arm, its rank and the arm's own score:

    >>> from memhtml.format import NewMemoryInput, render_template
    >>> from memhtml.head import SearchHeadInput, record_from, search_head, version_from_records
    >>> def memory(path, title, claim):
    ...     html = render_template(NewMemoryInput(
    ...         title=title, claim=claim, memory_type="semantic", at="2026-01-06T09:00:00Z"))
    ...     return record_from(html, path).unwrap()
    >>> version = version_from_records([
    ...     memory("areas/inbox/deploys.html", "Deploy window", "Deploys happen on Tuesdays."),
    ...     memory("areas/inbox/coffee.html", "Coffee machine", "Coffee is on floor two."),
    ... ], "0" * 40)
    >>> for hit in search_head(version, SearchHeadInput("when do we deploy")):
    ...     print(f"{hit.score:.4f} {hit.path}  {hit.claim}")
    0.0164 areas/inbox/deploys.html  Deploys happen on Tuesdays.
    >>> hits = search_head(version, SearchHeadInput("deploy the coffee machine"))
    >>> [hit.path for hit in hits]
    ['areas/inbox/coffee.html', 'areas/inbox/deploys.html']
    >>> [(rank.arm, rank.rank, round(rank.score, 3)) for rank in hits[0].ranks]
    [('lexical', 1, 1.782)]
    """
    indexes = indexes_of(view)
    records = indexes.records
    admit = search.admit
    limit = max(search.limit, 0)
    fuses_vectors = search.vectors is not None and search.query_vector is not None
    lexical_scored = _lexical_candidates(indexes, search.query, admit, LEXICAL_ARM_LIMIT)
    lexical_ranked, lexical_explained = _explained(
        "lexical", lexical_scored, LEXICAL_ARM_LIMIT, None if fuses_vectors else limit)
    arms: list[tuple[SearchArm, float, list[tuple[str, int]]]] = [
        ("lexical", LEXICAL_WEIGHT, lexical_ranked)
    ]
    explained = [lexical_explained]
    if search.vectors is not None and search.query_vector is not None:
        scored = vector_scores(indexes, search.vectors, search.query_vector, admit,
                               VECTOR_ARM_LIMIT)
        vector_ranked, vector_explained = _explained("vector", scored, VECTOR_ARM_LIMIT)
        weight = search.vector_weight
        arms.append(("vector", finite_weight(weight, VECTOR_WEIGHT), vector_ranked))
        explained.append(vector_explained)
    fused: dict[str, float] = {}
    seen_by: dict[str, list[SearchArm]] = {}
    share_of: dict[str, dict[str, float]] = {}
    if len(arms) == 1:
        # One arm: its order (score, then path) is already the fused order, since
        # the fused score falls as the rank grows and equal ranks sort by path.
        name, weight, ranked = arms[0]
        fused = {path: weight / (RRF_K + rank) for path, rank in ranked}
        seen_by = {path: [name] for path in fused}
        share_of[name] = fused
        order = [path for path, _ in ranked]
    else:
        for (name, weight, ranked), (_, by_path) in zip(arms, explained, strict=True):
            listed = ArmList(name, weight, [(path, rank, by_path[path][1])
                                            for path, rank in ranked])
            share_of[name] = shares(listed, FUSION_RULE)
            for path, share in share_of[name].items():
                fused[path] = fused.get(path, 0.0) + share
                seen_by.setdefault(path, []).append(name)
        order = sorted(fused, key=lambda path: (-fused[path], path))
    now = search.now

    def recency(path: str) -> str:
        key = records[path].recency_key
        return now if now is not None and key > now else key

    hits: list[SearchHit] = []
    start = 0
    # Recency is read only inside a run of exactly equal fused scores: it breaks ties
    # and nothing else, so most queries never look at a timestamp.
    while start < len(order) and len(hits) < limit:
        score = fused[order[start]]
        end = start + 1
        while end < len(order) and fused[order[end]] == score:
            end += 1
        run = order[start:end]
        tied = len(run) > 1
        if tied:
            run.sort(key=recency, reverse=True)  # stable: path order stays within a time
        for path in run[: limit - len(hits)]:
            arms_of = tuple(seen_by[path]) + (("recency",) if tied else ())
            ranks = tuple(ArmRank(arm, *by_path[path], share_of[arm][path])
                          for arm, by_path in explained if path in by_path)
            hits.append(SearchHit(path, score, records[path].claim, arms_of, ranks))
        start = end
    return hits
