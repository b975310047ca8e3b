"""A session's view: a base version with pending ops applied, before any commit.

Each op goes through ``insert_record``/``remove_record`` and the head editors, the
same writers a commit of those ops would produce through, so an overlay equals the
version loaded from the tree the ops would commit. The overlay keeps the base's
commit sha (it has none of its own) and stops at the first op that does not parse
or resolve, naming it.
"""

from __future__ import annotations

import re
from typing import assert_never

from returns.result import Failure, Result, Success

from memhtml.contracts.errors import InvalidMemory, OverlayError, OverlayRefused
from memhtml.contracts.ops import (
    Archive,
    Label,
    LinkOp,
    Move,
    OverlayOp,
    Put,
    Unarchive,
    Unlabel,
    UnlinkOp,
)
from memhtml.contracts.paths import check_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.contracts.vocabulary import is_edge_rel
from memhtml.format import add_link, add_meta, remove_link, remove_meta
from memhtml.head.indexes import IndexedView, Indexes, indexes_of, insert_record, remove_record
from memhtml.head.record import is_archived_path, record_from

ENTITY = re.compile(r"[a-z][a-z0-9_-]*:\S(?:.*\S)?")
"""``type:name``: a lowercase type, a colon, and a name with no edge whitespace."""


def is_entity(value: str) -> bool:
    """True for a well-formed ``type:name`` entity reference."""
    return ENTITY.fullmatch(value) is not None and "\n" not in value


_OP_NAMES = {Put: "put", Archive: "archive", LinkOp: "link", UnlinkOp: "unlink", Label: "label",
             Unlabel: "unlabel", Move: "move", Unarchive: "unarchive"}


def _refuse(op: OverlayOp, reason: str) -> Failure[OverlayRefused]:
    return Failure(OverlayRefused(_OP_NAMES[type(op)], op.path, reason))


def _held(indexes: Indexes, op: OverlayOp) -> Result[MemoryRecord, OverlayError]:
    record = indexes.records.get(op.path)
    if record is None:
        return _refuse(op, "no memory at this path in the view")
    return Success(record)


def _reparse(indexes: Indexes, html: str, path: str) -> Result[Indexes, OverlayError]:
    parsed: Result[MemoryRecord, InvalidMemory] = record_from(html, path)
    return parsed.map(lambda record: insert_record(indexes, record)).alt(lambda e: e)


def _edit(
    indexes: Indexes, record: MemoryRecord, html: str
) -> Result[Indexes, OverlayError]:
    if html == record.html:
        return Success(indexes)
    return _reparse(indexes, html, record.path)


def apply_op(indexes: Indexes, op: OverlayOp) -> Result[Indexes, OverlayError]:
    """One op against one ``Indexes`` value."""
    for named in (op.path, getattr(op, "to", None)):
        if isinstance(named, str):
            checked = check_tree_path(named)
            if isinstance(checked, Failure):
                return _refuse(op, checked.failure().reason)
    match op:
        case Put(path=path, html=html):
            return _reparse(indexes, html, path)
        case Archive(path=path, to=to, html=html):
            if not is_archived_path(to):
                return _refuse(op, f"archive destination {to!r} is not under archive/")
            if to in indexes.records and to != path:
                return _refuse(op, f"{to!r} already holds a memory")
            return _held(indexes, op).bind(
                lambda _r: _reparse(remove_record(indexes, path), html, to)
            )
        case LinkOp(rel=rel, href=href):
            if not is_edge_rel(rel):
                return _refuse(op, f"{rel!r} is not an edge rel")
            return _held(indexes, op).bind(
                lambda r: _edit(indexes, r, add_link(r.html, rel, href))
            )
        case UnlinkOp(rel=rel, href=href):
            if not is_edge_rel(rel):
                return _refuse(op, f"{rel!r} is not an edge rel")

            def unlink(r: MemoryRecord) -> Result[Indexes, OverlayError]:
                if not any(link.rel == rel and link.href == href for link in r.links):
                    return _refuse(op, f"the file carries no {rel} link to {href}")
                return _edit(indexes, r, remove_link(r.html, rel, href))

            return _held(indexes, op).bind(unlink)
        case Label(entity=entity):
            if not is_entity(entity):
                return _refuse(op, f"{entity!r} is not a type:name entity")
            return _held(indexes, op).bind(
                lambda r: _edit(indexes, r, add_meta(r.html, "memhtml-entity", entity))
            )
        case Unlabel(entity=entity):

            def unlabel(r: MemoryRecord) -> Result[Indexes, OverlayError]:
                if entity not in r.entities:
                    return _refuse(op, f"the file is not labelled {entity}")
                return _edit(indexes, r, remove_meta(r.html, "memhtml-entity", entity))

            return _held(indexes, op).bind(unlabel)
        case Move(path=path, to=to):

            def move(r: MemoryRecord) -> Result[Indexes, OverlayError]:
                if r.archived:
                    return _refuse(op, "an archived memory is not moved")
                if to in indexes.records:
                    return _refuse(op, f"{to!r} already holds a memory")
                return _reparse(remove_record(indexes, path), r.html, to)

            return _held(indexes, op).bind(move)
        case Unarchive(path=path, to=to, html=html):
            if not is_archived_path(path):
                return _refuse(op, "only an archived memory is brought back live")
            if is_archived_path(to):
                return _refuse(op, f"restore destination {to!r} is under archive/")
            if to in indexes.records:
                return _refuse(op, f"{to!r} already holds a memory")
            return _held(indexes, op).bind(
                lambda _r: _reparse(remove_record(indexes, path), html, to)
            )
        case _ as never:
            assert_never(never)


def with_overlay(base: HeadView, ops: list[OverlayOp] | tuple[OverlayOp, ...]
                 ) -> Result[IndexedView, OverlayError]:
    """``base`` with ``ops`` applied in order, keeping the base's sha.

    A pending write is searchable before it is committed, and the base is untouched;
    an op that does not parse or resolve is refused, naming it:

    >>> from memhtml.contracts.ops import Label, Put
    >>> from memhtml.format import NewMemoryInput, render_template
    >>> from memhtml.head import (
    ...     SearchHeadInput, record_from, search_head, version_from_records, with_overlay)
    >>> def memory(title, claim):
    ...     return render_template(NewMemoryInput(
    ...         title=title, claim=claim, memory_type="semantic", at="2026-01-06T09:00:00Z"))
    >>> deploys = memory("Deploy window", "Deploys happen on Tuesdays.")
    >>> record = record_from(deploys, "areas/inbox/deploys.html").unwrap()
    >>> base = version_from_records([record], "0" * 40)
    >>> days = memory("Deploy days", "Deploys happen on Tuesdays and Thursdays.")
    >>> pending = with_overlay(base, [Put("areas/inbox/deploy-days.html", days)]).unwrap()
    >>> pending.size, base.size, pending.sha == base.sha
    (2, 1, True)
    >>> [hit.path for hit in search_head(pending, SearchHeadInput("deploys on Thursdays"))]
    ['areas/inbox/deploy-days.html', 'areas/inbox/deploys.html']
    >>> refused = with_overlay(base, [Label("areas/inbox/deploys.html", "checkout")]).failure()
    >>> refused.op, refused.reason
    ('label', "'checkout' is not a type:name entity")
    """
    indexes = indexes_of(base)
    for op in ops:
        match apply_op(indexes, op):
            case Success(next_indexes):
                indexes = next_indexes
            case Failure(error):
                return Failure(error)
    return Success(IndexedView(indexes, base.sha))
