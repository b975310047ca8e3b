"""Finishing what an earlier process left, before a command does anything else.

Every write leaves a mark (``checkout.Journal``) under ``<git-dir>/memhtml/pending/``.
``finish_checkout`` reads the marks and, for each:

- **Not known to have landed** (the process died between the mark and the branch
  moving, or just after): the branch says whether it did. The first commit after the
  mark's expected parent is the write when it is memhtml's, has exactly the mark's
  parents (a sync's merge commit has two) and holds the write's blobs; otherwise the
  write never landed and the mark is dropped. A fast-forward
  (the sleep merge, ``Journal.target``) landed when the branch holds its target.
- **Landed**: the checkout is brought up to date (a lock kept it from following, or
  the process died first), and the write is watched for a while. A person's
  ``git commit`` that read the index before the write reached it commits that old
  index on top of the write and silently undoes it; git cannot know.
- **Only a proven race is written back.** When the branch holds a path at its blob
  from before the write again, and the commit that put it back is not memhtml's,
  the path is written back (a ``rewrite-stale`` commit naming the one it undoes; the
  rest of that commit stays) only when the checkout proves the commit was made from
  an index that predated the write there:

  1. the write never reached the index at that path (the mark records each path
     whose index entry a follow set; a path left out is one the person's index never
     held as written: the branch moved on before the checkout could follow, or git's
     lock kept it out), or
  2. the checkout still shows the write there, over an index as the commit left it:
     the index entry holds the old blob (or none, as before) and the working-tree
     file still holds the written one (or is absent, where the write removed it).
     That is what committing an index read before the write leaves behind; a
     ``git revert``, ``git rm``, ``git mv`` or ``git checkout <rev> -- path`` changes
     the file along with the index and leaves nothing of the kind.

  Anything else is the person's own undo and is kept, after a sleep merge or a
  replay too (their commits write many paths; which of them a revert touches says
  nothing about staleness): reported (``Recovered.kept``), never rewritten. A stale
  commit whose evidence the person then tidied away (``git stash -u`` or
  ``git clean`` of the written file) reads as chosen: the write stays in the
  history, and ``git revert`` of the undoing commit, or ``memhtml restore PATH`` for
  a deleted memory, brings it back. An undo made in the index alone, leaving the
  written file on disk (``git rm --cached``, ``git reset <rev> -- path``), reads as a
  stale index and is written back. ``git revert`` of the write names it ("This
  reverts commit <sha>.") and is kept without looking further.
- A mark is dropped once its write can no longer be undone that way unnoticed: when
  a later memhtml commit touched its paths, or ``WATCH_SECONDS`` after it landed.
- **A sync settles what it brings.** Another clone's commits that a sync brings in
  are that clone's intent, not a stale index here: a fast-forward onto a commit that
  deleted a memory written here an hour ago is a deletion to report, never an undo to
  write back. So a sync that moved the branch stops watching, in every earlier mark,
  the paths it changed (``settle_synced``); its own mark watches them from then on.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import reduce

from returns.io import IOFailure, IOResult, IOSuccess
from returns.pipeline import is_successful

from memhtml.contracts.journals import Journal, Journals, PathStep
from memhtml.contracts.services import CommitInfo, PathChange, TreeEntry
from memhtml.store.checkout import (
    MEMHTML_SUBJECT,
    Synced,
    bring_up_to_date,
    drop_journal,
    file_blobs,
    mark_landed,
    on_branch,
    rewrite_journal,
)
from memhtml.store.deps import StoreDeps
from memhtml.store.errors import Refused, StoreError
from memhtml.store.landing import Draft, land
from memhtml.store.merge_driver import ensure_merge_driver

REWRITE_STALE = "rewrite-stale"
"""The op of the commit that writes back what a stale-index commit undid. Releases
before this one recorded it as ``restore`` (subject ``memhtml restore: N path(s)
undone by <sha>``), the name the ``restore`` door now has; ``is_stale_rewrite`` reads
both."""
WATCH_SECONDS = 3600.0
"""How long a landed write is watched for an undo by a commit made from a stale
index: a person's ``git commit`` can sit in an editor after reading the index."""
MAX_WATCHED = 256
"""At most this many landed writes are watched (the newest); older marks are dropped,
so a busy store's commands stay one tree lookup over a bounded set of paths."""


@dataclass(frozen=True, slots=True)
class Recovered:
    """What finishing the marks did."""

    synced: tuple[str, ...] = ()
    """Paths the checkout was brought up to date for."""
    restored: tuple[str, ...] = ()
    """Paths a stale-index commit had undone, written back."""
    reverted_by: tuple[str, ...] = ()
    """The commits that undid them."""
    kept: tuple[str, ...] = ()
    """Paths a person's commit put back as they were before a memhtml write, kept as
    theirs: nothing proves that commit was made from a stale index."""
    kept_by: tuple[str, ...] = ()
    """The commits that undid those."""

    def __add__(self, other: Recovered) -> Recovered:
        return Recovered(self.synced + other.synced, self.restored + other.restored,
                         self.reverted_by + other.reverted_by, self.kept + other.kept,
                         self.kept_by + other.kept_by)


def finish_checkout(deps: StoreDeps) -> IOResult[Recovered, StoreError]:
    """Finish every mark a write left; nothing to do without a checkout (two directory
    listings when there are no marks: the marks, and temporaries killed writes left)."""
    git_dir, marks = deps.checkout_git_dir, deps.journals
    if git_dir is None or marks is None:
        return IOSuccess(Recovered())
    # A clone never copies git's config: define the merge driver the generated pages'
    # attribute lines name (and drop the ``ours`` driver an earlier release defined). A
    # lookup when all is in place; a failure leaves doctor to say so.
    ensure_merge_driver(deps.git)
    marks.sweep(deps.clock.now().timestamp())
    journals = marks.read_all()
    if not journals:
        return IOSuccess(Recovered())
    cleared: IOResult[bool, StoreError] = deps.git.clear_stale_index_lock()

    def then(done: IOResult[Recovered, StoreError], journal: Journal
             ) -> IOResult[Recovered, StoreError]:
        return done.bind(lambda so_far: _settle(deps, journal).map(lambda more: so_far + more))

    def settle_all(_: bool) -> IOResult[Recovered, StoreError]:
        start: IOResult[Recovered, StoreError] = IOSuccess(Recovered())
        settled = reduce(then, journals, start)
        return settled.bind(lambda recovered: _watch_all(deps, marks).map(
            lambda more: recovered + more))

    return cleared.lash(lambda _: IOSuccess(False)).bind(settle_all)


def _settle(deps: StoreDeps, journal: Journal) -> IOResult[Recovered, StoreError]:
    """A mark not known to have landed is resolved against the branch; a landed one
    whose checkout did not follow is brought up to date."""
    if journal.commit is None:
        return _landing_of(deps, journal).bind(lambda sha: (
            drop_journal(deps.journals, journal).map(lambda _: Recovered()) if sha is None
            else _follow(deps, journal, sha)))
    if not journal.synced:
        return _follow(deps, journal, journal.commit)
    return IOSuccess(Recovered())


def _follow(deps: StoreDeps, journal: Journal, commit: str) -> IOResult[Recovered, StoreError]:
    if deps.worktree is None:
        return mark_landed(deps.journals, journal, commit, Synced((), (), True)).map(
            lambda _: Recovered())
    return bring_up_to_date(deps.git, deps.ref, journal.steps).bind(
        lambda outcome: mark_landed(deps.journals, journal, commit, outcome).map(
            lambda _: Recovered(outcome.paths)))


def _landing_of(deps: StoreDeps, journal: Journal) -> IOResult[str | None, StoreError]:
    """The commit the marked write landed as, or None when it never landed: the
    commit after the mark's expected parent that is memhtml's, has exactly the mark's
    parents and holds the write's blobs."""
    git = deps.git
    paths = [s.path for s in journal.steps]
    after = {s.path: s.after for s in journal.steps}
    target = journal.target
    if target is not None:
        return deps.tip().bind(lambda tip: _holds(deps, tip, target))

    expected = tuple(p for p in (journal.parent, journal.merge_parent) if p)

    def first_after(tip: str | None) -> IOResult[str | None, StoreError]:
        if tip is None or tip == journal.parent:
            return IOSuccess(None)
        between: IOResult[tuple[str, ...], StoreError] = git.commits_between(
            journal.parent, tip).lash(parent_gone)

        # Oldest first; across a merge the other side's commits come in too, so the
        # write is the first one that is memhtml's on exactly the mark's parents.
        def then(done: IOResult[str | None, StoreError], sha: str
                 ) -> IOResult[str | None, StoreError]:
            return done.bind(lambda found: IOSuccess(found) if found else is_ours(sha))

        start: IOResult[str | None, StoreError] = IOSuccess(None)
        return between.bind(lambda shas: reduce(then, shas, start))

    def parent_gone(failure: StoreError) -> IOResult[tuple[str, ...], StoreError]:
        # A parent the repository no longer holds (amended away, then pruned) has no
        # commit after it on the branch: the write never landed there.
        if journal.parent is None:
            return IOFailure(failure)
        known: IOResult[CommitInfo, StoreError] = git.commit_info(journal.parent)
        return IOFailure(failure) if is_successful(known) else IOSuccess(())

    def is_ours(sha: str) -> IOResult[str | None, StoreError]:
        def compare(entries: tuple[TreeEntry, ...]) -> str | None:
            held = {e.path: e.blob_id for e in entries}
            return sha if all(held.get(p) == after[p] for p in paths) else None

        def judge(info: CommitInfo) -> IOResult[str | None, StoreError]:
            if not info.message.startswith(MEMHTML_SUBJECT) or info.parents != expected:
                return IOSuccess(None)
            return git.entries_at(sha, paths).map(compare)

        info: IOResult[CommitInfo, StoreError] = git.commit_info(sha)
        return info.bind(judge)

    return deps.tip().bind(first_after)


def settle_synced(deps: StoreDeps, paths: Collection[str], landed: str) -> None:
    """Stop watching ``paths`` in every landed mark but the sync's own (the one whose
    commit is ``landed``): what the sync brought there is another clone's doing. A
    mark left with no path is dropped; one that cannot be rewritten is left, and is
    only looked at again."""
    marks = deps.journals
    settled = frozenset(paths)
    if marks is None or not settled:
        return
    for journal in marks.read_all():
        if journal.commit is None or journal.commit == landed:
            continue
        steps = tuple(s for s in journal.steps if s.path not in settled)
        if len(steps) == len(journal.steps):
            continue
        if steps:
            rewrite_journal(marks, replace(journal, steps=steps))
        else:
            drop_journal(marks, journal)


def _holds(deps: StoreDeps, tip: str | None, target: str) -> IOResult[str | None, StoreError]:
    """``target`` when the branch holds it (a fast-forward that landed), else None."""
    if tip is None:
        return IOSuccess(None)
    if tip == target:
        return IOSuccess(target)
    missing: IOResult[tuple[str, ...], StoreError] = deps.git.commits_between(tip, target)
    return missing.map(lambda shas: None if shas else target)


def _watch_all(deps: StoreDeps, marks: Journals) -> IOResult[Recovered, StoreError]:
    """One tree lookup for every watched write: restore what a commit from a stale
    index undid, and drop the marks that can no longer be undone unseen."""
    landed = [j for j in marks.read_all() if j.commit is not None]
    now = deps.clock.now().timestamp()
    keep = landed[-MAX_WATCHED:]
    stale = landed[:-MAX_WATCHED] + [j for j in keep if now - j.at > WATCH_SECONDS]
    watched = [j for j in keep if now - j.at <= WATCH_SECONDS]

    def drop(done: IOResult[None, StoreError], journal: Journal) -> IOResult[None, StoreError]:
        return done.bind(lambda _: drop_journal(deps.journals, journal))

    start: IOResult[None, StoreError] = IOSuccess(None)
    dropped = reduce(drop, stale, start)
    if not watched:
        return dropped.map(lambda _: Recovered())

    def judge_all(tip: str | None) -> IOResult[Recovered, StoreError]:
        # A write whose commit is still the tip has no commit after it that could have
        # undone it: the tip holds what it wrote, so ``_judge`` would find nothing and
        # keep watching it. Not asked: after an import of thousands of notes, every
        # command for the next hour would otherwise look up each of its paths.
        later = [j for j in watched if j.commit != tip or not j.steps]
        if tip is None or not later:
            return IOSuccess(Recovered())
        paths = sorted({s.path for j in later for s in j.steps})
        entries: IOResult[tuple[TreeEntry, ...], StoreError] = deps.git.entries_at(tip, paths)

        def each(found: tuple[TreeEntry, ...]) -> IOResult[Recovered, StoreError]:
            held = {e.path: e.blob_id for e in found}

            def then(done: IOResult[Recovered, StoreError], journal: Journal
                     ) -> IOResult[Recovered, StoreError]:
                return done.bind(lambda so_far: _judge(deps, journal, held).map(
                    lambda more: so_far + more))

            start: IOResult[Recovered, StoreError] = IOSuccess(Recovered())
            return reduce(then, later, start)

        return entries.bind(each)

    return dropped.bind(lambda _: deps.tip().bind(judge_all))


def _judge(deps: StoreDeps, journal: Journal, held: Mapping[str, str]
           ) -> IOResult[Recovered, StoreError]:
    """Write back the paths of ``journal`` a commit made from a stale index put back as
    they were (``_raced``); a person's own undo is kept, and said."""
    undone = [s for s in journal.steps if s.before != s.after and held.get(s.path) == s.before]
    if not undone:
        if all(held.get(s.path) != s.after for s in journal.steps):
            # Every path has moved on since: nothing of this write is left to undo.
            return drop_journal(deps.journals, journal).map(lambda _: Recovered())
        return IOSuccess(Recovered())

    def decide(commits: tuple[CommitInfo, ...]) -> IOResult[Recovered, StoreError]:
        if not commits or commits[0].message.startswith(MEMHTML_SUBJECT):
            # memhtml itself moved the path on (an archive, a move): not an undo.
            return drop_journal(deps.journals, journal).map(lambda _: Recovered())
        undoer = commits[0]
        if journal.commit is not None and _reverts(undoer.message, journal.commit):
            # The person's own git revert of this write, in git's words: kept.
            return drop_journal(deps.journals, journal).map(lambda _: _kept(undone, undoer))
        return _raced(deps, journal, undone).bind(
            lambda raced: IOSuccess(Recovered()) if raced is None else _settle_undo(
                deps, journal, undone, raced, undoer))

    touching: IOResult[tuple[CommitInfo, ...], StoreError] = deps.git.commits_touching(
        deps.ref, undone[0].path, 1)
    return touching.bind(decide)


def _kept(steps: Sequence[PathStep], undoer: CommitInfo) -> Recovered:
    paths = tuple(s.path for s in steps)
    return Recovered(kept=paths, kept_by=(undoer.sha,) if paths else ())


def _settle_undo(deps: StoreDeps, journal: Journal, undone: Sequence[PathStep],
                 raced: Collection[str], undoer: CommitInfo) -> IOResult[Recovered, StoreError]:
    """Write back the raced paths, keep the rest as the person's, drop the mark."""
    kept = _kept([s for s in undone if s.path not in raced], undoer)
    written: IOResult[Recovered, StoreError] = (
        _restore(deps, journal, [s.path for s in undone if s.path in raced], undoer)
        if raced else IOSuccess(Recovered()))
    return written.bind(lambda restored: drop_journal(deps.journals, journal).map(
        lambda _: restored + kept))


def _raced(deps: StoreDeps, journal: Journal, undone: Sequence[PathStep]
           ) -> IOResult[frozenset[str] | None, StoreError]:
    """The paths of ``undone`` the checkout proves were undone by a commit of an index
    that predated the write there: never brought into the index by a follow, or still
    showing the write on disk over an index entry as the commit left it (see the
    module's docstring). Read only when something was undone: the index entries and
    the files of those paths.

    None (judge later, the mark kept) while another git holds the index lock and the
    index must be read: ``git commit`` moves the branch while it holds that lock and
    only then puts the index it committed in place, so until it lets go the index on
    disk is the one from before its commit (holding the write, where a follow set it)
    and would pass a stale commit off as the person's own undo. The branch tip judged
    was read before this look, so once the lock is gone the index read is the one that
    commit left."""
    received = None if journal.received is None else frozenset(journal.received)
    never = frozenset(s.path for s in undone if received is not None and s.path not in received)
    rest = [s for s in undone if s.path not in never]
    worktree = deps.worktree
    if not rest or worktree is None:
        return IOSuccess(never)
    git = deps.git
    paths = [s.path for s in rest]

    def shown(index: Mapping[str, str], files: Mapping[str, str | bool | None]
              ) -> frozenset[str]:
        return never | {s.path for s in rest
                        if index.get(s.path) == s.before and files.get(s.path, False) == s.after}

    def look(tip: str | None) -> IOResult[frozenset[str] | None, StoreError]:
        if tip is None:
            # Another branch is checked out: its index and files say nothing of ours.
            return IOSuccess(never)
        if git.index_locked():
            return IOSuccess(None)
        index: IOResult[Mapping[str, str], StoreError] = git.index_entries(paths)
        return index.bind(lambda entries: file_blobs(
            git, paths, {s.path: (s.after, s.before) for s in rest}).map(
            lambda files: shown(entries, files)))

    return on_branch(git, deps.ref).bind(look)


def is_stale_rewrite(message: str) -> bool:
    """Whether a commit message is the write-back of what a stale-index commit undid:
    ``Memhtml-Op: rewrite-stale``, or as releases before it wrote it (op ``restore``,
    subject ``memhtml restore: N path(s) undone by <sha>``), which the ``restore``
    door's own commits (``memhtml restore: <path>``) never read as."""
    lines = message.splitlines()
    if f"Memhtml-Op: {REWRITE_STALE}" in lines:
        return True
    return bool(lines) and _OLD_STALE_SUBJECT.fullmatch(lines[0]) is not None


def commit_ops(info: CommitInfo) -> tuple[str, ...]:
    """The ops a commit records (its ``Memhtml-Op`` trailers, in order), with the
    stale-index write-back of earlier releases read by its present name, so an old
    ``restore`` of that kind is never taken for the ``restore`` door."""
    if is_stale_rewrite(info.message):
        return (REWRITE_STALE,)
    return tuple(value for name, value in info.trailers if name.lower() == "memhtml-op")


_OLD_STALE_SUBJECT = re.compile(r"memhtml restore: [0-9]+ path\(s\) undone by [0-9a-f]{4,40}")


def _reverts(message: str, commit: str) -> bool:
    """Whether a commit message is ``git revert``'s for ``commit`` (its line "This
    reverts commit <sha>", the full id, as git writes it, whatever else was edited)."""
    return any(line.strip().startswith(f"This reverts commit {commit}")
               for line in message.splitlines())


def _restore(deps: StoreDeps, journal: Journal, paths: Sequence[str], reverter: CommitInfo
             ) -> IOResult[Recovered, StoreError]:
    """One commit writing back the write's blobs where the branch holds the old ones."""
    git = deps.git
    steps = {s.path: s for s in journal.steps if s.path in set(paths)}

    def derive() -> IOResult[Draft, StoreError]:
        def draft(tip: str | None) -> IOResult[Draft, StoreError]:
            if tip is None:
                return IOFailure(Refused("the branch is gone; nothing to restore"))
            entries: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(
                tip, sorted(steps))
            return entries.bind(lambda found: _restore_draft(deps, tip, steps, {
                e.path: e.blob_id for e in found}, reverter))

        return deps.tip().bind(draft)

    return land(deps, derive).map(lambda landed: Recovered(
        (), landed.paths, (reverter.sha,) if landed.paths else ()))


def _restore_draft(deps: StoreDeps, tip: str, steps: Mapping[str, PathStep],
                   held: Mapping[str, str], reverter: CommitInfo
                   ) -> IOResult[Draft, StoreError]:
    wanted = {p: s for p, s in steps.items() if held.get(p) == s.before}
    blob_ids = sorted({b for s in wanted.values() for b in (s.after, s.before) if b is not None})

    def build(blobs: Mapping[str, bytes]) -> Draft:
        changes = tuple(PathChange(p, None if s.after is None else blobs[s.after])
                        for p, s in sorted(wanted.items())
                        if s.after is None or s.after in blobs)
        before = {c.path: None if wanted[c.path].before is None
                  else blobs.get(wanted[c.path].before or "") for c in changes}
        return Draft(
            parent=tip, changes=changes, ops=(REWRITE_STALE,),
            subject=f"{len(changes)} path(s) undone by {reverter.sha[:10]}",
            body=(f"Commit {reverter.sha[:10]} ({reverter.author.name}) was made from an index "
                  "read before a memhtml write and put these paths back as they were; the "
                  "write is written back, the rest of that commit is kept."),
            before=before)

    read: IOResult[Mapping[str, bytes], StoreError] = deps.git.read_blobs(blob_ids)
    return read.map(build)
