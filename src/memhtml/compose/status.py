"""The store at a glance, built once for both edges.

``memhtml status --json`` and the MCP tool ``memory_status`` answer with the same
payload, built here, so a script and an agent read one shape: the tip commit, counts
by type, status and task status, the files that are not memories, vector coverage, and
the person's side of the checkout (memory files edited and not committed, which search
and read do not see; a merge or rebase git has left waiting).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from returns.io import IOResult, IOSuccess
from returns.pipeline import is_successful

from memhtml.compose.services import Services
from memhtml.compose.settings import SettingsError
from memhtml.compose.vectors import Coverage

if TYPE_CHECKING:
    from memhtml.contracts.vectors import VectorCacheFault
    from memhtml.head import HeadVersion
    from memhtml.store import Store, StoreError, StoreStatus
    from memhtml.store.edits import LocalEdit

UNCOMMITTED_NOTE = ("search and read see only what is committed; memhtml will not change "
                    "these files until each edit is committed or discarded")


@dataclass(frozen=True)
class StatusReport:
    """Everything ``status`` shows, before it becomes text or JSON."""

    store: Path
    state: StoreStatus
    vectors: Coverage | None
    """Coverage of the configured embedder; None with no embedder, or an unusable one."""
    vectors_problem: str | None
    """Why the configured embedder cannot be used here (a missing extra, no endpoint)."""
    uncommitted: tuple[LocalEdit, ...]
    in_progress: str | None
    """The git operation waiting in the checkout (merge, rebase, ...), if any."""
    branch: str = ""
    """The branch this clone's doors write (its own record, or a setting)."""
    branch_note: str | None = None
    """Why the marker's branch differs from ``branch``, when it does (a pulled marker
    never moves the branch, so the person is told instead)."""


def status_report(services: Services, store: Store) -> IOResult[StatusReport, StoreError]:
    """The report for ``store``. An embedder that cannot be used here is a note in it,
    not a failure: the store itself is fine."""
    from memhtml.store import status
    from memhtml.store.edits import local_edits_begun
    from memhtml.store.layout import marker_note

    deps = store.deps
    git_dir = deps.checkout_git_dir
    busy = deps.git.operation_in_progress() if git_dir is not None else None
    # Git walks the checkout in a process of its own while the version decodes below.
    local_edits = local_edits_begun(deps)

    def vectors(view: HeadVersion) -> IOResult[tuple[Coverage | None, str | None], StoreError]:
        measured: IOResult[tuple[Coverage | None, str | None],
                           SettingsError | VectorCacheFault] = \
            services.coverage(view).map(lambda coverage: (coverage, None))
        noted: IOResult[tuple[Coverage | None, str | None], StoreError] = measured.lash(
            lambda error: IOSuccess((None, error.reason)))
        return noted

    def build(state: StoreStatus) -> IOResult[StatusReport, StoreError]:
        return store.head().bind(vectors).bind(lambda found: marker_note(
            deps.git, state.commit, deps.branch).bind(lambda note: local_edits().map(
                lambda edits: StatusReport(services.settings.store, state, found[0], found[1],
                                           edits, busy[0] if busy else None,
                                           deps.branch.removeprefix("refs/heads/"), note))))

    report = status(store).bind(build)
    if not is_successful(report):
        local_edits()  # waited for, so no git walk outlives a failed status
    return report


def status_payload(report: StatusReport) -> dict[str, object]:
    """The report as plain JSON data: what ``status --json`` prints and what
    ``memory_status`` returns as its structured content."""
    state, vectors = report.state, report.vectors
    return {
        "store": str(report.store),
        "commit": state.commit,
        "memories": state.memories,
        "by_type": dict(state.by_type),
        "by_status": dict(state.by_status),
        "tasks": dict(state.tasks),
        "overdue": state.overdue,
        "skipped": [{"path": s.path, "reason": s.reason} for s in state.skipped],
        "vectors": None if vectors is None else {
            "embedder": vectors.embedder, "space": vectors.space, "have": vectors.have,
            "total": vectors.total, "passages_have": vectors.passages_have,
            "passages_total": vectors.passages_total,
            "memory_vectors": vectors.memory_vectors, "note": vectors.note},
        "vectors_problem": report.vectors_problem,
        "uncommitted": [{"path": e.path, "kind": e.kind, "staged": e.staged,
                         "unstaged": e.unstaged} for e in report.uncommitted],
        "in_progress": report.in_progress,
        "branch": report.branch,
        "branch_note": report.branch_note,
    }
