"""Keep a checkout in step with its branch after commits made without it.

Commits are built in memory and land on the branch by compare-and-swap, so a checkout
beside the repository falls behind until its index and working tree are brought up
to date. Left behind, the index reads as a staged revert of the memhtml commit and a
person's next ``git commit`` undoes it. Three rules keep that from ever happening
silently:

- **A durable mark first.** Before a write moves the branch it records, in this
  clone's own state (``Journals``: ``<git-dir>/memhtml/pending/`` on disk), which
  paths it changes and each one's blob before. The mark is removed only once the
  index has been brought up to date; a process killed in between leaves it for the
  next command to finish.
- **Compare-and-set, against the branch as it stands.** A path is brought to what the
  checked-out branch's tip holds (which may already be a later writer's version),
  and only where the index entry, and separately the working-tree file, still hold
  the blob from before the write. Anything else is a person's change and is left
  alone; a person's edits to other paths are never touched.
- **Git's lock is git's.** The index is read and written holding ``index.lock``
  (``GitService.update_index``); a lock held by a person's git is waited for, and a
  write that finds it still held commits nothing.
- **The checkout as git sees it.** A file "holds" the blob git sees in it (its stat
  check, its clean filters: a CRLF checkout of an LF blob holds that blob), and a file
  is written as ``git checkout`` writes it, its index entry carrying the file's stat
  data (``file_blobs``, ``GitService.checkout_bytes``).

``scan_checkout`` is the backstop ``doctor`` runs: any path whose index entry still
holds the blob from before the last memhtml commit that touched it (its file either
as before too, or already up to date), found from the tree itself rather than from
marks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import reduce
from pathlib import Path

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.journals import Journal, Journals, PathStep
from memhtml.contracts.services import (
    FILE_MODE_EXECUTABLE,
    Checkout,
    CommitInfo,
    FileStat,
    GitService,
    IndexUpdate,
    TreeEntry,
)
from memhtml.store.deps import StoreDeps
from memhtml.store.errors import Refused, StoreError

INDEX_LOCK_WAIT_SECONDS = 2.0
"""How long a write waits for a person's git to release ``index.lock`` before it
refuses (nothing committed) rather than commit past it."""
MEMHTML_SUBJECT = "memhtml "


def git_blob_id(data: bytes) -> str:
    """The id git gives a blob of these bytes."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True, slots=True)
class Synced:
    """What bringing a checkout up to date did."""

    paths: tuple[str, ...]
    """Paths whose index entry or file was brought up to date."""
    kept: tuple[str, ...]
    """Paths left as they are: a person's change is there."""
    index_updated: bool
    """False when git's index lock could not be had: the mark stays for later."""
    off_branch: bool = False
    """The checkout has another branch (or a detached HEAD) checked out, so none of it
    was ours to touch; no path is a person's change for that reason."""
    indexed: tuple[str, ...] = ()
    """Paths whose index entry was set to the branch's blob."""
    moved: bool = False
    """The branch moved past the tip this followed before the index took its entries:
    none was set (``index_updated`` False), and the follow is made again against the
    new tip."""


# -- the durable mark ------------------------------------------------------------------


def write_journal(journals: Journals, ref: str, parent: str | None, steps: Sequence[PathStep],
                  at: float, target: str | None = None, merge_parent: str | None = None
                  ) -> IOResult[Journal, StoreError]:
    """Record a write before it moves the branch; a failure to record commits nothing.
    ``target`` marks a fast-forward to that existing commit; ``merge_parent`` a merge
    commit's second parent."""
    journal = Journal(journals.new_name(), ref, tuple(steps), parent, None, at,
                      target=target, merge_parent=merge_parent)
    put: IOResult[Journal, StoreError] = journals.put(journal).alt(
        lambda unrecorded: Refused(unrecorded.reason))
    return put


def mark_landed(journals: Journals | None, journal: Journal, commit: str, done: Synced
                ) -> IOResult[Journal, StoreError]:
    """The mark of a write that has landed as ``commit``, with what bringing the
    checkout up to date did (``done``). Failing to rewrite it only leaves the older
    mark, from which the same is found again."""
    if journals is None:
        return IOSuccess(journal)
    received = (tuple(s.path for s in journal.steps) if done.off_branch or journal.received is None
                else tuple(sorted({*journal.received, *done.indexed})))
    landed = replace(journal, commit=commit, synced=done.index_updated, received=received)
    return journals.put(landed).lash(lambda _: IOSuccess(journal))


def rewrite_journal(journals: Journals, journal: Journal) -> None:
    """Put ``journal`` back as it now is (fewer paths to watch); a failure leaves the
    older mark, which only watches more than it needs to."""
    journals.put(journal)


def drop_journal(journals: Journals | None, journal: Journal | None
                 ) -> IOResult[None, StoreError]:
    """Remove a mark whose work is done (a mark already gone is fine); nothing when
    there is none."""
    if journals is not None and journal is not None:
        journals.drop(journal)
    return IOSuccess(None)


# -- waiting for git ---------------------------------------------------------------------


def index_lock_free(checkout: Checkout, git_dir: Path, sleep: Callable[[float], None],
                    wait_seconds: float = INDEX_LOCK_WAIT_SECONDS) -> IOResult[None, StoreError]:
    """Wait for a person's git to release ``index.lock``; refuse when it stays held.

    Checked before a write commits, so a write never lands while the index is being
    rewritten under it (the later update would have to wait or be lost).
    """
    lock = git_dir / "index.lock"
    waited, pause = 0.0, 0.005
    while checkout.index_locked():
        if waited >= wait_seconds:
            return IOFailure(Refused(
                f"git's index lock {lock} has been held for {wait_seconds:.0f} s (another git "
                "command is running); nothing was written. Retry, or remove the file if no "
                "git command is running"))
        sleep(pause)
        waited += pause
        pause = min(pause * 2, 0.1)
    return IOSuccess(None)


# -- bringing the checkout up to date --------------------------------------------------


def file_blobs(git: GitService, paths: Sequence[str],
               likely: Mapping[str, Collection[str | None]] | None = None
               ) -> IOResult[dict[str, str | bool | None], StoreError]:
    """The blob git sees in each working-tree file (``GitService.worktree_blobs``: the
    index entry's while git's stat check finds the file as staged, else its content
    after the checkout's clean filters, so a CRLF checkout of an LF blob holds that
    blob); None when the file is absent; False when something else is there (a
    directory, a symlink on the way, a file that cannot be read) or git calls the file
    changed with no blob to say how. ``likely`` names the blobs each path is expected
    to hold (the index's, the branch's), which spares opening the index when a file
    holds one of them and nothing filters it."""
    kinds = {path: git.file_kind(path) for path in dict.fromkeys(paths)}
    files = [path for path, kind in kinds.items() if kind is True]
    expected = {path: {blob for blob in (likely or {}).get(path, ()) if blob is not None}
                for path in files}

    def answer(blobs: Mapping[str, str]) -> dict[str, str | bool | None]:
        return {path: (blobs.get(path, False) if kind is True else kind)
                for path, kind in kinds.items()}

    seen: IOResult[Mapping[str, str], StoreError] = (
        git.worktree_blobs(files, expected) if files else IOSuccess({}))
    return seen.map(answer)


ON_BRANCH_READS = 5
"""How often ``on_branch`` reads the branch again when it moved while being compared
with HEAD (each try is three reads of small files)."""


def on_branch(git: GitService, ref: str) -> IOResult[str | None, StoreError]:
    """The branch tip when the checkout's HEAD is that branch; None otherwise (a
    detached or other-branch checkout is not ours to bring up to date).

    HEAD is compared with the branch read before and after it: a person's ``git
    commit`` moving the branch between two reads would otherwise make a checkout on
    the branch look like one elsewhere, and a follow that thinks so records the write
    as in the index (a checkout elsewhere counts as all of it), which hides a commit
    made from a stale index from recovery. A branch still moving after
    ``ON_BRANCH_READS`` tries is compared as last read."""

    def attempt(left: int) -> IOResult[str | None, StoreError]:
        before: IOResult[str, StoreError] = git.resolve(ref)

        def with_head(branch: str) -> IOResult[str | None, StoreError]:
            head: IOResult[str, StoreError] = git.resolve("HEAD")

            def settled(at: str) -> IOResult[str | None, StoreError]:
                after: IOResult[str, StoreError] = git.resolve(ref)
                return after.bind(lambda again: (
                    attempt(left - 1) if again != branch and left > 1
                    else IOSuccess(again if at == again else None)))

            return head.bind(settled)

        return before.bind(with_head)

    return attempt(ON_BRANCH_READS).lash(lambda _: IOSuccess(None))


def bring_up_to_date(git: GitService, ref: str, steps: Sequence[PathStep]
                     ) -> IOResult[Synced, StoreError]:
    """Bring ``steps``' paths to the branch tip's blobs where the checkout still holds
    the blob from before; the rest is a person's and is kept."""
    paths = [s.path for s in steps]

    def against(tip: str | None, left: int) -> IOResult[Synced, StoreError]:
        if tip is None:
            return IOSuccess(Synced((), (), True, off_branch=True))
        entries: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(tip, paths)
        done = entries.bind(lambda found: _apply(git, steps, {e.path: e for e in found},
                                                 tip))
        return done.bind(lambda synced: attempt(left - 1) if synced.moved and left > 1
                         else IOSuccess(synced))

    def attempt(left: int) -> IOResult[Synced, StoreError]:
        return on_branch(git, ref).bind(lambda tip: against(tip, left))

    return attempt(FOLLOW_ATTEMPTS)


FOLLOW_ATTEMPTS = 3
"""How often a follow starts again when the branch moved under it (another writer's
commit, or a person's); after that the mark is left unsynced for the next command."""


def _is_attributes(path: str) -> bool:
    return path == ".gitattributes" or path.endswith("/.gitattributes")


def _apply(git: GitService, steps: Sequence[PathStep],
           now: Mapping[str, TreeEntry], tip: str) -> IOResult[Synced, StoreError]:
    """Decide every path against the checkout as git sees it now, then write in two
    rounds: the ``.gitattributes`` files first (files and index entries), then the
    rest, whose bytes are filtered by the attributes the move brings, as ``git
    checkout`` filters them."""
    def decide(current: Mapping[str, str | bool | None]) -> IOResult[Synced, StoreError]:
        first = [s for s in steps if _is_attributes(s.path)]
        rest = [s for s in steps if not _is_attributes(s.path)]
        if not first:
            return _round(git, rest, now, current, tip).map(lambda done: done[0])

        def then(done: tuple[Synced, _Written]) -> IOResult[Synced, StoreError]:
            synced, written = done
            settled = _refiltered(git, written, now, tip) if synced.index_updated \
                else IOSuccess(None)
            return settled.bind(lambda _: _round(git, rest, now, current, tip).map(
                lambda more: _joined(synced, more[0])))

        return _round(git, first, now, current, tip).bind(then)

    return file_blobs(git, [s.path for s in steps],
                      {s.path: (s.before, now[s.path].blob_id if s.path in now else None)
                       for s in steps}).bind(decide)


_Written = dict[str, tuple[bytes, FileStat]]
"""The files a round wrote: the bytes and the stat data each was left with."""


def _refiltered(git: GitService, written: _Written,
                now: Mapping[str, TreeEntry], tip: str) -> IOResult[None, StoreError]:
    """A ``.gitattributes`` file just written is filtered again by its own new rules
    (``* text eol=crlf`` applies to the file that says it, as ``git checkout`` does),
    where those give other bytes and nobody has touched the file since. Nothing here
    decides what the checkout holds (the blob is the same), so a failure is left be."""
    if not written:
        return IOSuccess(None)

    def rewrite(again: Mapping[str, bytes]) -> IOResult[None, StoreError]:
        updates: list[IndexUpdate] = []
        for path, (data, was) in sorted(written.items()):
            entry = now.get(path)
            fresh = again.get(path)
            if entry is None or fresh is None or fresh == data or git.file_stat(path) != was:
                continue
            put = git.put_file(path, fresh, executable=entry.mode == FILE_MODE_EXECUTABLE)
            if isinstance(put, FileStat):
                updates.append(IndexUpdate(path, entry.blob_id, entry.blob_id, entry.mode, put))
        indexed: IOResult[tuple[str, ...], StoreError] = git.update_index(updates, tip)
        return indexed.map(lambda _: None)

    wanted = {path: entry.blob_id for path in written if (entry := now.get(path)) is not None}
    read: IOResult[Mapping[str, bytes], StoreError] = git.checkout_bytes(wanted)
    return read.bind(rewrite).lash(lambda _: IOSuccess(None))


def _joined(a: Synced, b: Synced) -> Synced:
    """What two rounds did, together."""
    return Synced(tuple(sorted({*a.paths, *b.paths})), tuple(sorted({*a.kept, *b.kept})),
                  a.index_updated and b.index_updated,
                  indexed=tuple(sorted({*a.indexed, *b.indexed})), moved=a.moved or b.moved)


def _round(git: GitService, steps: Sequence[PathStep],
           now: Mapping[str, TreeEntry], current: Mapping[str, str | bool | None],
           tip: str) -> IOResult[tuple[Synced, _Written], StoreError]:
    """Bring ``steps`` to the tip where the checkout (``current``) still holds the blob
    from before: files first, each written as git checks it out, then their index
    entries under git's lock, and only while HEAD is still ``tip`` (a person's commit
    made meanwhile read an index without these entries: setting them after it would
    hide that it undid the write, which recovery must see)."""
    def with_bytes(checked_out: Mapping[str, bytes]
                   ) -> IOResult[tuple[Synced, _Written], StoreError]:
        updates: list[IndexUpdate] = []
        moved: set[str] = set()
        kept: set[str] = set()
        written: _Written = {}
        for step in steps:
            entry = now.get(step.path)
            after = None if entry is None or entry.is_symlink else entry.blob_id
            if entry is not None and entry.is_symlink:
                # A link is never written into the checkout (a later write could follow
                # it out), but the index takes it, so the person's git shows a file
                # missing from the working tree, not a deletion staged in their name.
                if entry.blob_id != step.before:
                    updates.append(IndexUpdate(step.path, step.before, entry.blob_id,
                                               entry.mode))
                kept.add(step.path)
                continue
            mode = entry.mode if entry is not None else 0o100644
            stat: FileStat | None = None
            held = current.get(step.path, False)
            if held != after:
                if held != step.before or (after is not None and step.path not in checked_out):
                    kept.add(step.path)
                else:
                    data = None if after is None else checked_out[step.path]
                    put = git.put_file(step.path, data,
                                       executable=mode == FILE_MODE_EXECUTABLE)
                    if put is False:
                        kept.add(step.path)
                    else:
                        moved.add(step.path)
                        if isinstance(put, FileStat) and data is not None:
                            stat = put
                            written[step.path] = (data, put)
            if after != step.before:
                updates.append(IndexUpdate(step.path, step.before, after, mode, stat))

        def indexed(done: tuple[str, ...]) -> IOResult[tuple[Synced, _Written], StoreError]:
            if updates and not done:
                head: IOResult[str, StoreError] = git.resolve("HEAD")
                left = head.map(lambda at: at != tip).lash(lambda _: IOSuccess(False))
                return left.map(lambda branch_moved: settled(done, branch_moved))
            return IOSuccess(settled(done, False))

        def settled(done: tuple[str, ...], branch_moved: bool) -> tuple[Synced, _Written]:
            if branch_moved:
                return Synced(tuple(sorted(moved)), tuple(sorted(kept)), False,
                              moved=True), written
            skipped = {u.path for u in updates} - set(done)
            return Synced(tuple(sorted(moved | set(done))), tuple(sorted(kept | skipped)),
                          True, indexed=tuple(sorted(done))), written

        set_entries: IOResult[tuple[str, ...], StoreError] = git.update_index(updates, tip)
        updated = set_entries.bind(indexed)
        return updated.lash(lambda _: IOSuccess((
            Synced(tuple(sorted(moved)), tuple(sorted(kept | {u.path for u in updates})),
                   False), written)))

    wanted = {s.path: e.blob_id for s in steps
              if (e := now.get(s.path)) is not None and not e.is_symlink}
    if not wanted:
        return with_bytes({})
    read: IOResult[Mapping[str, bytes], StoreError] = git.checkout_bytes(wanted)
    return read.bind(with_bytes)


def checkout_behind(deps: StoreDeps) -> IOResult[tuple[Behind, ...], StoreError]:
    """``scan_checkout`` for a store's checkout, plus every path a mark still names;
    nothing without a checkout."""
    git_dir, worktree = deps.checkout_git_dir, deps.worktree
    if git_dir is None or worktree is None:
        return IOSuccess(())
    return scan_checkout(deps.git, deps.ref)


# -- the backstop: doctor's scan -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Behind:
    """A path the checkout holds as it was before the memhtml commit ``commit``:
    its index entry (``index``), its working-tree file (``file``), or both."""

    path: str
    commit: str
    before: str | None
    index: bool
    file: bool


def _last_memhtml_step(git: GitService, ref: str, path: str
                       ) -> IOResult[tuple[str, str | None] | None, StoreError]:
    """The newest commit on ``ref`` touching ``path`` and the path's blob before it,
    when that commit is memhtml's; None when it is not (a person's own history)."""

    def before(commits: tuple[CommitInfo, ...]
               ) -> IOResult[tuple[str, str | None] | None, StoreError]:
        if not commits or not commits[0].message.startswith(MEMHTML_SUBJECT):
            return IOSuccess(None)
        last = commits[0]
        if not last.parents:
            return IOSuccess((last.sha, None))
        entries: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(
            last.parents[0], [path])
        return entries.map(lambda found: (last.sha, found[0].blob_id if found else None))

    touching: IOResult[tuple[CommitInfo, ...], StoreError] = git.commits_touching(ref, path, 1)
    return touching.bind(before)


def scan_checkout(git: GitService, ref: str
                  ) -> IOResult[tuple[Behind, ...], StoreError]:
    """Every path whose index entry still holds the blob from before the last memhtml
    commit that touched it, its file either as before or as the branch has it: what a
    person's ``git commit`` would revert. A file alone held as before, under an index
    that followed, is the person's own edit (``edits.local_edits`` lists it)."""

    def judge(path: str, want: str | None, staged: str | None, current: str | bool | None,
              step: tuple[str, str | None] | None) -> Behind | None:
        if step is None:
            return None
        commit, before = step
        index = staged != want and staged == before
        file = current != want and current == before
        # Only the index tells: a write brings the files up to date before the index,
        # so an index that followed with a file still as before is the person's doing
        # (a file they deleted or put back), an uncommitted edit rather than a lag.
        if index and (file or current == want):
            return Behind(path, commit, before, index, file)
        return None

    def compare(tree: tuple[TreeEntry, ...], index: Mapping[str, str]
                ) -> IOResult[tuple[Behind, ...], StoreError]:
        head = {e.path: e.blob_id for e in tree if not e.is_symlink}
        # Only an index entry that differs from the branch can be behind (``judge``),
        # so only those paths' files are looked at.
        staged_apart = sorted(p for p in set(head) | set(index) if index.get(p) != head.get(p))
        likely = {path: (head.get(path), index.get(path)) for path in staged_apart}
        return file_blobs(git, staged_apart, likely).bind(lambda files: walk(
            [(path, head.get(path), index.get(path), files.get(path, False))
             for path in staged_apart]))

    def walk(differing: list[tuple[str, str | None, str | None, str | bool | None]]
             ) -> IOResult[tuple[Behind, ...], StoreError]:
        def then(found: IOResult[tuple[Behind, ...], StoreError],
                 item: tuple[str, str | None, str | None, str | bool | None]
                 ) -> IOResult[tuple[Behind, ...], StoreError]:
            path, want, staged, current = item
            return found.bind(lambda so_far: _last_memhtml_step(git, ref, path).map(
                lambda step: (*so_far, *_some(judge(path, want, staged, current, step)))))

        start: IOResult[tuple[Behind, ...], StoreError] = IOSuccess(())
        return reduce(then, differing, start)

    def scan(tip: str | None) -> IOResult[tuple[Behind, ...], StoreError]:
        if tip is None:
            return IOSuccess(())
        listed: IOResult[tuple[TreeEntry, ...], StoreError] = git.list_tree(tip)
        indexed: IOResult[Mapping[str, str], StoreError] = git.index_entries()
        return listed.bind(lambda tree: indexed.bind(lambda index: compare(tree, index)))

    return on_branch(git, ref).bind(scan)


def _some(behind: Behind | None) -> tuple[Behind, ...]:
    return () if behind is None else (behind,)


def fix_behind(git: GitService, ref: str, behind: Sequence[Behind]
               ) -> IOResult[Synced, StoreError]:
    """Bring what ``scan_checkout`` found up to date, by the same compare-and-set rules
    a write uses (a person's change that appeared meanwhile is kept)."""
    return bring_up_to_date(git, ref, [PathStep(b.path, b.before) for b in behind])
