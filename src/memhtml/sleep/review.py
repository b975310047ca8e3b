"""Review: what a run would bring into main, before anything moves.

Per-phase counts (from the trailers; a phase done with nothing to change reads its
counts off the report's commit), the commit list with every trailer, a diff stat of
``base..tip`` and each changed file's class:

- ``meta-only``: a memory whose article is unchanged (same content hash): only its
  head moved (a link, a stamp, a confidence);
- ``body-changed``: a memory whose article changed, or any other file that changed;
- ``archived``: a memory that left its path for ``archive/<YYYY>/<path>`` (listed once,
  under its original path, with ``to``);
- ``moved``: a memory a phase re-filed to another live path, as its decision records
  (listed once, under its original path, with ``to``);
- ``created`` / ``deleted``: a path that only the tip, or only the base, holds.

Each file carries the decisions that changed it (``sleep.decisions``: phase, rule,
figures, commit). Generated site pages are not listed among the changes: they are
counted (``generated``); so are the files only a sweep touched (``swept``, per phase);
a change no decision covers is listed in ``unexplained`` as well (``sleep.explain``).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal, TypeAlias

from returns.io import IOResult, IOSuccess

from memhtml.contracts.services import TreeEntry
from memhtml.head import HeadVersion
from memhtml.sleep.contract import (
    REJECT_OP,
    SLEEP_PHASES,
    TRAILER_OP,
    TRAILER_REJECTED,
    SleepPhase,
)
from memhtml.sleep.decisions import DecidingCommit, Decision
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.errors import SleepError
from memhtml.sleep.explain import Explanation, moves_of, read_explanation
from memhtml.sleep.history import RunHistory, read_history
from memhtml.sleep.phase import Counts
from memhtml.sleep.runner import versions_at
from memhtml.sleep.runs import RunState, run_state
from memhtml.store.layout import original_of_archived
from memhtml.store.site import is_generated_path

FileClass: TypeAlias = Literal["meta-only", "body-changed", "archived", "moved", "created",
                               "deleted"]


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str
    change: FileClass
    insertions: int
    deletions: int
    to: str | None = None
    """Where an archived or moved memory went."""
    decisions: tuple[Decision, ...] = ()
    """What decided the change: each phase's rule, figures and commit."""


@dataclass(frozen=True, slots=True)
class DiffStat:
    files: int
    insertions: int
    deletions: int


@dataclass(frozen=True, slots=True)
class ReviewedCommit:
    sha: str
    phase: SleepPhase | None
    subject: str
    trailers: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class ReviewedPhase:
    phase: SleepPhase
    done: bool
    counts: Counts


@dataclass(frozen=True)
class Review:
    run_id: str
    branch: str
    state: RunState
    base: str
    tip: str
    main: str
    phases: tuple[ReviewedPhase, ...]
    commits: tuple[ReviewedCommit, ...]
    stat: DiffStat
    files: tuple[FileChange, ...]
    """Every changed file but the generated site pages, with its decisions."""
    generated: int = 0
    """Generated site pages the run changed (regenerated from the memories): counted,
    not listed."""
    swept: Mapping[SleepPhase, int] = field(default_factory=lambda: MappingProxyType({}))
    """Files only a sweep phase changed (confidence-decay), per phase."""
    unexplained: tuple[str, ...] = ()
    """Changed files no decision covers (generated pages, run records and sweeps aside)."""
    decisions_unread: int = 0
    """Decision lines left out: unparsable, or not added by one of the run's commits."""
    rejected: tuple[tuple[str, str], ...] = ()
    """``(path, commit)`` for each change a reviewer rejected (``sleep.reject``), read
    off the rejection commits' trailers, oldest first."""


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    return data.decode("utf-8", "replace").splitlines()


def line_counts(before: bytes | None, after: bytes | None) -> tuple[int, int]:
    """(insertions, deletions) as ``git diff --stat`` counts them, near enough: lines
    of the longest matching blocks are kept, the rest inserted or deleted."""
    old, new = _lines(before), _lines(after)
    if old == new:
        return 0, 0
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    kept = sum(block.size for block in matcher.get_matching_blocks())
    return len(new) - kept, len(old) - kept


def classify(paths: Sequence[str], before: Mapping[str, bytes | None],
             after: Mapping[str, bytes | None], base: HeadVersion, tip: HeadVersion,
             moves: Mapping[str, str] | None = None) -> tuple[FileChange, ...]:
    """Each changed path's class, sorted by path; an archive or move destination is
    folded into the row of the memory it came from (``moves``: origin -> destination,
    as the run's decisions record them). Generated site pages are left out."""
    archived_to = {original: path for path in paths
                   if (original := original_of_archived(path)) is not None
                   and after.get(path) is not None and before.get(original) is not None
                   and after.get(original) is None}
    moved_to = {origin: to for origin, to in (moves or {}).items()
                if origin not in archived_to and before.get(origin) is not None
                and after.get(origin) is None and after.get(to) is not None
                and before.get(to) is None}
    destinations = set(archived_to.values()) | set(moved_to.values())
    rows: list[FileChange] = []
    for path in sorted(paths):
        if path in destinations or is_generated_path(path):
            continue
        old, new = before.get(path), after.get(path)
        insertions, deletions = line_counts(old, new)
        if path in archived_to or path in moved_to:
            to = archived_to.get(path) or moved_to[path]
            more, _ = line_counts(None, after.get(to))
            rows.append(FileChange(path, "archived" if path in archived_to else "moved",
                                   insertions + more, deletions, to))
        elif old is None:
            rows.append(FileChange(path, "created", insertions, deletions))
        elif new is None:
            rows.append(FileChange(path, "deleted", insertions, deletions))
        else:
            was, now = base.get(path), tip.get(path)
            same = was is not None and now is not None and was.content_hash == now.content_hash
            rows.append(FileChange(path, "meta-only" if same else "body-changed",
                                   insertions, deletions))
    return tuple(rows)


def _contents(deps: SleepDeps, commit: str, paths: Sequence[str]
              ) -> IOResult[dict[str, bytes | None], SleepError]:
    git = deps.git
    entries: IOResult[tuple[TreeEntry, ...], SleepError] = git.entries_at(commit, paths)

    def read(found: tuple[TreeEntry, ...]) -> IOResult[dict[str, bytes | None], SleepError]:
        ids = {e.path: e.blob_id for e in found}
        return git.read_blobs(sorted(set(ids.values()))).map(
            lambda blobs: {path: blobs.get(ids[path]) if path in ids else None
                           for path in paths})

    return entries.bind(read)


def review_run(deps: SleepDeps, run_id: str) -> IOResult[Review, SleepError]:
    """The run's counts, commits, diff stat, file classes and decisions."""
    git = deps.git

    def with_history(history: RunHistory) -> IOResult[Review, SleepError]:
        main: IOResult[str, SleepError] = git.resolve(deps.main_ref)
        return main.bind(lambda at: run_state(deps, history, at).bind(
            lambda state: explained(history, at, state)))

    def explained(history: RunHistory, main: str, state: RunState
                  ) -> IOResult[Review, SleepError]:
        commits = tuple(DecidingCommit(c.sha, c.phase, c.parents[0] if c.parents else None)
                        for c in history.commits)
        read: IOResult[Explanation, SleepError] = read_explanation(
            git, history.run_id, history.base, history.tip, commits)
        return read.bind(lambda found: files(history, main, state, found))

    def files(history: RunHistory, main: str, state: RunState, found: Explanation
              ) -> IOResult[Review, SleepError]:
        changed: IOResult[tuple[str, ...], SleepError] = (
            IOSuccess(()) if history.tip == history.base
            else git.changed_paths(history.base, history.tip))
        decided = [d for _, ds in found.decided for d in ds]
        return changed.map(lambda all_paths: tuple(
            p for p in all_paths if not is_generated_path(p))).bind(
            lambda paths: _contents(deps, history.base, paths).bind(
                lambda before: _contents(deps, history.tip, paths).bind(
                    lambda after: versions_at(deps, history.base, history.tip).map(
                        lambda versions: _review(history, main, state, classify(
                            paths, before, after, versions[0], versions[1],
                            moves_of(decided)), found)))))

    return read_history(git, deps.main_ref, run_id).bind(with_history)


def _review(history: RunHistory, main: str, state: RunState, rows: tuple[FileChange, ...],
            found: Explanation) -> Review:
    done, quiet = history.done(), history.quiet()
    phases = tuple(ReviewedPhase(p, p in done or p in quiet,
                                 done[p].counts if p in done else quiet.get(p, {}))
                   for p in SLEEP_PHASES)
    commits = tuple(ReviewedCommit(c.sha, c.phase, c.subject, c.trailers)
                    for c in history.commits)
    decided = dict(found.decided)
    rows = tuple(replace(row, decisions=decided.get(row.path, ())) for row in rows)
    files = sum(2 if row.to else 1 for row in rows)
    stat = DiffStat(files, sum(r.insertions for r in rows), sum(r.deletions for r in rows))
    rejected = tuple((value, c.sha) for c in history.commits
                     if c.phase is None and (TRAILER_OP, REJECT_OP) in c.trailers
                     for name, value in c.trailers if name == TRAILER_REJECTED)
    return Review(history.run_id, history.branch, state, history.base, history.tip, main,
                  phases, commits, stat, rows, len(found.generated), found.swept,
                  found.unexplained, found.unread, rejected)
