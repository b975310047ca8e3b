"""Review: what a run would bring into main, before anything moves.

Per-phase counts (from the trailers), the commit list with every trailer, a diff stat
of ``base..tip`` and each changed file's class:

- ``meta-only``: a memory whose article is unchanged (same content hash): only its
  head moved (a link, a stamp, a confidence);
- ``body-changed``: a memory whose article changed, or any other file that changed;
- ``archived``: a memory that left its path for ``archive/<YYYY>/<path>`` (listed once,
  under its original path, with ``to``);
- ``created`` / ``deleted``: a path that only the tip, or only the base, holds.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from returns.io import IOResult, IOSuccess

from memhtml.contracts.services import TreeEntry
from memhtml.head import HeadVersion
from memhtml.sleep.contract import SLEEP_PHASES, SleepPhase
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.errors import SleepError
from memhtml.sleep.history import RunHistory, read_history
from memhtml.sleep.phase import Counts
from memhtml.sleep.runner import versions_at
from memhtml.sleep.runs import RunState, run_state
from memhtml.store.layout import original_of_archived

FileClass: TypeAlias = Literal["meta-only", "body-changed", "archived", "created", "deleted"]


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str
    change: FileClass
    insertions: int
    deletions: int
    to: str | None = None
    """Where an archived memory went."""


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
             after: Mapping[str, bytes | None], base: HeadVersion, tip: HeadVersion
             ) -> tuple[FileChange, ...]:
    """Each changed path's class, sorted by path; an archive destination is folded
    into the row of the memory it came from."""
    archived_to = {original: path for path in paths
                   if (original := original_of_archived(path)) is not None
                   and after.get(path) is not None and before.get(original) is not None
                   and after.get(original) is None}
    destinations = set(archived_to.values())
    rows: list[FileChange] = []
    for path in sorted(paths):
        if path in destinations:
            continue
        old, new = before.get(path), after.get(path)
        insertions, deletions = line_counts(old, new)
        if path in archived_to:
            to = archived_to[path]
            more, _ = line_counts(None, after.get(to))
            rows.append(FileChange(path, "archived", insertions + more, deletions, to))
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
    """The run's counts, commits, diff stat and file classes."""
    git = deps.git

    def with_history(history: RunHistory) -> IOResult[Review, SleepError]:
        main: IOResult[str, SleepError] = git.resolve(deps.main_ref)
        return main.bind(lambda at: run_state(deps, history, at).bind(
            lambda state: files(history, at, state)))

    def files(history: RunHistory, main: str, state: RunState
              ) -> IOResult[Review, SleepError]:
        changed: IOResult[tuple[str, ...], SleepError] = (
            IOSuccess(()) if history.tip == history.base
            else git.changed_paths(history.base, history.tip))
        return changed.bind(lambda paths: _contents(deps, history.base, paths).bind(
            lambda before: _contents(deps, history.tip, paths).bind(
                lambda after: versions_at(deps, history.base, history.tip).map(
                    lambda found: _review(history, main, state, classify(
                        paths, before, after, found[0], found[1]))))))

    return read_history(git, deps.main_ref, run_id).bind(with_history)


def _review(history: RunHistory, main: str, state: RunState, rows: tuple[FileChange, ...]
            ) -> Review:
    done = history.done()
    phases = tuple(ReviewedPhase(p, p in done, done[p].counts if p in done else {})
                   for p in SLEEP_PHASES)
    commits = tuple(ReviewedCommit(c.sha, c.phase, c.subject, c.trailers)
                    for c in history.commits)
    files = sum(2 if row.to else 1 for row in rows)
    stat = DiffStat(files, sum(r.insertions for r in rows), sum(r.deletions for r in rows))
    return Review(history.run_id, history.branch, state, history.base, history.tip, main,
                  phases, commits, stat, rows)
