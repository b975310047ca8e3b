"""Recall: the few memories relevant to a prompt, or nothing.

A hook adds recall's answer to every prompt a person types, so an answer that is
merely the best of a bad lot costs context on every turn and teaches the agent to
ignore it. So recall ranks lexically (BM25, ``search_head``'s own arm) and then keeps
only a hit with evidence, judged on the prompt's distinct index terms, each weighed
by its BM25 weight over the store (a term no memory holds weighs the most):

- *coverage*: the share of the prompt's weight the memory contains, at least
  ``RECALL_COVERAGE``: a short, focused prompt ("when do we deploy") is all about
  what the memory says;
- or *evidence*: the weight the memory contains, counted in terms as rare as one held
  by a single memory, at least ``RECALL_EVIDENCE``: a long prompt that names two
  things only that memory knows about.

Below both, the hit is dropped; with none left the answer is empty. The two
thresholds were chosen on a grid (``python -m bench.agent --calibrate``) as the pair
that recalls most on the dev halves of SciFact's queries and of prompts written for
the demo store while no off-topic prompt (coding chores unrelated to either store)
recalls anything; docs/benchmarks.md ("The agent's loop") has the grid and the
held-out halves. Evidence is counted in singleton terms rather than in the weight of
a term no memory holds, so that a small store, where every term is rare, asks for
about the same as a large one.

Lexical only, by design of the budget: a cold process that loads the local model
pays about half a second before its first vector (docs/benchmarks.md), more than the
whole recall budget. The vector arm is a second pass for a warm process, not this
door.

Bounded: at most ``limit`` memories, and their lines stop before the token budget
(``agent.tokens``); each line carries the memory's path so the agent can read more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from memhtml.agent.tokens import count_tokens, shortened
from memhtml.contracts.view import HeadView
from memhtml.contracts.vocabulary import OWN_SCOPE
from memhtml.head import SearchHeadInput, search_head
from memhtml.head.indexes import indexes_of
from memhtml.head.lexical import bm25_weight, document_text, index_terms

RECALL_COVERAGE: Final = 0.5
"""The least share of the prompt's weighted terms a recalled memory holds, or..."""
RECALL_EVIDENCE: Final = 1.5
"""...the least weight it holds, in terms held by a single memory."""
RECALL_LIMIT: Final = 5
RECALL_TOKENS: Final = 800
CANDIDATES: Final = 10
"""BM25's best this many are judged for coverage."""
CLAIM_CHARS: Final = 400


@dataclass(frozen=True, slots=True)
class Recalled:
    path: str
    title: str
    claim: str
    coverage: float
    """The share of the prompt's weighted terms the memory contains (0 to 1)."""
    evidence: float
    """The weight it contains, in terms held by one memory."""
    score: float
    """Its BM25 score for the prompt."""
    scope: str = OWN_SCOPE
    """The store it was recalled from (``own``, or a scope of the user's config)."""


@dataclass(frozen=True, slots=True)
class Recall:
    prompt_terms: int
    memories: tuple[Recalled, ...]
    text: str
    """What a hook prints: a heading and one line a memory, or empty."""
    tokens: int
    """``text``'s tokens as ``agent.tokens`` counts them."""
    below_floor: int
    """Candidates BM25 ranked that had neither coverage nor evidence enough."""


def term_weights(view: HeadView, prompt: str) -> dict[str, float]:
    """Each distinct index term of ``prompt`` with its BM25 weight over ``view``'s live
    memories; a term no memory holds weighs as one held by none (the most)."""
    lexical = indexes_of(view).lexical
    documents = lexical.documents
    return {term: bm25_weight(documents, max(lexical.df(term), 0))
            for term in sorted(set(index_terms(prompt)))}


def singleton_weight(view: HeadView) -> float:
    """The BM25 weight of a term one live memory holds: evidence's unit."""
    lexical = indexes_of(view).lexical
    return bm25_weight(max(lexical.documents, 1), 1)


def coverage(weights: dict[str, float], terms: set[str]) -> float:
    """The share of ``weights``' mass whose terms are in ``terms``."""
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    return sum(w for term, w in weights.items() if term in terms) / total


def evidence(weights: dict[str, float], terms: set[str], unit: float) -> float:
    """The mass of ``weights`` whose terms are in ``terms``, in ``unit``s."""
    return sum(w for term, w in weights.items() if term in terms) / unit if unit > 0 else 0.0


def _line(found: Recalled) -> str:
    where = found.path if found.scope == OWN_SCOPE else f"{found.path} in scope {found.scope}"
    return f"- {found.title}: {shortened(found.claim, CLAIM_CHARS)} ({where})"


HEADING: Final = "Memories that may bear on this (memhtml; read one with memory_read):"


def recall(view: HeadView, prompt: str, *, limit: int = RECALL_LIMIT,
           budget: int = RECALL_TOKENS, min_coverage: float = RECALL_COVERAGE,
           min_evidence: float = RECALL_EVIDENCE) -> Recall:
    """The memories of ``view`` the prompt has evidence for (the module docstring),
    in BM25's order, at most ``limit``, their text within ``budget`` tokens."""
    weights = term_weights(view, prompt)
    if not weights or limit <= 0:
        return Recall(len(weights), (), "", 0, 0)
    unit = singleton_weight(view)
    hits = search_head(view, SearchHeadInput(prompt, limit=CANDIDATES))
    kept: list[Recalled] = []
    below = 0
    for hit in hits:
        record = view.get(hit.path)
        if record is None:
            continue
        held = set(index_terms(document_text(record)))
        share, weight = coverage(weights, held), evidence(weights, held, unit)
        if share < min_coverage and weight < min_evidence:
            below += 1
            continue
        lexical = next((r.score for r in hit.ranks if r.arm == "lexical"), 0.0)
        kept.append(Recalled(record.path, record.title, record.claim, round(share, 4),
                             round(weight, 4), round(lexical, 4)))
    return _bounded(len(weights), kept[:limit], budget, below)


def recall_spanning(answers: Sequence[Recall], found: Sequence[Recalled], budget: int
                    ) -> Recall:
    """One answer from the recalls of several scopes: ``found`` (their memories,
    already merged and cut to the limit) within ``budget`` tokens; the counts summed."""
    return _bounded(max((a.prompt_terms for a in answers), default=0), found, budget,
                    sum(a.below_floor for a in answers))


def _bounded(terms: int, found: Sequence[Recalled], budget: int, below: int) -> Recall:
    lines: list[str] = []
    shown: list[Recalled] = []
    used = count_tokens(HEADING)
    for item in found:
        line = _line(item)
        cost = count_tokens(line)
        if used + cost > budget:
            break
        lines.append(line)
        shown.append(item)
        used += cost
    text = "\n".join([HEADING, *lines]) if lines else ""
    return Recall(terms, tuple(shown), text, count_tokens(text), below)


__all__ = ["RECALL_COVERAGE", "RECALL_EVIDENCE", "RECALL_LIMIT", "RECALL_TOKENS", "Recall",
           "Recalled", "recall", "recall_spanning"]
