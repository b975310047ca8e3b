"""One markdown import against a store: read what it needs, plan, land.

The plan is pure (``markdown_import.plan_import``); what it needs from the store is
the head's memories (archived ones included, so a note whose memory the person
archived is known) and, for the few notes a re-import must judge, the history
(``markdown_history``). The batch lands as one commit carrying the import's trailer,
which is how the next import tells its own work from the person's.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from returns.io import IOResult

from memhtml.head import HeadVersion
from memhtml.store.doors import batch
from memhtml.store.errors import StoreError
from memhtml.store.landing import Landed
from memhtml.store.markdown_history import import_trailers, read_import_history
from memhtml.store.markdown_import import ImportPlan, import_needs, plan_import
from memhtml.store.session import Store

__all__ = ["land_markdown", "plan_markdown"]


def plan_markdown(store: Store, files: Sequence[tuple[str, bytes]], directory: str,
                  tags: Sequence[str] = (), refused: Iterable[tuple[str, str]] = (),
                  revive: Collection[str] = (), at: str | None = None
                  ) -> IOResult[ImportPlan, StoreError]:
    """The import of ``files`` into ``directory``, planned against the store's tip."""

    def planned(head: HeadVersion) -> IOResult[ImportPlan, StoreError]:
        records = list(head.records())
        needs = import_needs(files, directory, records)
        return read_import_history(store, directory, needs).map(
            lambda history: plan_import(files, directory, tags, records, head.paths(),
                                        at=at, refused=refused, history=history,
                                        revive=revive, detect=store.deps.detect))

    return store.head().bind(planned)


def land_markdown(store: Store, plan: ImportPlan, directory: str
                  ) -> IOResult[Landed, StoreError]:
    """The plan's ops and index pages as one commit, with the import's trailer."""
    return batch(store, plan.ops, plan.pages, import_trailers(directory))
