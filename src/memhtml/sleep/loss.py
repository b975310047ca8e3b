"""What a run may not do to the memories it found, judged before merge moves main.

The head gate (``head.gate``) asks whether what the base found is still found. Two
kinds of loss pass any search measure, so merge judges them here:

- **Forgetting too much at once.** A memory archived with nothing standing for it
  (no keeper, no canonical: ``head.succession``) is forgotten on purpose, which is
  what retention is for; so the gate does not probe it. What bounds it is a share: a
  run that forgets more than ``archive_share`` of the base's live memories (the
  ``sleep_archive_share`` store setting, default ``ARCHIVE_SHARE``) is refused with
  every such path named. A finished task is not counted: closing is what archives a
  task, not forgetting. Folds and moves are not counted either: their memory stands
  elsewhere, and the gate follows it there.
- **A rewrite nobody decided.** A memory's title and claim are what a person and a
  search know it by. A run may change them only where one of its phases decided to:
  the record of that is the run's own commits, each carrying ``Memhtml-Run`` and
  ``Memhtml-Phase`` (``sleep.history``), and committed by memhtml. A title or claim
  that a commit of anything else changed (a commit made on the run branch by hand,
  one whose phase is a sweep, or one with another run's trailers) is refused by name,
  with the commit that made it: it was never reviewed as a decision, and the gate,
  which probes by what the base said, may or may not notice it.

A commit made on the run branch by hand is judged by these same rules rather than
refused outright: a reviewer may correct a night on its branch (restore a memory a
fold took, drop a link), and refusing the whole night for that would throw the rest
of the curation away. What it may not do is what no phase may do unrecorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Final, Literal, TypeAlias

from returns.io import IOResult, IOSuccess

from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import CommitInfo, Signature, TreeEntry
from memhtml.head import HeadVersion, Succession, is_active, record_from
from memhtml.sleep.contract import SWEEP_PHASES
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.errors import SleepError
from memhtml.sleep.history import RunCommit, RunHistory

Field: TypeAlias = Literal["title", "claim"]
FIELDS: Final[tuple[Field, ...]] = ("title", "claim")
SHOWN: Final = 20
"""Paths named in a refusal's line; the outcome carries them all."""


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A base memory's title or claim, changed by the time of the run's tip: where it
    was, where the same memory is now (its path, where it moved, its archive copy),
    and the two values."""

    path: str
    now: str
    field: Field
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class Unrecorded:
    """A rewrite no phase of the run decided, and the commit that made it (None when
    no commit of the run's range shows it: a merge brought it, say)."""

    rewrite: Rewrite
    commit: str | None
    why: str

    def line(self) -> str:
        rw = self.rewrite
        moved = "" if rw.now == rw.path else f" (now {rw.now})"
        by = f"commit {self.commit[:10]}" if self.commit else "no commit of the run"
        return (f"{rw.path}{moved}: {rw.field} {_short(rw.before)!r} -> "
                f"{_short(rw.after)!r} by {by}, {self.why}")


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def shown(lines: Sequence[str]) -> str:
    return "; ".join(lines[:SHOWN]) + (f" and {len(lines) - SHOWN} more"
                                       if len(lines) > SHOWN else "")


# -- pure: what changed ------------------------------------------------------------------


def _own(succession: Succession, path: str) -> str | None:
    """The path the memory at ``path`` is held at in the later version, whatever its
    state: its own path, where it moved, or its archive copy; None when gone."""
    if succession.after.get(path) is not None:
        return path
    moved = succession.moves.get(path)
    if moved is not None:
        return moved
    copy = succession.archived.get(path)
    return None if copy is None else copy.path


def rewrites(base: HeadVersion, succession: Succession) -> tuple[Rewrite, ...]:
    """Every title and claim of a base live memory that reads otherwise at the later
    version, by path then field."""
    found: list[Rewrite] = []
    for record in sorted((r for r in base.records() if is_active(r)), key=lambda r: r.path):
        now = _own(succession, record.path)
        held = None if now is None else succession.after.get(now)
        if held is None or now is None:
            continue
        for name in FIELDS:
            was, is_now = _field(record, name), _field(held, name)
            if was != is_now:
                found.append(Rewrite(record.path, now, name, was, is_now))
    return tuple(found)


def _field(record: MemoryRecord, name: Field) -> str:
    return record.title if name == "title" else record.claim


def forgotten(base: HeadVersion, succession: Succession) -> tuple[str, ...]:
    """Base live memories archived with nothing standing for them, a finished task
    left out (closing it is what archived it). Sorted."""
    out: list[str] = []
    for record in base.records():
        if not is_active(record) or not succession.forgotten(record.path):
            continue
        copy = succession.archived.get(record.path)
        if copy is not None and copy.memory_type == "task" and copy.task_status == "done":
            continue
        out.append(record.path)
    return tuple(sorted(out))


def live_count(base: HeadVersion) -> int:
    return sum(1 for r in base.records() if is_active(r))


@dataclass(frozen=True, slots=True)
class OverArchived:
    """The run forgets more than its share allows."""

    paths: tuple[str, ...]
    live: int
    share: float

    def reason(self, run_id: str) -> str:
        said = 100 * len(self.paths) / self.live if self.live else 100.0
        return (f"the run archives {len(self.paths)} of the {self.live} live memories "
                f"({said:.1f}%) with nothing standing for them, more than "
                f"sleep_archive_share ({100 * self.share:g}%) allows: "
                f"{shown(list(self.paths))}. Review them (memhtml sleep review {run_id}); "
                "if they should go, raise sleep_archive_share (MEMHTML_SLEEP_ARCHIVE_SHARE "
                f"or .memhtml/config.toml) and merge again; if not, memhtml sleep abort "
                f"{run_id}")


def over_archived(base: HeadVersion, succession: Succession, share: float
                  ) -> OverArchived | None:
    """The refusal when the run forgets more than ``share`` of the base's live
    memories, else None."""
    gone = forgotten(base, succession)
    live = live_count(base)
    if not gone or len(gone) <= share * live:
        return None
    return OverArchived(gone, live, share)


def unrecorded_reason(run_id: str, found: Sequence[Unrecorded]) -> str:
    commits = sorted({u.commit[:10] for u in found if u.commit})
    where = f" (commit {', '.join(commits)})" if commits else ""
    return (f"{len(found)} title or claim change(s) no phase of run {run_id} decided"
            f"{where}: {shown([u.line() for u in found])}. Drop those commits from "
            f"sleep/{run_id} (or memhtml sleep abort {run_id}) and make the change on "
            "main with memhtml correct, where it is a person's own commit")


# -- the record: which commit made each rewrite -------------------------------------------


def _decides(commit: RunCommit, info: CommitInfo, author: Signature) -> str | None:
    """None when ``commit`` is a decision of one of the run's phases; else why not."""
    if commit.phase is None:
        return "which is not a commit of a phase of the run"
    if commit.phase in SWEEP_PHASES:
        return f"a {commit.phase} sweep, which decides nothing about one memory"
    if info.committer is not None and info.committer != author:
        return (f"committed by {info.committer.name} <{info.committer.email}>, not by "
                "memhtml")
    return None


@dataclass(frozen=True, slots=True)
class _Seen:
    """Per rewrite, the commits that changed its field: (sha, why not a decision)."""

    made: Mapping[Rewrite, tuple[tuple[str, str | None], ...]]


def _records(deps: SleepDeps, commit: str, paths: Sequence[str]
             ) -> IOResult[dict[str, MemoryRecord | None], SleepError]:
    git = deps.git
    entries: IOResult[tuple[TreeEntry, ...], SleepError] = git.entries_at(commit, paths)

    def read(found: tuple[TreeEntry, ...]) -> IOResult[dict[str, MemoryRecord | None],
                                                         SleepError]:
        ids = {e.path: e.blob_id for e in found if not e.is_symlink}
        blobs: IOResult[Mapping[str, bytes], SleepError] = git.read_blobs(
            sorted(set(ids.values())))
        return blobs.map(lambda got: {
            path: (record_from(got[ids[path]].decode("utf-8", "replace"), path)
                   .value_or(None) if path in ids and ids[path] in got else None)
            for path in paths})

    return entries.bind(read)


def _value(records: Mapping[str, MemoryRecord | None], rw: Rewrite) -> str | None:
    """The field as one version holds the memory (at its new path, else its old)."""
    for path in (rw.now, rw.path):
        held = records.get(path)
        if held is not None:
            return _field(held, rw.field)
    return None


def attribute(deps: SleepDeps, history: RunHistory, found: Sequence[Rewrite]
              ) -> IOResult[tuple[Unrecorded, ...], SleepError]:
    """The rewrites no phase of the run decided: each commit of the run's range that
    touched a rewritten memory is read before and after, and a change of the field by
    a commit that is not a phase's decision (``_decides``) is unrecorded. A rewrite no
    commit of the range shows is unrecorded too. Reads nothing when ``found`` is
    empty, the ordinary night."""
    if not found:
        return IOSuccess(())
    git = deps.git
    interest = frozenset(p for rw in found for p in (rw.path, rw.now))

    def then(done: IOResult[_Seen, SleepError], commit: RunCommit
             ) -> IOResult[_Seen, SleepError]:
        if not commit.parents:
            return done
        parent = commit.parents[0]

        def look(seen: _Seen) -> IOResult[_Seen, SleepError]:
            changed: IOResult[tuple[str, ...], SleepError] = git.changed_paths(parent,
                                                                               commit.sha)
            return changed.bind(lambda paths: judge(seen, sorted(interest & set(paths))))

        def judge(seen: _Seen, paths: list[str]) -> IOResult[_Seen, SleepError]:
            if not paths:
                return IOSuccess(seen)
            info: IOResult[CommitInfo, SleepError] = git.commit_info(commit.sha)
            return info.bind(lambda got: _records(deps, parent, paths).bind(
                lambda before: _records(deps, commit.sha, paths).map(
                    lambda after: _noted(seen, set(paths), before, after, commit.sha,
                                         _decides(commit, got, deps.author)))))

        return done.bind(look)

    start: IOResult[_Seen, SleepError] = IOSuccess(_Seen(dict.fromkeys(found, ())))
    walked = reduce(then, history.commits, start)
    return walked.map(lambda seen: tuple(verdict for rw in found
                                         if (verdict := _verdict(rw, seen.made[rw]))
                                         is not None))


def _noted(seen: _Seen, paths: set[str], before: Mapping[str, MemoryRecord | None],
           after: Mapping[str, MemoryRecord | None], sha: str, why: str | None) -> _Seen:
    made = dict(seen.made)
    for rw, by in seen.made.items():
        if {rw.path, rw.now} & paths and _value(before, rw) != _value(after, rw):
            made[rw] = (*by, (sha, why))
    return _Seen(made)


def _verdict(rw: Rewrite, made: tuple[tuple[str, str | None], ...]) -> Unrecorded | None:
    if not made:
        return Unrecorded(rw, None, "which no commit of the run made")
    for sha, why in made:
        if why is not None:
            return Unrecorded(rw, sha, why)
    return None
