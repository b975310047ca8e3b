"""Finding the live memory that already holds a claim, before a write stores it twice.

An agent that searches badly, or not at all, writes the same fact again in the same
words; a second file with the same claim only splits the fact's edges, labels and
corrections between two paths. Both edges ask here before a write and decline to
store a copy unless told to.

Two claims are the same claim when they are equal after case folding and with every
run of whitespace taken as one space (``normalised_claim``). That is deliberately
narrower than the head's frame key, which also treats punctuation as a word break:
``x < 3`` and ``x > 3`` share a frame key but are different facts. The frame key is
used only to find the few candidates cheaply; the narrower test decides.
"""

from __future__ import annotations

import unicodedata

from returns.result import Success

from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.format import NewMemoryInput, parse_memory, render_template
from memhtml.head import frame_key_of
from memhtml.store.inputs import WriteInput

__all__ = ["claim_of", "duplicate_of", "normalised_claim"]

_PARSE_STAMP = "2000-01-01T00:00:00Z"
"""Any valid instant: a template rendered only to read its claim back is never stored."""


def normalised_claim(claim: str) -> str:
    """The claim as duplicates are compared: one Unicode form (NFKC, so a decomposed
    accent or a full-width letter is the same claim), case-folded, whitespace runs as
    one space, no leading or trailing space."""
    return " ".join(unicodedata.normalize("NFKC", claim).casefold().split())


def claim_of(data: WriteInput) -> str | None:
    """The claim a write would store: the ``claim`` field (which leads the article
    even beside ``article_html``), or else the ``<mark>`` of ``article_html`` or of a
    whole ``file_html``. None when the markup does not parse; the write door then
    refuses it with every violation, so there is no copy to find."""
    if data.file_html is not None:
        html = data.file_html
    elif data.article_html is not None and not data.claim.strip():
        html = render_template(NewMemoryInput(
            title=data.title or "untitled", claim="", memory_type=data.memory_type or "semantic",
            at=_PARSE_STAMP, article_html=data.article_html))
    else:
        return data.claim
    match parse_memory(html):
        case Success(doc):
            gist: str = doc.article.gist
            return gist
        case _:
            return None


def duplicate_of(view: HeadView, claim: str) -> MemoryRecord | None:
    """The live (active, not archived) memory whose claim equals ``claim`` under
    ``normalised_claim``; the first by path when there are several. None for an
    empty claim."""
    wanted = normalised_claim(claim)
    if not wanted:
        return None
    # The frame-key index reads text as stored, so a claim written in another Unicode
    # form sits under another key: look under each form's key.
    keys = {frame_key_of(unicodedata.normalize(form, claim))
            for form in ("NFC", "NFD", "NFKC", "NFKD")}
    for path in sorted({p for key in keys for p in view.by_frame_key(key)}):
        record = view.get(path)
        if (record is not None and record.status == "active" and not record.archived
                and normalised_claim(record.claim) == wanted):
            return record
    return None
