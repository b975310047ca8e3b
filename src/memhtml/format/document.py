"""The parsed shapes of a memory file. Frozen, so a doc shared between callers cannot
change under a hash one of them already computed.

They live here rather than in ``contracts`` because they are format types: each
extraction field exists only because the HTML has an element that carries it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memhtml.contracts.record import CitationValue, FacetValue, Link
from memhtml.contracts.vocabulary import MemoryStatus, MemoryType, TaskStatus

MemoryLink = Link
"""One ``<link rel="memhtml-*">``: the unprefixed rel, the href as the file spells it."""
Facet = FacetValue
"""One ``<dt>``/``<dd>`` pair. The number from ``<data value>`` is unitless on purpose:
the unit lives in the prose around it."""
Citation = CitationValue
"""One ``<cite>`` or ``<q>``, with the ``<q cite>`` URI when present."""


@dataclass(frozen=True, slots=True)
class MemoryMetas:
    """The head's typed metadata. ``None`` means the file did not state it: no default
    is substituted here, so an omission stays distinguishable from an assertion."""

    memory_type: MemoryType
    status: MemoryStatus
    created_at: str
    updated_at: str
    confidence: float | None = None
    """In [0, 1], two decimals."""
    importance: int | None = None
    """1 to 10, a display ordinal."""
    content_hash: str | None = None
    """What the file claims for its own article. Advisory: reported as written, so a
    stale value shows up in ``doctor`` instead of being silently corrected."""
    author: str | None = None
    session_id: str | None = None
    prompt_id: str | None = None
    turn_uuid: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    reprieves: int | None = None
    archived_at: str | None = None
    superseded_by: str | None = None
    needs_revision: bool | None = None
    task_status: TaskStatus | None = None
    due_at: str | None = None
    source: str | None = None
    """An imported memory's note: its path under the imported folder, as written."""
    source_sha256: str | None = None
    """The hex sha-256 of the note's bytes when it was imported."""
    source_links: str | None = None
    """The link targets the note named (JSON; ``store.markdown_decisions``)."""
    source_shape: str | None = None
    """What the note had that the memory keeps elsewhere (JSON; ``store.markdown_shape``)."""


@dataclass(frozen=True, slots=True)
class ArticleExtractions:
    """What the indexer reads out of ``<article>``, named for what it stores."""

    html: str
    """The article's inner HTML, trimmed: a fixed point of parse-then-write."""
    gist: str
    """The one ``<mark>``: the claim, and only the claim."""
    body_text: str
    """All article text, whitespace-collapsed: the search body and embedding input."""
    event_at: str | None = None
    """The first ``<time datetime>``: when the fact happened (world time)."""
    facets: tuple[FacetValue, ...] = ()
    citations: tuple[CitationValue, ...] = ()
    defined_terms: tuple[str, ...] = ()
    summary_texts: tuple[str, ...] = ()
    aside_texts: tuple[str, ...] = ()
    captions: tuple[str, ...] = ()
    code_langs: tuple[str, ...] = ()
    abbreviations: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MemoryDoc:
    """A parsed memory file."""

    title: str
    metas: MemoryMetas
    article: ArticleExtractions
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    warnings: tuple[str, ...] = field(default=(), compare=False)
    """Diagnostics, not content: left out of equality, since a dropped malformed meta
    warns on the file it came from and is simply absent once the doc is rewritten."""
