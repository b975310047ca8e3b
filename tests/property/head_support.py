"""Shared helpers for head tests: real repositories and generated memory files."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from returns.io import IOResult
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.git import PygitService
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.services import PathChange, Signature
from memhtml.contracts.vocabulary import EdgeRel
from memhtml.format import NewMemoryInput, escape_text, render_template, set_meta
from memhtml.head import record_from

AUTHOR = Signature("memhtml tests", "tests@memhtml.invalid")
AT = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


T = TypeVar("T")
E = TypeVar("E")


def run(io: IOResult[T, E]) -> T:
    """Unwrap an IOResult in a test, failing loudly."""
    return unsafe_perform_io(io.unwrap())


def new_repo(path: Path) -> PygitService:
    return run(PygitService.init(path))


def memory(title: str, claim: str, body: str = "", at: str = "2026-01-01T00:00:00Z",
           entities: tuple[str, ...] = ()) -> str:
    return render_template(
        NewMemoryInput(title=title, claim=claim, memory_type="semantic", at=at,
                       body=(body,) if body else (), entities=entities,
                       detect=lambda _c: None)
    )


def archived(html: str) -> str:
    return set_meta(set_meta(html, "memhtml-status", "archived"), "memhtml-archived",
                    "2026-11-01T00:00:00Z")


def commit(git: PygitService, parent: str | None, changes: Mapping[str, str | None],
           message: str = "test") -> str:
    return run(
        git.commit(
            "refs/heads/main",
            parent,
            [PathChange(p, None if v is None else v.encode()) for p, v in sorted(changes.items())],
            message,
            AUTHOR,
            AT,
        )
    )


def memory_with(title: str, claim: str, body: str = "", *, at: str = "2026-01-01T00:00:00Z",
                event_at: str | None = None, links: tuple[tuple[EdgeRel, str], ...] = (),
                entities: tuple[str, ...] = ()) -> str:
    """A memory with optional supersedes-style links and an event time.

    The event time rides in a ``<time datetime>`` whose text is ``then``, a stop word,
    so it moves recency without adding a token to the lexical arm.
    """
    article = f"<p><mark>{escape_text(claim)}</mark>"
    if body:
        article += f" {escape_text(body)}"
    if event_at is not None:
        article += f' <time datetime="{event_at}">then</time>'
    article += "</p>"
    return render_template(
        NewMemoryInput(title=title, claim=claim, memory_type="semantic", at=at,
                       article_html=article, entities=entities,
                       links=tuple(Link(rel, href) for rel, href in links),
                       detect=lambda _c: None)
    )


def record_at(path: str, html: str) -> MemoryRecord:
    """Parse ``html`` as the record at ``path``, failing loudly when it is not a memory."""
    return record_from(html, path).unwrap()
