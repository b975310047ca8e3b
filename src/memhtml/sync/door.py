"""``memhtml sync``: fetch, merge fact by fact, push; never forced, no version lost.

One round reads the remote branch (``RemoteService.fetch``), brings it into the
local branch, and pushes the result with the remote's fetched sha as the lease.
Bringing it in is the cheapest of four moves that is exact:

- the remote has nothing the local branch lacks: nothing to do;
- the local branch has nothing the remote lacks: a fast-forward (``forward``), with
  the checkout following the way it follows a write;
- both moved: a merge commit whose parents are the local tip and the remote tip, so
  every version on either side stays in history, and whose tree is the local tree
  with ``merge_trees``' result applied. It lands through the same ``land`` as every
  write, so a local writer racing the merge makes it re-derive on the new tip, and
  a path the person has edited and not committed refuses it, leaving both sides as
  they were.

Before either move, every path the remote brings is held to the doors' own rules
(``store.carried``): one a write would refuse (a name no checkout can hold, a twin, a
symbolic link at a layout path, a name some file system reads as another) refuses
the whole sync, each such path named (``RemotePathsRefused``), with nothing moved.
After a move, the outcome names each live memory the remote deleted outright, and
the paths the sync changed stop being watched as a stale index's undo of an earlier
write here (``recovery.settle_synced``): they are the other clone's doing.

A push refused because the remote moved meanwhile starts another round (fetch,
merge, push), at most ``MAX_ROUNDS`` in all, after a pause drawn at random below a
ceiling that doubles each round (``ROUND_PAUSE_BASE_SECONDS`` up to
``ROUND_PAUSE_CAP_SECONDS``): clones that lost to the same push do not all come back
at the same instant and collide again. A clone that keeps losing says so rather than
spinning. Nothing here ever rewrites or deletes a commit.

A push the remote refuses to these credentials (``PushForbidden``: a read-only
member) is not a failure of the sync: what it fetched is brought in, the local
commits stay here, and the outcome carries the refusal (``push_refused``) for the
edge to say once. A push the remote's policy declines (``PushDeclined``) and a remote
branch rewound behind what this clone last saw there (``RemoteRewound``, when the
local branch holds that commit) are errors: nothing is retried, nothing is pushed
over the remote, nothing local is lost. A rewind that drops only commits this clone
never took in (a tip the doors refused) is followed like any fetch.

The merge reads only the paths the two sides changed since their merge base, plus
the two trees' path lists for choosing free names, so its cost follows the change
rather than the store.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import (
    PathRefused,
    PushForbidden,
    PushRejected,
    RefMoved,
    RemoteError,
    RemoteRewound,
)
from memhtml.contracts.services import PathChange, RemoteService, TreeEntry
from memhtml.head import is_candidate_path
from memhtml.head.record import is_archived_path
from memhtml.store.carried import Around, carried_refusals, directories_around
from memhtml.store.errors import Refused, StoreError, describe, widen
from memhtml.store.landing import Draft, Landed, forward, land
from memhtml.store.layout import original_of_archived
from memhtml.store.recovery import settle_synced
from memhtml.store.session import Store
from memhtml.sync.errors import RemotePathsRefused
from memhtml.sync.merge import MergeEvent, TreeMerge, merge_trees

__all__ = ["MAX_ROUNDS", "SyncError", "SyncOutcome", "sync"]

MAX_ROUNDS = 5
"""Fetch-merge-push rounds before a clone that keeps losing the push race gives up
(each loss means another clone pushed in between, so the work is not lost: the next
sync starts from it)."""
ROUND_PAUSE_BASE_SECONDS = 0.05
ROUND_PAUSE_CAP_SECONDS = 1.0
"""The pause before round ``n + 1`` is drawn uniformly from ``[0, min(cap, base *
2**(n - 1))]``: "full jitter", which spreads clones that lost the same race."""

SyncError: TypeAlias = StoreError | RemoteError | RemotePathsRefused
Action = Literal["up-to-date", "fast-forward", "merged", "ahead", "published-new"]
Progress: TypeAlias = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class SyncOutcome:
    """What one sync did, for its summary."""

    remote: str
    branch: str
    before: str | None
    """The local tip before the sync."""
    fetched: str | None
    """The remote tip the last round read (None: the remote had no such branch)."""
    after: str | None
    """The local tip after it (equal to the remote's when ``pushed`` or up to date)."""
    action: Action
    pushed: bool
    rounds: int
    events: tuple[MergeEvent, ...] = ()
    changed: tuple[str, ...] = ()
    """Paths the sync changed in the local branch (merge or fast-forward)."""
    kept: tuple[str, ...] = ()
    """Checkout paths left as they were because the person had changed them."""
    deleted: tuple[str, ...] = ()
    """Live memories the remote deleted outright (not archived, not moved) that the
    sync took out of the local branch; ``memhtml restore PATH`` brings one back."""
    remote_head: str | None = None
    """The branch the remote's HEAD named, one it did not have, before this sync
    pointed HEAD at ``branch``; None when HEAD was left as it was."""
    push_refused: PushForbidden | None = None
    """The remote refused this clone's push for lack of permission (a read-only
    member): what was fetched was brought in, the local commits stay here."""


class _Tree(Mapping[str, bytes]):
    """One side's tree as the merge sees it: every path it holds, the bytes of the
    paths either side changed. Asking for the bytes of any other path is a defect in
    the merge (its cost must follow the change), reported as such."""

    def __init__(self, paths: frozenset[str], blobs: Mapping[str, bytes]) -> None:
        self._paths = paths
        self._blobs = blobs

    def __getitem__(self, path: str) -> bytes:
        if path not in self._paths:
            raise KeyError(path)
        try:
            return self._blobs[path]
        except KeyError:
            raise LookupError(f"the merge read {path}, which neither side changed") from None

    def __contains__(self, path: object) -> bool:
        return path in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._paths))

    def __len__(self) -> int:
        return len(self._paths)


def _widen(error: SyncError) -> SyncError:
    return error


@dataclass(frozen=True, slots=True)
class _Side:
    sha: str
    entries: Mapping[str, TreeEntry]
    paths: frozenset[str]


def _side(store: Store, sha: str, changed: tuple[str, ...]) -> IOResult[_Side, StoreError]:
    wanted = set(changed)
    return store.deps.git.list_tree(sha).alt(widen).map(lambda listed: _Side(
        sha, {e.path: e for e in listed if e.path in wanted},
        frozenset(e.path for e in listed)))


def _changed(store: Store, base: str | None, a: str, b: str
             ) -> IOResult[tuple[str, ...], StoreError]:
    """Paths either side changed since the merge base; with no common history, every
    path of either tree."""
    git = store.deps.git
    if base is None:
        return git.list_tree(a).bind(lambda x: git.list_tree(b).map(
            lambda y: tuple(sorted({e.path for e in (*x, *y)})))).alt(widen)
    return git.changed_paths(base, a).bind(lambda x: git.changed_paths(base, b).map(
        lambda y: tuple(sorted({*x, *y})))).alt(widen)


def _trees(store: Store, sides: tuple[_Side | None, _Side, _Side]
           ) -> IOResult[tuple[_Tree, _Tree, _Tree], StoreError]:
    """The three trees, every changed blob read in one batch. A symbolic link is
    handed over as its target's bytes, like any blob: the merge treats it as a file
    that is not a memory."""
    wanted = sorted({e.blob_id for s in sides if s is not None for e in s.entries.values()})

    def build(blobs: Mapping[str, bytes]) -> tuple[_Tree, _Tree, _Tree]:
        def tree(side: _Side | None) -> _Tree:
            if side is None:
                return _Tree(frozenset(), {})
            return _Tree(side.paths, {p: blobs[e.blob_id] for p, e in side.entries.items()
                                      if e.blob_id in blobs})

        return tree(sides[0]), tree(sides[1]), tree(sides[2])

    return store.deps.git.read_blobs(wanted).alt(widen).map(build)


def merge_draft(store: Store, ours: str, theirs: str, label: str
                ) -> IOResult[tuple[Draft, TreeMerge], StoreError]:
    """The merge commit of ``theirs`` into ``ours``, as a draft for ``land``."""
    git = store.deps.git

    def with_base(base: str | None) -> IOResult[tuple[Draft, TreeMerge], StoreError]:
        return _changed(store, base, ours, theirs).bind(
            lambda changed: _read(base, changed))

    def _read(base: str | None, changed: tuple[str, ...]
              ) -> IOResult[tuple[Draft, TreeMerge], StoreError]:
        base_side: IOResult[_Side | None, StoreError] = (
            IOSuccess(None) if base is None else _side(store, base, changed))
        return base_side.bind(lambda b: _side(store, ours, changed).bind(
            lambda o: _side(store, theirs, changed).bind(
                lambda t: _trees(store, (b, o, t)).map(
                    lambda trees: _drafted(trees, (o, t), changed, ours, theirs, label)))))

    return git.merge_base(ours, theirs).alt(widen).bind(with_base)


def _mode(path: str, data: bytes | None, trees: tuple[_Tree, _Tree],
          sides: tuple[_Side, _Side]) -> int | None:
    """The mode a merged path keeps: the mode of the side whose bytes it took (a link
    the other clone made stays a link); None, a plain file's, for bytes the merge made."""
    if data is None:
        return None
    for tree, side in zip(trees, sides, strict=True):
        entry = side.entries.get(path)
        if entry is not None and path in tree and tree.get(path) == data:
            return entry.mode
    return None


def _drafted(trees: tuple[_Tree, _Tree, _Tree], sides: tuple[_Side, _Side],
             changed: tuple[str, ...], ours: str, theirs: str, label: str
             ) -> tuple[Draft, TreeMerge]:
    base, mine, other = trees
    merged = merge_trees(base, mine, other, changed)
    changes: list[PathChange] = []
    before: dict[str, bytes | None] = {}
    for path in sorted(merged.merged):
        data = merged.merged[path]
        now = mine.get(path)
        mode = _mode(path, data, (mine, other), sides)
        mine_entry = sides[0].entries.get(path)
        if now != data or (mode is not None and mine_entry is not None
                           and mine_entry.mode != mode):
            changes.append(PathChange(path, data, mode))
            before[path] = now
    kinds: dict[str, int] = {}
    for event in merged.events:
        kinds[event.kind] = kinds.get(event.kind, 0) + 1
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
    draft = Draft(
        parent=ours, changes=tuple(changes), ops=("sync",),
        subject=f"merge {label}" + (f" ({counts})" if counts else ""),
        body="; ".join(e.detail for e in merged.events), before=before, label="sync",
        trailers=(("Memhtml-Merged", theirs),), merge_parent=theirs)
    return draft, merged


@dataclass(frozen=True, slots=True)
class _Integrated:
    tip: str | None
    action: Action
    events: tuple[MergeEvent, ...] = ()
    landed: Landed | None = None
    deleted: tuple[str, ...] = ()


def _vetted(store: Store, local: str | None, remote_tip: str, label: str
            ) -> IOResult[None, SyncError]:
    """Refuse a remote tip that brings any path the doors would refuse
    (``store.carried``), before anything moves: every offending path is named.

    The paths it brings are those it changed since the merge base (all of its tree
    when the histories share no commit, or when there is no local commit). A new
    name is judged against the directories on its way, as both sides hold them, and
    this side's own additions since the base: its cost follows what changed, not the
    size of the store."""
    git = store.deps.git

    def at(commit: str | None, paths: tuple[str, ...]
           ) -> IOResult[tuple[TreeEntry, ...], SyncError]:
        if commit is None:
            return IOSuccess(())
        return git.entries_at(commit, paths).alt(_widen)

    def names(commit: str | None, directories: tuple[str, ...]
              ) -> IOResult[Mapping[str, tuple[str, ...]], SyncError]:
        if commit is None:
            return IOSuccess({})
        return git.names_in(commit, directories).alt(_widen)

    def with_base(base: str | None) -> IOResult[None, SyncError]:
        changed: IOResult[tuple[str, ...], SyncError] = (
            git.list_tree(remote_tip).alt(_widen).map(lambda es: tuple(e.path for e in es))
            if base is None else git.changed_paths(base, remote_tip).alt(_widen))
        return changed.bind(lambda paths: at(remote_tip, paths).bind(
            lambda brought: at(local, paths).bind(lambda held: judge(
                base, paths, brought, frozenset(e.path for e in held)))))

    def judge(base: str | None, changed: tuple[str, ...], brought: tuple[TreeEntry, ...],
              held: frozenset[str]) -> IOResult[None, SyncError]:
        fresh = [entry.path for entry in brought if entry.path not in held]
        if not fresh:
            return refuse(carried_refusals(brought, held))
        present = {entry.path for entry in brought}
        removed = frozenset(path for path in changed if path not in present)
        around = directories_around(fresh)
        return names(remote_tip, around).bind(lambda theirs: names(local, around).bind(
            lambda here: own(base).bind(lambda added: refuse(carried_refusals(
                brought, held, Around(here, theirs, removed, added))))))

    def own(base: str | None) -> IOResult[frozenset[str] | None, SyncError]:
        """The paths this side added or edited since the base, which a merge keeps
        (None: no shared history, so every path here is this side's)."""
        if local is None:
            return IOSuccess(frozenset())
        if base is None:
            return IOSuccess(None)
        if base == local:
            return IOSuccess(frozenset())
        return git.changed_paths(base, local).alt(_widen).bind(lambda paths: at(
            local, paths).map(lambda entries: frozenset(e.path for e in entries)))

    def refuse(refused: tuple[PathRefused, ...]) -> IOResult[None, SyncError]:
        if not refused:
            return IOSuccess(None)
        return IOFailure(RemotePathsRefused(label, remote_tip, tuple(r.path for r in refused),
                                            tuple(describe(r) for r in refused)))

    base: IOResult[str | None, SyncError] = (
        IOSuccess(None) if local is None else git.merge_base(local, remote_tip).alt(_widen))
    return base.bind(with_base)


def _integrate(store: Store, remote_tip: str | None, label: str
               ) -> IOResult[_Integrated, SyncError]:
    """Bring ``remote_tip`` into the local branch by the cheapest exact move."""
    git = store.deps.git

    def with_local(local: str | None) -> IOResult[_Integrated, SyncError]:
        if remote_tip is None:
            return IOSuccess(_Integrated(local, "published-new" if local else "up-to-date"))
        if local == remote_tip:
            return IOSuccess(_Integrated(local, "up-to-date"))
        if local is None:
            return _vetted(store, local, remote_tip, label).bind(lambda _: _forward(local))
        return git.is_ancestor(remote_tip, local).alt(_widen).bind(
            lambda behind: IOSuccess(_Integrated(local, "ahead")) if behind else
            _vetted(store, local, remote_tip, label).bind(lambda _: git.is_ancestor(
                local, remote_tip).alt(_widen).bind(
                lambda ff: _forward(local) if ff else _merge())))

    lost_forwards: list[RefMoved] = []

    def _forward(local: str | None) -> IOResult[_Integrated, SyncError]:
        assert remote_tip is not None  # the caller checked
        if local == remote_tip:
            return IOSuccess(_Integrated(local, "up-to-date"))

        def lost(error: SyncError) -> IOResult[_Integrated, SyncError]:
            # A local writer landed between reading the tip and moving it: the remote
            # is no longer a fast-forward of the branch, so the move is chosen again
            # from the new tip (a merge, now). Each loss is another landed write.
            if not isinstance(error, RefMoved) or len(lost_forwards) >= MAX_ROUNDS:
                return IOFailure(error)
            lost_forwards.append(error)
            return store.tip().alt(_widen).bind(with_local)

        return forward(store.deps, local, remote_tip).alt(_widen).map(
            lambda done: _settled(store, done, remote_tip)).bind(
            lambda done: _removed(store, local, remote_tip).map(lambda gone: _Integrated(
                remote_tip, "fast-forward", (), done, gone))).lash(lost)

    def _merge() -> IOResult[_Integrated, SyncError]:
        assert remote_tip is not None  # the caller checked
        found: list[TreeMerge] = []
        bases: list[str] = []

        def derive() -> IOResult[Draft, StoreError]:
            # ``land`` calls this again after a local writer moved the branch: the
            # merge is then taken against the new local tip.
            def drafted(local: str | None) -> IOResult[Draft, StoreError]:
                if local is None:
                    return IOFailure(Refused(f"{store.deps.ref} vanished while merging"))
                bases.append(local)
                return merge_draft(store, local, remote_tip, label).map(
                    lambda pair: _keep(found, pair))

            return store.tip().bind(drafted)

        return land(store.deps, derive, guard_edits=True).alt(_widen).map(
            lambda done: _settled(store, done, done.commit)).bind(
            lambda done: _removed(store, bases[-1] if bases else None, done.commit).map(
                lambda gone: _Integrated(done.commit, "merged",
                                         found[-1].events if found else (), done, gone)))

    return store.tip().alt(_widen).bind(with_local)


def _settled(store: Store, done: Landed, commit: str) -> Landed:
    """What the sync changed is the other clone's doing: earlier writes' marks stop
    watching those paths (``recovery.settle_synced``), so a memory written here and
    deleted there is reported as deleted, not written back as a stale-index undo."""
    settle_synced(store.deps, done.paths, commit)
    return done


def _removed(store: Store, before: str | None, after: str
             ) -> IOResult[tuple[str, ...], SyncError]:
    """The live memories the branch held at ``before`` and no longer holds at ``after``
    because the remote deleted them outright: not archived (no ``archive/<YYYY>/``
    copy arrived) and not moved (no path arrived with the same bytes). Read from the
    paths the two commits differ on, so it costs what the sync changed."""
    git = store.deps.git
    if before is None or before == after:
        return IOSuccess(())

    def judge(was: tuple[TreeEntry, ...], now: tuple[TreeEntry, ...]) -> tuple[str, ...]:
        held = {e.path: e.blob_id for e in now}
        earlier = {e.path: e.blob_id for e in was}
        arrived = {path: blob for path, blob in held.items() if path not in earlier}
        archived = {original_of_archived(path) for path in arrived}
        moved = set(arrived.values())
        return tuple(sorted(
            path for path, blob in earlier.items()
            if path not in held and is_candidate_path(path) and not is_archived_path(path)
            and path not in archived and blob not in moved))

    def entries(paths: tuple[str, ...]) -> IOResult[tuple[str, ...], SyncError]:
        return git.entries_at(before, paths).bind(lambda was: git.entries_at(after, paths).map(
            lambda now: judge(was, now))).alt(_widen)

    return git.changed_paths(before, after).alt(_widen).bind(entries)


def _keep(found: list[TreeMerge], pair: tuple[Draft, TreeMerge]) -> Draft:
    found.append(pair[1])
    return pair[0]


def sync(store: Store, remote: RemoteService, name: str, branch: str,
         on_progress: Progress | None = None, rng: random.Random | None = None
         ) -> IOResult[SyncOutcome, SyncError]:
    """Fetch ``branch`` from the remote ``name``, bring it into the store's branch, push
    the result; repeat while the push loses to another clone, at most ``MAX_ROUNDS``,
    pausing a random while (from ``rng``) before each new round."""
    label = f"{name}/{branch}"
    jitter = rng or random.Random()

    def round_(number: int, start: SyncOutcome) -> IOResult[SyncOutcome, SyncError]:
        def integrated(fetched: str | None) -> IOResult[SyncOutcome, SyncError]:
            return _integrate(store, fetched, label).bind(
                lambda done: push(fetched, _outcome(start, number, fetched, done)))

        fetched: IOResult[str | None, SyncError] = remote.fetch(name, branch, on_progress)
        return fetched.lash(rewound).bind(integrated)

    def rewound(error: SyncError) -> IOResult[str | None, SyncError]:
        # The remote dropped the commit this clone last saw there. When the local
        # branch holds it (it was merged or pushed from here), following would drop
        # local memories and pushing would undo someone's rewrite: refused. When it
        # does not (a tip the doors refused, say), nothing of this clone's is lost by
        # taking the new tip as any fetch would.
        if not isinstance(error, RemoteRewound):
            return IOFailure(error)
        git = store.deps.git

        def judged(local: str | None) -> IOResult[str | None, SyncError]:
            held: IOResult[bool, SyncError] = (
                IOSuccess(False) if local is None
                else git.is_ancestor(error.seen, local).alt(_widen))
            return held.bind(lambda ours: IOFailure(error) if ours else git.move_ref(
                f"refs/remotes/{name}/{branch}", error.seen, error.found).alt(_widen).map(
                lambda _: error.found))

        return store.tip().alt(_widen).bind(judged)

    def push(fetched: str | None, so_far: SyncOutcome) -> IOResult[SyncOutcome, SyncError]:
        local = so_far.after
        if local is None or local == fetched:
            return IOSuccess(so_far)
        pushed: IOResult[None, SyncError] = remote.push(name, branch, local, fetched,
                                                        on_progress)

        def lost(error: SyncError) -> IOResult[SyncOutcome, SyncError]:
            if isinstance(error, PushForbidden):
                return IOSuccess(replace(so_far, push_refused=error))
            if isinstance(error, PushRejected) and so_far.rounds < MAX_ROUNDS:
                ceiling = min(ROUND_PAUSE_CAP_SECONDS,
                              ROUND_PAUSE_BASE_SECONDS * 2 ** (so_far.rounds - 1))
                store.deps.clock.sleep(jitter.uniform(0.0, ceiling))
                return round_(so_far.rounds + 1, so_far)
            return IOFailure(error)

        return pushed.map(lambda _: replace(so_far, pushed=True)).lash(lost)

    def begin(before: str | None) -> IOResult[SyncOutcome, SyncError]:
        return round_(1, SyncOutcome(name, branch, before, None, before, "up-to-date", False, 0))

    def headed(outcome: SyncOutcome) -> IOResult[SyncOutcome, SyncError]:
        # The remote's branch is at ``after`` now. A remote made by ``git init --bare``
        # has a HEAD naming a branch it lacks, and a clone following it finds nothing.
        # Pointing HEAD is a courtesy to the next clone: the sync already did its work,
        # so a remote whose HEAD cannot be written fails nothing here (and clone finds
        # the store without it).
        if outcome.after is None:
            return IOSuccess(outcome)
        pointed: IOResult[str | None, SyncError] = remote.point_head(
            name, branch, outcome.after)
        return pointed.map(lambda was: replace(outcome, remote_head=was)).lash(
            lambda _: IOSuccess(outcome))

    return store.tip().alt(_widen).bind(begin).bind(headed)


def _outcome(start: SyncOutcome, number: int, fetched: str | None, done: _Integrated
             ) -> SyncOutcome:
    """The outcome after one more round: its events and changed paths added to the
    earlier rounds', the action the most telling one seen (a merge outranks a
    fast-forward, which outranks being up to date)."""
    rank = ("up-to-date", "ahead", "published-new", "fast-forward", "merged")
    action = max(start.action, done.action, key=rank.index)
    changed = start.changed + (done.landed.paths if done.landed else ())
    kept = start.kept + (done.landed.unsynced if done.landed else ())
    return replace(start, fetched=fetched, after=done.tip, action=action, rounds=number,
                   events=start.events + done.events, changed=tuple(sorted(set(changed))),
                   kept=tuple(sorted(set(kept))),
                   deleted=tuple(sorted({*start.deleted, *done.deleted})))
