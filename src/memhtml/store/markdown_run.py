"""One markdown import against a store: read what it needs, plan, land.

The plan is pure (``markdown_import.plan_import``); what it needs from the store is
the head's memories (archived ones included, so a note whose memory the person
archived is known) and, for the few notes a re-import must judge, the history
(``markdown_history``). The batch lands as one commit carrying the import's trailer,
which is how the next import tells its own work from the person's.

``import_folder`` is what the command runs: it leaves the format check of each file
to the write door, which parses every file it lands anyway (checking first as well
parsed every note twice), and when the door refuses one note's file, it leaves that
note out (or, the first time, converts it again with its raw HTML as text) and lands
the rest, so one bad note never sinks the commit. Given a fan (the CLI's fork pool),
the per-note work runs on several cores, each file read back where it is rendered;
the door's parse of that same file is then the record read there
(``head.record.read_ahead``), so it is still the door that takes or refuses it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import InvalidMemory
from memhtml.contracts.services import FanOut
from memhtml.head import HeadVersion
from memhtml.head.lexical import counted_ahead
from memhtml.head.record import read_ahead
from memhtml.store.doors import batch
from memhtml.store.errors import Refused, StoreError, describe
from memhtml.store.landing import Landed
from memhtml.store.markdown_history import import_trailers, read_import_history
from memhtml.store.markdown_import import ImportPlan, import_needs, plan_import
from memhtml.store.session import Store

__all__ = ["Imported", "import_folder", "land_markdown", "plan_markdown"]

MAX_REFUSED_FILES = 16
"""How many notes the door may refuse, one retry each, before the import stops and
reports the refusal: a door refusing that many files is refusing for another reason."""
_BATCH_OP = re.compile(r"batch op ([0-9]+): ")


def plan_markdown(store: Store, files: Sequence[tuple[str, bytes]], directory: str,
                  tags: Sequence[str] = (), refused: Iterable[tuple[str, str]] = (),
                  revive: Collection[str] = (), at: str | None = None, check: bool = True,
                  plain_html: Collection[str] = (), fan: FanOut | None = None
                  ) -> IOResult[ImportPlan, StoreError]:
    """The import of ``files`` into ``directory``, planned against the store's tip
    (its per-note work through ``fan`` when given: ``plan_import``)."""

    def planned(head: HeadVersion) -> IOResult[ImportPlan, StoreError]:
        records = list(head.records())
        needs = import_needs(files, directory, records)
        return read_import_history(store, directory, needs).map(
            lambda history: plan_import(files, directory, tags, records, head.paths(),
                                        at=at, refused=refused, history=history,
                                        revive=revive, check=check, plain_html=plain_html,
                                        detect=store.deps.detect, fan=fan))

    return store.head().bind(planned)


def land_markdown(store: Store, plan: ImportPlan, directory: str
                  ) -> IOResult[Landed, StoreError]:
    """The plan's ops and index pages as one commit, with the import's trailer. The
    files the plan already read back (``ImportPlan.read``) are not parsed again."""
    with read_ahead(record for record, _ in plan.read), counted_ahead(plan.read):
        return batch(store, plan.ops, plan.pages, import_trailers(directory))


@dataclass(frozen=True, slots=True)
class Imported:
    """What an import did: its plan (what landed, what was left out and why), and the
    commit, or None when there was nothing to commit."""

    plan: ImportPlan
    landed: Landed | None


def _refused_source(plan: ImportPlan, error: StoreError) -> str | None:
    """The note whose file the door refused, when the refusal names one."""
    writes = [(source, path) for source, path in (*plan.added, *plan.revived)]
    writes += [(source, new) for source, _, new in plan.changed]
    if isinstance(error, InvalidMemory):
        return next((source for source, path in writes if path == error.path), None)
    if isinstance(error, Refused):
        found = _BATCH_OP.match(error.reason)
        index = int(found.group(1)) - 1 if found is not None else -1
        if 0 <= index < len(plan.ops):
            target = getattr(getattr(plan.ops[index], "data", None), "path", None)
            return next((source for source, path in writes if path == target), None)
    return None


def import_folder(store: Store, files: Sequence[tuple[str, bytes]], directory: str,
                  tags: Sequence[str] = (), refused: Iterable[tuple[str, str]] = (),
                  revive: Collection[str] = (), at: str | None = None,
                  fan: FanOut | None = None) -> IOResult[Imported, StoreError]:
    """Plan the import of ``files`` and land it as one commit; a note whose file the
    write door refuses is left out (listed with the door's reason) and the rest
    planned and landed again. ``fan`` shares the per-note work between cores
    (``plan_import``); what lands is the same without it."""
    walked = tuple(refused)

    def attempt(left_out: dict[str, str], plain: frozenset[str]
                ) -> IOResult[Imported, StoreError]:
        kept = [(source, raw) for source, raw in files if source not in left_out]
        return plan_markdown(store, kept, directory, tags, (*walked, *left_out.items()),
                             revive, at, check=False, plain_html=plain, fan=fan).bind(
            lambda plan: land(plan, left_out, plain))

    def land(plan: ImportPlan, left_out: dict[str, str], plain: frozenset[str]
             ) -> IOResult[Imported, StoreError]:
        if not plan.ops and not plan.pages:
            return IOSuccess(Imported(plan, None))
        return land_markdown(store, plan, directory).map(
            lambda landed: Imported(plan, landed)).lash(
            lambda error: again(plan, error, left_out, plain))

    def again(plan: ImportPlan, error: StoreError, left_out: dict[str, str],
              plain: frozenset[str]) -> IOResult[Imported, StoreError]:
        source = _refused_source(plan, error)
        if source is None or len(left_out) >= MAX_REFUSED_FILES:
            return IOFailure(error)
        if source not in plain:
            return attempt(left_out, plain | {source})
        return attempt({**left_out, source: describe(error)}, plain)

    return attempt({}, frozenset())
