"""Compress's candidates: the memories in the compress band, grouped by community (and,
in a deep run, by a shared entity), ordered so the prompt bytes are a function of the
corpus alone, capped, and cut into one batch per group (``select``, ``batches_of``);
and, for a deep run's next pass, the corpus it selects from (``next_corpus``).

Its own module because choosing what is offered is code's half of the phase and needs
no model: it reads the corpus, the access counts and the graph, and hands ``compress``
the groups to ask about. The rules it follows are in ``compress``'s module docstring
(**Candidates**, **Order**, **Batches**, **What is never folded**, and the entity
groups of **Deep sleep**).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import AccessCount
from memhtml.domain.graph import label_propagation
from memhtml.domain.thresholds import COMPRESS_BATCH, COMPRESS_CANDIDATES, ENTITY_HUB_CLAIMANTS
from memhtml.head import IndexedView, VectorCache
from memhtml.sleep.batch import pack_groups
from memhtml.sleep.neighbours import corpus_order
from memhtml.sleep.phase import MinedEdge
from memhtml.sleep.phases.compress_prompt import MIN_ABSORBED, Candidate
from memhtml.sleep.phases.relationship_mining import neighbour_edges
from memhtml.sleep.phases.retention_triage import (
    graph_edges as retention_edges,
)
from memhtml.sleep.phases.retention_triage import (
    is_scored,
    retention_inputs,
    triage,
)
from memhtml.sleep.protected import Protection, Refusal

ENTITY_GROUP: Final = "entity:"
"""Prefixed to an entity to name the group it formed."""


@dataclass(frozen=True, slots=True)
class Selection:
    """The night's candidates grouped by community (then, in a deep run, by entity), in
    prompt order, and what was left."""

    groups: tuple[tuple[Candidate, ...], ...]
    band: int
    without_community: int
    singletons: int
    capped: int
    entity_groups: int = 0
    """Of ``groups``, those formed by a shared entity (the last ones)."""
    entity_grouped: int = 0
    """Community-less candidates an entity grouped (before the cap)."""
    hubs_skipped: int = 0
    protected: tuple[Refusal, ...] = ()
    """Members taken out of their group, each with why (``sleep.protected``)."""

    @property
    def candidates(self) -> int:
        return sum(len(group) for group in self.groups)


@dataclass(frozen=True, slots=True)
class Corpus:
    """What one pass selects from: the version (a plan's view after an earlier pass),
    the mined edges, and the grouping band (None outside ``--deep``)."""

    view: IndexedView
    mined: tuple[MinedEdge, ...] | None
    lateral: tuple[MinedEdge, ...] | None = None


def _oldest_first(records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
    return sorted(records, key=lambda r: (r.created_at, r.path))


def _grouping_edges(corpus: Corpus) -> tuple[MinedEdge, ...] | None:
    """The derived edges communities are found over: the mined ones, and in a deep run
    the grouping band too."""
    if corpus.lateral is None:
        return corpus.mined
    return (*(corpus.mined or ()), *corpus.lateral)


def entity_groups(view: IndexedView, pending: Sequence[MemoryRecord]
                  ) -> tuple[tuple[tuple[str, tuple[MemoryRecord, ...]], ...], int]:
    """Community-less candidates grouped by a shared entity (module docstring), each
    group's members in ``pending``'s order: ((entity, members), ...), and the hubs
    skipped."""
    claiming: dict[str, list[MemoryRecord]] = {}
    for record in pending:
        for entity in set(record.entities):
            claiming.setdefault(entity, []).append(record)
    grouped: set[str] = set()
    groups: list[tuple[str, tuple[MemoryRecord, ...]]] = []
    hubs = 0
    for entity in sorted(claiming):
        claimants = sum(1 for path in view.by_entity(entity)
                        if (r := view.get(path)) is not None and is_scored(r))
        if claimants > ENTITY_HUB_CLAIMANTS:
            hubs += 1
            continue
        members = tuple(r for r in claiming[entity] if r.path not in grouped)
        if len(members) < MIN_ABSORBED:
            continue
        grouped.update(r.path for r in members)
        groups.append((entity, members))
    return tuple(groups), hubs


def select(corpus: Corpus, accesses: Mapping[str, AccessCount], stamp: datetime,
           *, deep: bool = False, protection: Protection | None = None) -> Selection:
    """The compress band's members with a community (and, when ``deep``, those an
    entity groups), grouped and ordered (module docstring), at most
    ``COMPRESS_CANDIDATES`` of them; a member ``protection`` refuses is taken out of
    its group and listed."""
    view = corpus.view
    # Scored without the grouping band: it may group memories, never rank them.
    bands = triage(retention_inputs(view, accesses, corpus.mined, stamp)).bands
    scored = {r.path: r for r in view.records() if is_scored(r)}
    communities = label_propagation(retention_edges(scored, _grouping_edges(corpus)))
    grouped: dict[str, list[MemoryRecord]] = {}
    pending: list[MemoryRecord] = []
    band = without = 0
    for path, which in bands.items():
        if which != "compress":
            continue
        band += 1
        community = communities.get(path)
        if community is None:
            without += 1
            pending.append(scored[path])
            continue
        grouped.setdefault(community, []).append(scored[path])
    named: list[tuple[str, list[MemoryRecord]]] = [
        (name, _oldest_first(grouped[name])) for name in sorted(grouped)]
    by_entity: tuple[tuple[str, tuple[MemoryRecord, ...]], ...] = ()
    hubs = 0
    if deep:
        by_entity, hubs = entity_groups(view, _oldest_first(pending))
    groups: list[tuple[Candidate, ...]] = []
    singletons = capped = entities = 0
    room = COMPRESS_CANDIDATES
    ordered = named + [(ENTITY_GROUP + e, list(m)) for e, m in by_entity]
    refused: list[Refusal] = []
    for n, (name, grouped_members) in enumerate(ordered):
        members = grouped_members
        if protection is not None and len(members) >= MIN_ABSORBED:
            kept: list[MemoryRecord] = []
            for record in members:
                refusal = protection.refusal(record.path)
                if refusal is None:
                    kept.append(record)
                else:
                    refused.append(refusal)
            members = kept
        if len(members) < MIN_ABSORBED:
            singletons += 1
            continue
        taken = members[:room]
        capped += len(members) - len(taken)
        room -= len(taken)
        if len(taken) >= MIN_ABSORBED:
            groups.append(tuple(Candidate(r, name) for r in taken))
            entities += n >= len(named)
        else:
            capped += len(taken)
    return Selection(tuple(groups), band, without, singletons, capped, entities,
                     sum(len(m) for _, m in by_entity), hubs, tuple(refused))


def batches_of(selection: Selection) -> tuple[tuple[tuple[Candidate, ...], ...], int]:
    """One group a batch (``pack_groups`` over it alone), and the lone members a cut
    left in a batch of their own, which are not asked about."""
    out: list[tuple[Candidate, ...]] = []
    lone = 0
    for group in selection.groups:
        for batch in pack_groups((group,), COMPRESS_BATCH):
            if len(batch) >= MIN_ABSORBED:
                out.append(batch)
            else:
                lone += len(batch)
    return tuple(out), lone


def next_corpus(corpus: Corpus, view: IndexedView, fresh: Sequence[str],
                cache: VectorCache | None) -> Corpus:
    """The corpus the next pass selects from: ``view`` (after the last pass), the
    derived edges between memories still active in it, and the ``fresh`` canonicals'
    edges in both bands."""
    members = corpus_order(view)
    at = {record.path: n for n, record in enumerate(members)}
    new = frozenset(fresh)

    def live(edges: tuple[MinedEdge, ...] | None) -> tuple[MinedEdge, ...]:
        # A new canonical's path may be one an archived member left: an old edge there
        # is the member's, not the canonical's.
        return tuple(e for e in edges or () if e.source in at and e.target in at
                     and e.source not in new and e.target not in new)

    sources = [at[path] for path in fresh if path in at]
    found: tuple[tuple[MinedEdge, ...], tuple[MinedEdge, ...]] = ((), ())
    if cache is not None and sources:
        found = neighbour_edges(members, cache, sources)
    lateral = None if corpus.lateral is None else tuple(sorted(
        (*live(corpus.lateral), *found[1])))
    return Corpus(view, tuple(sorted((*live(corpus.mined), *found[0]))), lateral)
