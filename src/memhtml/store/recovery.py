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
  ``git commit`` that read the index before the write landed commits that old index
  on top of it and silently undoes it; git cannot know. When the branch holds a path
  at its blob from before the write again, and the commit that put it back is not
  memhtml's, the write is restored by a new commit that names the one it undoes.
  The person's own changes in that commit are kept.
- **Unless the person reverted it.** ``git revert`` names the commit it reverts
  ("This reverts commit <sha>."): a commit undoing the write that names the write's
  commit is the person's choice and stays. Any other commit that puts the old blob
  back is restored, however the checkout looks by then: a stale-index commit leaves
  the written file on disk, but tidying that file away (``git stash``,
  ``git restore``, ``git reset --hard``) before the next command would make it look
  like a chosen ``git rm`` or ``git checkout <old> -- path``, and a person's
  ``git commit`` must never silently undo a write. Those two ways of undoing one
  are written back; ``git revert`` or ``memhtml archive`` keep theirs.
- A mark is dropped once its write can no longer be undone that way unnoticed: when
  a later memhtml commit touched its paths, or ``WATCH_SECONDS`` after it landed.
- **A sync settles what it brings.** Another clone's commits that a sync brings in
  are that clone's intent, not a stale index here: a fast-forward onto a commit that
  deleted a memory written here an hour ago is a deletion to report, never an undo to
  write back. So a sync that moved the branch stops watching, in every earlier mark,
  the paths it changed (``settle_synced``); its own mark watches them from then on.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import reduce
from pathlib import Path

from returns.io import IOFailure, IOResult, IOSuccess
from returns.pipeline import is_successful

from memhtml.contracts.services import CommitInfo, PathChange, TreeEntry
from memhtml.store.checkout import (
    MEMHTML_SUBJECT,
    Journal,
    PathStep,
    Synced,
    bring_up_to_date,
    drop_journal,
    mark_landed,
    read_journals,
    rewrite_journal,
    sweep_temporaries,
)
from memhtml.store.deps import StoreDeps
from memhtml.store.errors import Refused, StoreError
from memhtml.store.landing import Draft, land
from memhtml.store.merge_driver import ensure_merge_driver

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

    def __add__(self, other: Recovered) -> Recovered:
        return Recovered(self.synced + other.synced, self.restored + other.restored,
                         self.reverted_by + other.reverted_by)


def finish_checkout(deps: StoreDeps) -> IOResult[Recovered, StoreError]:
    """Finish every mark a write left; nothing to do without a checkout (two directory
    listings when there are no marks: the marks, and temporaries killed writes left)."""
    git_dir, worktree = deps.checkout_git_dir, deps.worktree
    if git_dir is None or worktree is None:
        return IOSuccess(Recovered())
    # A clone never copies git's config: define the merge driver the generated pages'
    # attribute lines name (and drop the ``ours`` driver an earlier release defined). A
    # lookup when all is in place; a failure leaves doctor to say so.
    ensure_merge_driver(deps.git)
    sweep_temporaries(git_dir, deps.clock.now().timestamp())
    journals = read_journals(git_dir)
    if not journals:
        return IOSuccess(Recovered())
    cleared: IOResult[bool, StoreError] = deps.git.clear_stale_index_lock()

    def then(done: IOResult[Recovered, StoreError], journal: Journal
             ) -> IOResult[Recovered, StoreError]:
        return done.bind(lambda so_far: _settle(deps, journal).map(lambda more: so_far + more))

    def settle_all(_: bool) -> IOResult[Recovered, StoreError]:
        start: IOResult[Recovered, StoreError] = IOSuccess(Recovered())
        settled = reduce(then, journals, start)
        return settled.bind(lambda recovered: _watch_all(deps, git_dir).map(
            lambda more: recovered + more))

    return cleared.lash(lambda _: IOSuccess(False)).bind(settle_all)


def _settle(deps: StoreDeps, journal: Journal) -> IOResult[Recovered, StoreError]:
    """A mark not known to have landed is resolved against the branch; a landed one
    whose checkout did not follow is brought up to date."""
    if journal.commit is None:
        return _landing_of(deps, journal).bind(lambda sha: (
            drop_journal(journal).map(lambda _: Recovered()) if sha is None
            else _follow(deps, journal, sha)))
    if not journal.synced:
        return _follow(deps, journal, journal.commit)
    return IOSuccess(Recovered())


def _follow(deps: StoreDeps, journal: Journal, commit: str) -> IOResult[Recovered, StoreError]:
    worktree = deps.worktree
    if worktree is None:
        return mark_landed(journal, commit, Synced((), (), True)).map(lambda _: Recovered())
    return bring_up_to_date(deps.git, worktree, deps.ref, journal.steps).bind(
        lambda outcome: mark_landed(journal, commit, outcome).map(
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
    git_dir = deps.checkout_git_dir
    settled = frozenset(paths)
    if git_dir is None or not settled:
        return
    for journal in read_journals(git_dir):
        if journal.commit is None or journal.commit == landed:
            continue
        steps = tuple(s for s in journal.steps if s.path not in settled)
        if len(steps) == len(journal.steps):
            continue
        if steps:
            rewrite_journal(replace(journal, steps=steps))
        else:
            drop_journal(journal)


def _holds(deps: StoreDeps, tip: str | None, target: str) -> IOResult[str | None, StoreError]:
    """``target`` when the branch holds it (a fast-forward that landed), else None."""
    if tip is None:
        return IOSuccess(None)
    if tip == target:
        return IOSuccess(target)
    missing: IOResult[tuple[str, ...], StoreError] = deps.git.commits_between(tip, target)
    return missing.map(lambda shas: None if shas else target)


def _watch_all(deps: StoreDeps, git_dir: Path) -> IOResult[Recovered, StoreError]:
    """One tree lookup for every watched write: restore what a commit from a stale
    index undid, and drop the marks that can no longer be undone unseen."""
    landed = [j for j in read_journals(git_dir) if j.commit is not None]
    now = deps.clock.now().timestamp()
    keep = landed[-MAX_WATCHED:]
    stale = landed[:-MAX_WATCHED] + [j for j in keep if now - j.at > WATCH_SECONDS]
    watched = [j for j in keep if now - j.at <= WATCH_SECONDS]

    def drop(done: IOResult[None, StoreError], journal: Journal) -> IOResult[None, StoreError]:
        return done.bind(lambda _: drop_journal(journal))

    start: IOResult[None, StoreError] = IOSuccess(None)
    dropped = reduce(drop, stale, start)
    if not watched:
        return dropped.map(lambda _: Recovered())
    paths = sorted({s.path for j in watched for s in j.steps})

    def judge_all(tip: str | None) -> IOResult[Recovered, StoreError]:
        if tip is None:
            return IOSuccess(Recovered())
        entries: IOResult[tuple[TreeEntry, ...], StoreError] = deps.git.entries_at(tip, paths)

        def each(found: tuple[TreeEntry, ...]) -> IOResult[Recovered, StoreError]:
            held = {e.path: e.blob_id for e in found}

            def then(done: IOResult[Recovered, StoreError], journal: Journal
                     ) -> IOResult[Recovered, StoreError]:
                return done.bind(lambda so_far: _judge(deps, journal, held).map(
                    lambda more: so_far + more))

            start: IOResult[Recovered, StoreError] = IOSuccess(Recovered())
            return reduce(then, watched, start)

        return entries.bind(each)

    return dropped.bind(lambda _: deps.tip().bind(judge_all))


def _judge(deps: StoreDeps, journal: Journal, held: Mapping[str, str]
           ) -> IOResult[Recovered, StoreError]:
    """Restore the paths of ``journal`` a commit other than a ``git revert`` of the
    write put back as they were."""
    undone = [s for s in journal.steps if s.before != s.after and held.get(s.path) == s.before]
    if not undone:
        if all(held.get(s.path) != s.after for s in journal.steps):
            # Every path has moved on since: nothing of this write is left to undo.
            return drop_journal(journal).map(lambda _: Recovered())
        return IOSuccess(Recovered())

    def decide(commits: tuple[CommitInfo, ...]) -> IOResult[Recovered, StoreError]:
        if not commits or commits[0].message.startswith(MEMHTML_SUBJECT):
            # memhtml itself moved the path on (an archive, a move): not an undo.
            return drop_journal(journal).map(lambda _: Recovered())
        reverter = commits[0]
        if journal.commit is not None and _reverts(reverter.message, journal.commit):
            # The person's own git revert of this write: kept.
            return drop_journal(journal).map(lambda _: Recovered())
        return _restore(deps, journal, [s.path for s in undone], reverter).bind(
            lambda restored: drop_journal(journal).map(lambda _: restored))

    touching: IOResult[tuple[CommitInfo, ...], StoreError] = deps.git.commits_touching(
        deps.ref, undone[0].path, 1)
    return touching.bind(decide)


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
            parent=tip, changes=changes, ops=("restore",),
            subject=f"{len(changes)} path(s) undone by {reverter.sha[:10]}",
            body=(f"Commit {reverter.sha[:10]} ({reverter.author.name}) was made from an index "
                  "read before a memhtml write and put these paths back as they were; the "
                  "write is restored, the rest of that commit is kept."),
            before=before)

    read: IOResult[Mapping[str, bytes], StoreError] = deps.git.read_blobs(blob_ids)
    return read.map(build)
