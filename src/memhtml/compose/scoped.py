"""Reads that span scopes: search, recall and brief over the own store and the others.

Each scope is searched alone, with its own services (its embedder, its vectors, its
branch), and the answers are merged by rank, not by score: a fused score is
comparable within one result list only (BM25's weights depend on the corpus, and two
stores may search with different embedders), so the merge is reciprocal rank with one
weight for every scope, which is a round: every scope's first hit, then every scope's
second, and so on, the own store first in each round and the others by name
(``interleave``). That order is total (a place in one scope's list, then the scope),
so the merge is deterministic, and a scope named alone answers exactly as its store
does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from returns.io import IOResult, IOSuccess
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.contracts.vocabulary import OWN_SCOPE

if TYPE_CHECKING:
    from memhtml.agent.brief import Brief
    from memhtml.agent.recall import Recall
    from memhtml.compose.scopes import BrokenScope
    from memhtml.compose.search import Searched
    from memhtml.compose.services import Services
    from memhtml.head import SearchHit
    from memhtml.store import Store, StoreError

T = TypeVar("T")
R = TypeVar("R")


def scope_order(name: str) -> tuple[bool, str]:
    """The own store first, then the other scopes by name."""
    return name != OWN_SCOPE, name


def interleave(ranked: Sequence[tuple[str, Sequence[T]]], limit: int
               ) -> list[tuple[str, T]]:
    """The best ``limit`` of several scopes' ranked lists, each item with its scope:
    the first of every scope, then the second of every scope, and so on, the scopes in
    ``scope_order`` (reciprocal rank with one weight per scope, ties to the scope
    order). The scopes' names are distinct; the order the lists come in does not
    matter.

    >>> from memhtml.compose.scoped import interleave
    >>> interleave([("team", ["t1", "t2"]), ("own", ["o1", "o2", "o3"])], 4)
    [('own', 'o1'), ('team', 't1'), ('own', 'o2'), ('team', 't2')]
    """
    keyed = sorted(((place, scope_order(name), name, item)
                    for name, items in ranked for place, item in enumerate(items)),
                   key=lambda entry: (entry[0], entry[1]))
    return [(name, item) for _, _, name, item in keyed[:max(limit, 0)]]


@dataclass(frozen=True)
class Answering:
    """One scope a read asks: its name, its services and a store over them."""

    name: str
    services: Services
    store: Store


@dataclass(frozen=True, slots=True)
class ScopeNote:
    """A scope a spanning read could not use, or what it said about its answer."""

    scope: str
    note: str


@dataclass(frozen=True)
class ScopedSearch:
    """A search over several scopes: the merged hits with their scopes, each scope's
    own answer (mode, arms, commit, note), and the notes of scopes that did not
    answer."""

    hits: list[tuple[str, SearchHit]]
    answers: tuple[tuple[str, Searched], ...]
    skipped: tuple[ScopeNote, ...] = ()


def _span(scopes: Sequence[Answering], ask: Callable[[Answering], IOResult[R, StoreError]],
          broken: Sequence[BrokenScope]
          ) -> IOResult[tuple[list[tuple[str, R]], tuple[ScopeNote, ...]], StoreError]:
    """Each scope's answer, in order; the first scope's failure is the read's (it is
    the own store, or the one scope named), a later one's is a note, as is a scope
    that could not be opened."""
    notes = [ScopeNote(b.name, f"{b.reason}; the other scopes answered") for b in broken]
    answers: list[tuple[str, R]] = []
    for index, scope in enumerate(scopes):
        answer = ask(scope)
        if is_successful(answer):
            answers.append((scope.name, unsafe_perform_io(answer.unwrap())))
        elif index == 0:
            return answer.map(lambda _: ([], ()))
        else:
            from memhtml.compose.run import explain

            why = explain(unsafe_perform_io(answer.failure()))
            notes.append(ScopeNote(scope.name, f"scope {scope.name} did not answer: {why}"))
    return IOSuccess((answers, tuple(notes)))


def search_scopes(scopes: Sequence[Answering], query: str, *, limit: int = 10,
                  broken: Sequence[BrokenScope] = (), at: str | None = None,
                  as_of: str | None = None, types: Sequence[str] = (),
                  entities: Sequence[str] = (), tags: Sequence[str] = (),
                  prefix: str | None = None) -> IOResult[ScopedSearch, StoreError]:
    """``compose.search.search_memories`` in each scope (the same filters), the hits
    merged by ``interleave``."""
    from memhtml.compose.search import search_memories

    def ask(scope: Answering) -> IOResult[Searched, StoreError]:
        return search_memories(scope.services, scope.store, query, at=at, as_of=as_of,
                               types=types, entities=entities, tags=tags, prefix=prefix,
                               limit=limit)

    return _span(scopes, ask, broken).map(lambda done: ScopedSearch(
        interleave([(name, found.hits) for name, found in done[0]], limit),
        tuple(done[0]), done[1]))


@dataclass(frozen=True)
class ScopedRecall:
    recall: Recall
    skipped: tuple[ScopeNote, ...] = ()


def recall_scopes(scopes: Sequence[Answering], prompt: str, *, limit: int, budget: int,
                  broken: Sequence[BrokenScope] = ()) -> IOResult[ScopedRecall, StoreError]:
    """Recall in each scope (its own evidence rule over its own corpus), the memories
    merged by ``interleave`` and cut to ``limit``, their lines to ``budget``."""
    from memhtml.agent.recall import recall_spanning
    from memhtml.compose.agent import recall_of

    def ask(scope: Answering) -> IOResult[Recall, StoreError]:
        return recall_of(scope.store, prompt, limit=limit, budget=budget)

    def merged(done: tuple[list[tuple[str, Recall]], tuple[ScopeNote, ...]]) -> ScopedRecall:
        answers = done[0]
        if len(answers) == 1 and answers[0][0] == OWN_SCOPE:
            return ScopedRecall(answers[0][1], done[1])
        found = interleave([(name, [replace(m, scope=name) for m in found.memories])
                            for name, found in answers], limit)
        return ScopedRecall(recall_spanning([a for _, a in answers],
                                            [m for _, m in found], budget), done[1])

    return _span(scopes, ask, broken).map(merged)


@dataclass(frozen=True)
class ScopedBrief:
    brief: Brief
    skipped: tuple[ScopeNote, ...] = ()


def brief_scopes(scopes: Sequence[Answering], *, budget: int, items: int,
                 broken: Sequence[BrokenScope] = ()) -> IOResult[ScopedBrief, StoreError]:
    """The brief of each scope, the budget shared equally (the own store takes what
    division leaves over), joined in scope order: one Brief whose parts and lines name
    the scope they come from."""
    from memhtml.agent.brief import Brief, Part
    from memhtml.agent.tokens import count_tokens
    from memhtml.compose.agent import brief_of

    share = max(budget // max(len(scopes), 1), 1)
    first = budget - share * (len(scopes) - 1) if scopes else budget

    def ask(scope: Answering) -> IOResult[Brief, StoreError]:
        mine = first if scope is scopes[0] else share
        return brief_of(scope.services, scope.store, budget=mine, items=items,
                        scope=scope.name)

    def joined(done: tuple[list[tuple[str, Brief]], tuple[ScopeNote, ...]]) -> ScopedBrief:
        answers = done[0]
        if len(answers) == 1:
            return ScopedBrief(answers[0][1], done[1])
        parts = tuple(part if name == OWN_SCOPE else Part(f"{name}: {part.heading}",
                                                           part.lines, part.more)
                      for name, found in answers for part in found.parts)
        text = "\n\n".join(found.text for _, found in answers)
        return ScopedBrief(Brief(sum(found.memories for _, found in answers), parts, text,
                                 count_tokens(text)), done[1])

    return _span(scopes, ask, broken).map(joined)


__all__ = ["Answering", "ScopeNote", "ScopedBrief", "ScopedRecall", "ScopedSearch",
           "brief_scopes", "interleave", "recall_scopes", "scope_order", "search_scopes"]
