"""The rules a door holds a caller's request to, whichever edge it came through.

A field's own shape is ``store.write_checks``; these rules read the version the
write lands on, and they are what made the command line and the MCP server answer
the same request two ways when each edge kept its own copy. Here they are once,
and the doors (``store.doors``) apply them inside the derivation, so a write that
lost a compare-and-swap is judged again against the tip it lands on:

- **one live copy of a claim**: a write whose claim a live memory already holds
  (``store.duplicates``) is refused, naming that memory, unless the caller asks for
  the copy (``--allow-duplicate``, ``allow_duplicate``);
- **edges reach memories**: an edge a caller adds (``link``, a write's ``--link`` or
  ``link`` items, a whole file's own ``<link>`` lines, a correction's new links)
  must point at a memory the version holds, archived ones included; every target
  that does not is named in one refusal. Edges a correction carries forward from
  the memory it corrects stay as the person left them.

Batches (an import, a sleep run) and the sleep phases write through the steps
directly and do not pass here: they make memories and their edges together.
"""

from __future__ import annotations

from collections.abc import Iterable

from returns.result import Failure, Result, Success

from memhtml.contracts.paths import to_document_path
from memhtml.contracts.view import HeadView
from memhtml.head import record_from
from memhtml.store.duplicates import claim_of, duplicate_of
from memhtml.store.errors import DanglingLinks, DuplicateClaim, StoreError
from memhtml.store.inputs import WriteInput
from memhtml.store.paths import href_path

__all__ = ["dangling_targets", "edges_are_paths", "given_hrefs", "links_reach", "new_claim",
           "write_allowed"]


def given_hrefs(data: WriteInput) -> tuple[str, ...]:
    """The edges' targets a write asks for: its ``links``, or a whole file's own
    ``<link>`` lines (none when the file does not parse; the write then refuses it
    with every violation)."""
    if data.file_html is None:
        return tuple(link.href for link in data.links)
    return record_from(data.file_html, "(new file)").map(
        lambda record: tuple(link.href for link in record.links)).value_or(())


def dangling_targets(view: HeadView, hrefs: Iterable[str]) -> tuple[str, ...]:
    """Each of ``hrefs`` (either path form) that names no memory ``view`` holds, in
    document form, in the order given, once each. A target that is no store path at
    all (``../x.html``) names no memory either.

    >>> from memhtml.head import version_from_records
    >>> dangling_targets(version_from_records([], None), ["areas/a.html", "/areas/a.html"])
    ('/areas/a.html',)
    """
    missing: dict[str, None] = {}
    for href in hrefs:
        found = href_path(href).map(lambda tree: view.get(tree) is not None).value_or(False)
        if not found:
            missing[to_document_path(href.strip())] = None
    return tuple(missing)


def edges_are_paths(hrefs: Iterable[str]) -> Result[None, StoreError]:
    """Success when each of ``hrefs`` is a path inside the store; else the first one's
    ``PathRefused``, as ``link`` refuses it. Part of what is wrong with a request
    itself, so a door asks it before anything is rendered."""
    for href in hrefs:
        checked = href_path(href)
        if isinstance(checked, Failure):
            return Failure(checked.failure())
    return Success(None)


def links_reach(view: HeadView, hrefs: Iterable[str]) -> Result[None, StoreError]:
    """Success when every one of ``hrefs`` names a memory. A target that is no store
    path at all is refused as such (``edges_are_paths``); else ``DanglingLinks`` names
    each one that holds no memory."""
    asked = tuple(hrefs)
    missing = dangling_targets(view, asked)
    return edges_are_paths(asked).bind(
        lambda _: Failure(DanglingLinks(missing)) if missing else Success(None))


def new_claim(view: HeadView, data: WriteInput) -> Result[None, StoreError]:
    """Success unless a live memory already holds the claim ``data`` would store;
    then ``DuplicateClaim`` naming it."""
    claim = claim_of(data)
    existing = None if claim is None else duplicate_of(view, claim)
    if existing is None:
        return Success(None)
    return Failure(DuplicateClaim(existing.claim, existing.path))


def write_allowed(view: HeadView, data: WriteInput, allow_duplicate: bool = False
                  ) -> Result[None, StoreError]:
    """Both rules for a new memory: its claim is new (unless ``allow_duplicate``),
    then every edge it asks for reaches a memory."""
    first: Result[None, StoreError] = (Success(None) if allow_duplicate
                                       else new_claim(view, data))
    return first.bind(lambda _: links_reach(view, given_hrefs(data)))
