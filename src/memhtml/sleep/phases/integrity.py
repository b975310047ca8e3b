"""Phase 15, integrity: dangling hrefs repaired, generated pages regenerated. One commit.

Two kinds of dangling href, told apart because they mean different things:

- **The target was archived.** It still exists and the edge still says something
  true, so the href is rewritten to where the archive put it. That place is computed
  with ``archive_path`` (the mapping is injective), never searched for: years are
  tried newest first over ``ARCHIVE_YEARS`` years back from the run's stamp, so the
  latest archiving of a path archived twice wins.
- **The target is gone.** The edge asserts a relationship to nothing and would be a
  dangling row on every rebuild, so it is dropped, with a warning naming it.

An href to a file that is in the tree but is not a readable memory (unparsable,
not UTF-8, a symbolic link) is not dangling: the file is there, so the edge is left
and a warning says so. Such files are never rewritten either: only records the head
parsed are edited. A ``memhtml-superseded-by`` whose target was archived is
rewritten the same way; one whose target is gone is left and warned about, because
dropping it would erase a supersession a person recorded.

Generated pages are regenerated only in a published store (one whose tree holds a
generated file): in any other, writing a site nobody asked for would be the surprise.
The phase runs after every phase that writes or moves files, so the pages it writes
list them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from returns.io import IOResult, IOSuccess
from returns.result import Failure, Success

from memhtml.contracts.ops import Put
from memhtml.contracts.paths import to_document_path, to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import PathChange, TreeEntry
from memhtml.format import set_meta
from memhtml.head import HeadVersion
from memhtml.sleep.decisions import Decision
from memhtml.sleep.phase import PhaseCommit, PhaseEnv, PhaseFault, PhaseResult
from memhtml.store.errors import describe
from memhtml.store.layout import archive_path
from memhtml.store.plan import Plan, link_step, unlink_step
from memhtml.store.site import is_generated_path, render_site, site_changes

ARCHIVE_YEARS: Final = 10
"""How many years back from the run's stamp an archived target is looked for."""


@dataclass
class _Repair:
    """The fold over the records: the plan so far and what it did."""

    plan: Plan
    checked: int = 0
    repaired: int = 0
    dropped: int = 0
    unreadable: int = 0
    superseded_repaired: int = 0
    superseded_dangling: int = 0
    warnings: list[str] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)


def _archived_home(version: HeadVersion, target: str, newest: int) -> str | None:
    for year in range(newest, newest - ARCHIVE_YEARS, -1):
        candidate = archive_path(target, year)
        if version.get(candidate) is not None:
            return candidate
    return None


def _edge(state: _Repair, version: HeadVersion, unreadable: frozenset[str], newest: int,
          record: MemoryRecord, rel: str, href: str) -> None:
    state.checked += 1
    target = to_tree_path(href)
    if version.get(target) is not None:
        return
    if target in unreadable:
        state.unreadable += 1
        state.warnings.append(f"{record.path}: {rel} link to {href} left: the file is there "
                              "but is not a readable memory")
        return
    home = _archived_home(version, target, newest)
    removed = unlink_step(state.plan, record.path, rel, href)
    match removed:
        case Success(step):
            after = step.plan
        case Failure(error):
            state.warnings.append(f"{record.path}: {rel} link to {href} not repaired: "
                                  f"{describe(error)}")
            return
    if home is None:
        state.plan = after
        state.dropped += 1
        state.warnings.append(f"{record.path}: dropped {rel} link to {href}: no memory there")
        state.decisions.append(Decision.of("integrity", "rewritten", record.path,
                                           "href-dropped", related=(target,),
                                           figures={"rel": rel, "href": href}))
        return
    relinked = link_step(after, record.path, rel, to_document_path(home))
    match relinked:
        case Success(step):
            state.plan = step.plan
            state.repaired += 1
            state.decisions.append(Decision.of(
                "integrity", "rewritten", record.path, "href-to-archive",
                related=(target,), figures={"rel": rel, "href": href,
                                            "archived_at": to_document_path(home)}))
        case Failure(error):
            state.warnings.append(f"{record.path}: {rel} link to {href} not repaired: "
                                  f"{describe(error)}")


def _superseded(state: _Repair, version: HeadVersion, newest: int, record: MemoryRecord
                ) -> None:
    href = record.superseded_by
    if href is None or version.get(to_tree_path(href)) is not None:
        return
    home = _archived_home(version, to_tree_path(href), newest)
    current = state.plan.view.get(record.path)
    if home is None or current is None:
        state.superseded_dangling += 1
        state.warnings.append(f"{record.path}: memhtml-superseded-by {href} names no memory; "
                              "left as written")
        return
    edited = state.plan.apply(Put(record.path, set_meta(
        set_meta(current.html, "memhtml-superseded-by", to_document_path(home)),
        "memhtml-updated", state.plan.now)))
    match edited:
        case Success(plan):
            state.plan = plan
            state.superseded_repaired += 1
            state.decisions.append(Decision.of(
                "integrity", "rewritten", record.path, "href-to-archive",
                related=(to_tree_path(href),), figures={
                    "meta": "memhtml-superseded-by", "href": href,
                    "archived_at": to_document_path(home)}))
        case Failure(error):
            state.warnings.append(f"{record.path}: memhtml-superseded-by {href} not repaired: "
                                  f"{describe(error)}")


def repair_hrefs(version: HeadVersion, now: str, newest_year: int) -> _Repair:
    """Every record's dangling edges repaired or dropped, in path order."""
    state = _Repair(Plan.start(version, now))
    unreadable = frozenset(s.path for s in version.skipped_files)
    for record in sorted(version.records(), key=lambda r: r.path):
        for link in sorted(record.links, key=lambda link: (link.rel, link.href)):
            _edge(state, version, unreadable, newest_year, record, link.rel, link.href)
        _superseded(state, version, newest_year, record)
    return state


def _site_changes(version: HeadVersion, plan: Plan, entries: tuple[TreeEntry, ...],
                  current: Mapping[str, bytes]) -> tuple[PathChange, ...]:
    # The view after the repairs, carrying the load's skip reasons, so a listing of a
    # skipped file reads as publish wrote it.
    view = HeadVersion(plan.view.indexes, version.sha, None, version.skipped_files)
    return site_changes(entries, current, render_site(view, [e.path for e in entries]))


def integrity(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    version = env.version
    sha = version.sha
    if sha is None:
        return IOSuccess(PhaseResult(counts={"hrefs": 0}))
    state = repair_hrefs(version, env.now, env.year)
    edits, _ = state.plan.changes()
    git = env.git

    def with_site(entries: tuple[TreeEntry, ...]) -> IOResult[PhaseResult, PhaseFault]:
        ids = {e.path: e.blob_id for e in entries if is_generated_path(e.path)}
        if not ids:
            return IOSuccess(_result(state, edits, (), published=False))
        read: IOResult[Mapping[str, bytes], PhaseFault] = git.read_blobs(
            sorted(set(ids.values()))).alt(lambda error: PhaseFault(describe(error)))
        return read.map(lambda blobs: _result(state, edits, _site_changes(
            version, state.plan, entries,
            {path: blobs[blob] for path, blob in ids.items() if blob in blobs}),
            published=True))

    listed: IOResult[tuple[TreeEntry, ...], PhaseFault] = git.list_tree(sha).alt(
        lambda error: PhaseFault(describe(error)))
    return listed.bind(with_site)


def _result(state: _Repair, edits: tuple[PathChange, ...], pages: tuple[PathChange, ...],
            *, published: bool) -> PhaseResult:
    counts = {
        "hrefs": state.checked, "repaired": state.repaired, "dropped": state.dropped,
        "unreadable_targets": state.unreadable,
        "superseded_repaired": state.superseded_repaired,
        "superseded_dangling": state.superseded_dangling,
        "files": len(edits), "published": published, "pages": len(pages),
    }
    changes = (*edits, *pages)
    if not changes:
        return PhaseResult(counts=counts, warnings=tuple(state.warnings))
    subject = (f"{state.repaired} href(s) repaired, {state.dropped} dropped, "
               f"{len(pages)} page(s) regenerated")
    return PhaseResult(counts=counts, warnings=tuple(state.warnings),
                       commits=(PhaseCommit(subject, changes,
                                            decisions=tuple(state.decisions)),))
