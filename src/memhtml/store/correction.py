"""What a correction writes: the call's fields, and the corrected memory's for the rest.

Apart from ``store.plan``, which lands the correction, because this is one pure rule
(a record and a request in, a request out) that the door, and a reader of what
``correct`` keeps, can read alone.
"""

from __future__ import annotations

from dataclasses import replace

from memhtml.contracts.record import MemoryRecord
from memhtml.format import parse_memory
from memhtml.format.template import article_with_claim, article_without_terms
from memhtml.store.inputs import WriteInput

PROVENANCE = "memhtml-source"
"""The facets an import writes about where a memory came from (``memhtml-source``,
its digest and its links): true of the imported memory, not of its correction,
which is the person's own; a re-import then leaves the correction alone."""


def carried_forward(old: MemoryRecord, data: WriteInput) -> WriteInput:
    """What a correction of ``old`` writes: ``data``, with every field it leaves unset
    taken from ``old``: the title, type, entities, tags, aliases, outbound links (all
    but ``supersedes``, which the correction states anew), confidence, importance,
    author, validity, task status and due date, and the article. A new claim alone
    replaces the claim's ``<mark>`` text and keeps every other word of the article (its
    body, lists, figures, facets, citations; not an import's ``PROVENANCE`` facets); a
    new body or article replaces it whole.
    A whole file (``file_html``) is taken as given. So a correction with only a claim
    changes only the claim, the supersedes edge and the dates."""
    if data.file_html is not None:
        return data
    article, body = data.article_html, data.body
    if article is None and not body:
        kept = parse_memory(old.html).map(
            lambda doc: article_without_terms(doc.article.html, PROVENANCE)).value_or(None)
        if kept is not None and data.claim:
            kept = article_with_claim(kept, data.claim)
        article = kept
    return replace(
        data,
        title=data.title or old.title,
        claim=data.claim or (old.claim if article is None else ""),
        memory_type=data.memory_type or old.memory_type,
        article_html=article,
        entities=data.entities or old.entities,
        tags=data.tags or old.tags,
        aliases=data.aliases or old.aliases,
        links=data.links or tuple(link for link in old.links if link.rel != "supersedes"),
        confidence=old.confidence if data.confidence is None else data.confidence,
        importance=old.importance if data.importance is None else data.importance,
        author=data.author or old.author,
        valid_from=data.valid_from or old.valid_from,
        valid_until=data.valid_until or old.valid_until,
        task_status=data.task_status or old.task_status,
        due_at=data.due_at or old.due_at,
    )
