"""Joining two versions of one memory whose article is the same: a head-only merge.

Two clones that both touched a memory without changing its claim (one added a tag,
the other stamped a confidence or archived it in place) disagree only about the
head, and the head is a set of independent lines. So the merge is three-way per
field against the common ancestor, rather than "later file wins":

- **Repeatables and edges** (entities, tags, aliases, ``<link rel="memhtml-...">``)
  are sets. What either side added is kept; what one side removed from the
  ancestor is removed, unless the other side added it anew. A plain union would
  resurrect the edge an archive move rewrote (``/x.html`` became
  ``/archive/2026/x.html`` on one side) and leave the old one dangling. With no
  ancestor (both sides added the file) it is the union.
- **Scalars** take the side that changed them. When both changed one, the version
  with the later ``memhtml-updated`` wins it, ties broken by the greater file bytes,
  so the choice is the same whichever clone runs the merge. Scalars that only make
  sense together move as one group (a type and its task status; a status, its
  archived stamp and its superseded-by), so a mix of two sides can never leave an
  archived stamp on an active memory.
- **The title** is the one head element no meta editor owns; it comes from the side
  that changed it, else from the winner.

The result is built with the format's surgical editors over one side's bytes, so it
stays a reviewable diff and the article (and its hash) is never touched. It must
pass ``check_memory``; a result that would not (two valid heads whose join is not)
falls back to the winner's scalars, and failing that the caller keeps both files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from returns.result import Success

from memhtml.contracts.record import Link
from memhtml.format import (
    REPEATABLE_META,
    MemoryDoc,
    RepeatableMeta,
    add_link,
    add_meta,
    check_memory,
    meta_pairs,
    parse_memory_hashed,
    read_meta,
    remove_link,
    remove_meta,
    set_meta,
)
from memhtml.format.vocabulary import META_ORDER

_T = TypeVar("_T")

_SOURCE_GROUP = ("memhtml-source", "memhtml-source-sha256", "memhtml-source-links",
                 "memhtml-source-shape")
SCALAR_GROUPS: tuple[tuple[str, ...], ...] = (
    ("memhtml-type", "memhtml-task-status", "memhtml-due"),
    ("memhtml-status", "memhtml-archived", "memhtml-superseded-by"),
    _SOURCE_GROUP,
    *((name,) for name in META_ORDER
      if name not in REPEATABLE_META and name not in _SOURCE_GROUP
      and name not in ("memhtml-type", "memhtml-task-status", "memhtml-due",
                       "memhtml-status", "memhtml-archived", "memhtml-superseded-by")),
)
"""Every scalar meta, in the groups that are merged as one unit (an import's four
provenance metas describe one note together: one side's set, never a mix)."""


@dataclass(frozen=True, slots=True)
class Version:
    """One side's blob at a path, read once: the bytes, the text when it is UTF-8,
    and the parsed memory with its article hash when it is a valid memory file."""

    raw: bytes
    text: str | None
    doc: MemoryDoc | None
    article_hash: str | None

    @property
    def updated(self) -> str:
        """The ``memhtml-updated`` stamp, read tolerantly from an invalid file too."""
        if self.doc is not None:
            return self.doc.metas.updated_at
        if self.text is None:
            return ""
        return read_meta(self.text, "memhtml-updated") or ""

    @property
    def created(self) -> str:
        if self.doc is not None:
            return self.doc.metas.created_at
        if self.text is None:
            return ""
        return read_meta(self.text, "memhtml-created") or ""

    def later_key(self) -> tuple[str, bytes]:
        """The order that decides which version wins a tie of intent: the later
        ``memhtml-updated``, then the greater bytes. Total and symmetric: it depends on
        the version alone, never on which side it came from."""
        return (self.updated, self.raw)


def read_version(raw: bytes) -> Version:
    """Decode and parse a blob; anything that is not UTF-8 or not a valid memory keeps
    only its bytes (and its text, when it has one)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Version(raw, None, None, None)
    match parse_memory_hashed(text):
        case Success((doc, article_hash)):
            return Version(raw, text, doc, article_hash)
        case _:
            return Version(raw, text, None, None)


def _scalars(doc: MemoryDoc | None) -> dict[str, str]:
    if doc is None:
        return {}
    return {name: value for name, value in meta_pairs(doc) if name not in REPEATABLE_META}


def _repeatables(doc: MemoryDoc) -> dict[RepeatableMeta, tuple[str, ...]]:
    return {"memhtml-entity": doc.entities, "memhtml-tag": doc.tags,
            "memhtml-alias": doc.aliases}


def three_way_set(base: Sequence[_T] | None, winner: Sequence[_T], loser: Sequence[_T]
                  ) -> list[_T]:
    """The members both sides mean to keep: the winner's order, then the loser's
    additions. A member of the ancestor that either side dropped stays dropped."""
    ancestor = set(base) if base is not None else set()
    won, lost = set(winner), set(loser)
    out: list[_T] = []
    for item in (*winner, *loser):
        if item in out:
            continue
        if item in ancestor and (item not in won or item not in lost):
            continue
        out.append(item)
    return out


def _scalar_plan(base: dict[str, str] | None, winner: dict[str, str], loser: dict[str, str]
                 ) -> dict[str, str]:
    """Per group: the side that changed it, the winner's when both did."""
    out: dict[str, str] = {}
    for group in SCALAR_GROUPS:
        won = tuple(winner.get(n) for n in group)
        lost = tuple(loser.get(n) for n in group)
        pick = won
        if base is not None and won != lost and won == tuple(base.get(n) for n in group):
            pick = lost
        out.update({n: v for n, v in zip(group, pick, strict=True) if v is not None})
    return out


def _apply(start: Version, scalars: dict[str, str],
           repeatables: dict[RepeatableMeta, list[str]],
           links: list[Link]) -> str:
    """``start``'s text edited until its head states exactly what was planned."""
    assert start.text is not None and start.doc is not None
    text = start.text
    current = _scalars(start.doc)
    for scalar in META_ORDER:
        if scalar in REPEATABLE_META or current.get(scalar) == scalars.get(scalar):
            continue
        value = scalars.get(scalar)
        text = remove_meta(text, scalar) if value is None else set_meta(text, scalar, value)
    for name, values in _repeatables(start.doc).items():
        wanted = repeatables[name]
        for value in values:
            if value not in wanted:
                text = remove_meta(text, name, value)
        for value in wanted:
            if value not in values:
                text = add_meta(text, name, value)
    for link in start.doc.links:
        if link not in links:
            text = remove_link(text, link.rel, link.href)
    for link in links:
        if link not in start.doc.links:
            text = add_link(text, link.rel, link.href)
    return text


def _states(text: str, article_hash: str, scalars: dict[str, str],
            repeatables: dict[RepeatableMeta, list[str]], links: list[Link]) -> bool:
    """Whether the edited file passes the checker, keeps the article, and says what
    was planned: an editor leaves a head it cannot splice as it was, and a join that
    silently dropped one side's edits must not pass for one."""
    if check_memory(text).violations:
        return False
    match parse_memory_hashed(text):
        case Success((MemoryDoc() as doc, str() as found)):
            return (found == article_hash and _scalars(doc) == scalars
                    and {n: set(v) for n, v in _repeatables(doc).items()}
                    == {n: set(v) for n, v in repeatables.items()}
                    and set(doc.links) == set(links))
        case _:
            return False


def join_heads(base: Version | None, one: Version, two: Version) -> str | None:
    """The joined file of two valid versions with one article hash, or None when no
    join passes the checker (the caller then keeps both)."""
    assert one.doc is not None and two.doc is not None and one.article_hash is not None
    winner, loser = (one, two) if one.later_key() >= two.later_key() else (two, one)
    assert winner.doc is not None and loser.doc is not None
    ancestor = base.doc if base is not None else None
    start = winner
    if (ancestor is not None and winner.doc.title == ancestor.title
            and loser.doc.title != ancestor.title):
        start = loser
    won_reps, lost_reps = _repeatables(winner.doc), _repeatables(loser.doc)
    base_reps = _repeatables(ancestor) if ancestor is not None else None
    repeatables = {name: three_way_set(None if base_reps is None else base_reps[name],
                                       won_reps[name], lost_reps[name])
                   for name in REPEATABLE_META}
    links = three_way_set(None if ancestor is None else ancestor.links,
                          winner.doc.links, loser.doc.links)
    plans: tuple[Callable[[], dict[str, str]], ...] = (
        lambda: _scalar_plan(None if ancestor is None else _scalars(ancestor),
                             _scalars(winner.doc), _scalars(loser.doc)),
        lambda: _scalars(winner.doc),
    )
    for plan in plans:
        scalars = plan()
        text = _apply(start, scalars, repeatables, links)
        if _states(text, one.article_hash, scalars, repeatables, links):
            return text
    return None
