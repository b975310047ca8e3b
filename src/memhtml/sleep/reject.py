"""Reject: a person's no to single changes of a finished run, as a commit on its branch.

A night proposes many changes and a reviewer may agree with all but a few. Aborting
would throw the rest away, and editing the branch by hand means checking it out; so a
reviewer names the files whose change they refuse (as ``sleep review`` lists them, by
the path the memory had at the base) and one commit on the run branch puts each back
as the base held it:

- a memory the run archived or moved is restored at its path, and the copy where the
  run put it is removed;
- a memory whose body or metadata the run changed gets its base bytes back;
- a file the run created is removed; one it deleted is restored.

Links follow, so no link is left pointing at nothing: a file that links to where an
archived or moved memory went (the run points inbound links at the archive copy) is
pointed back at the restored path; a restored file that links to a memory the run
archived or moved, and the rejection leaves there, is pointed at where it went, as the
run would have pointed it. What cannot be followed is refused, naming every file: a
file left linking to something the run created and the rejection removes (reject that
file's change with it, in one call), or a restored file linking to a memory that is
gone with nowhere to follow it.

The commit carries ``Memhtml-Op: sleep-reject``, the run's ``Memhtml-Run`` and
``Memhtml-Base`` and one ``Memhtml-Rejected`` per path, and no ``Memhtml-Phase``: it
is a person's decision, not a phase's, so it is listed among the run's commits and
the review shows what was rejected and by which commit. Merge judges the branch as
it stands then, behind the same checks and gate: a rejection that leaves a memory
archived with nothing standing for it, say, is refused there with its reason.

Only a finished run that main does not hold takes rejections; a run that stopped is
resumed or aborted first (a resume would decide again from a corpus the person has
changed under it). What the run recorded for its state plane (``sleep.ledger``) is
kept: a memory distilled from a session and rejected is not proposed again from that
session, which is what rejecting it says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import RefMoved
from memhtml.contracts.paths import to_document_path, to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import PathChange, TreeEntry
from memhtml.head import HeadVersion, record_from
from memhtml.sleep.contract import (
    REJECT_OP,
    TRAILER_BASE,
    TRAILER_OP,
    TRAILER_REJECTED,
    TRAILER_RUN,
    branch_of,
)
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.errors import SleepError, SleepRefused
from memhtml.sleep.explain import is_run_record
from memhtml.sleep.review import FileChange, Review, review_run
from memhtml.sleep.runner import versions_at
from memhtml.sync.merge import rewrite_hrefs

REJECTABLE: Final = ("mergeable", "main-advanced")
SHOWN: Final = 20


@dataclass(frozen=True, slots=True)
class Rejected:
    """What a rejection did: the new tip of the run branch, the changes rejected (as
    the review listed them), the files restored or removed for them, and the other
    files whose links were pointed back."""

    run_id: str
    branch: str
    commit: str
    rejected: tuple[FileChange, ...]
    restored: tuple[str, ...]
    relinked: tuple[str, ...]
    related: tuple[str, ...] = ()
    """Files the same decisions changed that were not rejected (a fold's keeper, say):
    the rest of each decision stands until they are rejected too."""
    hand_commits: tuple[str, ...] = ()
    """Commits on the branch that are neither the run's nor a rejection's: what they
    did to a rejected file is put back with the run's change (git keeps them)."""


@dataclass(frozen=True, slots=True)
class _Plan:
    contents: dict[str, bytes | None]
    """Each path the commit writes: its new bytes, None to remove it."""
    relinked: tuple[str, ...]
    broken: tuple[str, ...]


def _targets(record: MemoryRecord) -> frozenset[str]:
    found = {to_tree_path(link.href) for link in record.links}
    if record.superseded_by:
        found.add(to_tree_path(record.superseded_by))
    return frozenset(found)


def _moves(pairs: Mapping[str, str]) -> dict[str, str]:
    """``old -> new`` tree paths as ``rewrite_hrefs`` matches them: by document path
    and by the tree path a link may be written as."""
    found: dict[str, str] = {}
    for old, new in pairs.items():
        found[to_document_path(old)] = to_document_path(new)
        found[old] = to_document_path(new)
    return found


def plan_rejection(review: Review, chosen: Sequence[FileChange], base: Mapping[str, bytes],
                   tip: HeadVersion, tip_bytes: Mapping[str, bytes]) -> _Plan:
    """The commit's contents. Pure: ``base`` holds the base bytes of every chosen
    row's path (absent for a created one); ``tip_bytes`` the tip bytes of every file
    whose links may need following, as ``needs_at_tip`` names them."""
    contents: dict[str, bytes | None] = {}
    back: dict[str, str] = {}
    for row in chosen:
        contents[row.path] = None if row.change == "created" else base[row.path]
        if row.to is not None:
            contents[row.to] = None
            back[row.to] = row.path
    removed = {p for p, data in contents.items() if data is None}
    chosen_paths = {row.path for row in chosen}
    # Where the run's other archives and moves stand, for links in restored files.
    homes = {row.path: row.to for row in review.files
             if row.to is not None and row.path not in chosen_paths}
    relinked: list[str] = []
    broken: list[str] = []
    for path in needs_at_tip(chosen, tip):
        record = tip.get(path)
        if record is None or path in contents:
            continue
        hit = _targets(record) & removed
        followable = {t: back[t] for t in hit if t in back}
        for target in sorted(hit - set(followable)):
            broken.append(f"{path} -> {target}")
        if followable and path in tip_bytes:
            text = tip_bytes[path].decode("utf-8", "surrogateescape")
            contents[path] = rewrite_hrefs(text, _moves(followable)).encode(
                "utf-8", "surrogateescape")
            relinked.append(path)
    for row in chosen:
        data = contents.get(row.path)
        if data is None:
            continue
        parsed = record_from(data.decode("utf-8", "replace"), row.path).value_or(None)
        if parsed is None:
            continue
        gone = {t for t in _targets(parsed) if t in removed
                or (tip.get(t) is None and t in homes)}
        follow = {t: homes[t] for t in gone if t in homes}
        for target in sorted(gone - set(follow)):
            broken.append(f"{row.path} -> {target}")
        if follow:
            # Bytes a strict decode refuses go through unchanged (surrogate escapes).
            contents[row.path] = rewrite_hrefs(data.decode("utf-8", "surrogateescape"),
                                               _moves(follow)).encode("utf-8",
                                                                      "surrogateescape")
    return _Plan(contents, tuple(relinked), tuple(broken))


def needs_at_tip(chosen: Sequence[FileChange], tip: HeadVersion) -> tuple[str, ...]:
    """The tip's files that name a path the rejection removes: by a link (the inbound
    index) or by ``memhtml-superseded-by`` (read off every record: no index holds it)."""
    removed = {row.to for row in chosen if row.to is not None}
    removed |= {row.path for row in chosen if row.change == "created"}
    found: set[str] = set()
    for path in removed:
        found.update(tip.inbound(to_document_path(path)))
        found.update(tip.inbound(path))
    if removed:
        found.update(r.path for r in tip.records()
                     if r.superseded_by and to_tree_path(r.superseded_by) in removed)
    return tuple(sorted(found))


def related_left(review: Review, chosen: Sequence[FileChange]) -> tuple[str, ...]:
    """Changed files a chosen row's decisions name (``related``) and that were not
    chosen themselves, as the review lists them."""
    listed = {row.path for row in review.files}
    picked = {row.path for row in chosen}
    return tuple(sorted({p for row in chosen for d in row.decisions for p in d.related
                         if p in listed and p not in picked}))


def _message(review: Review, chosen: Sequence[FileChange]) -> str:
    lines = [f"memhtml sleep-reject: {len(chosen)} change(s) of run {review.run_id}", ""]
    lines += [f"{row.path}: {row.change}" + (f" to {row.to}" if row.to else "")
              + f" rejected; as at {review.base[:10]}" for row in chosen]
    lines += ["", f"{TRAILER_OP}: {REJECT_OP}", f"{TRAILER_RUN}: {review.run_id}",
              f"{TRAILER_BASE}: {review.base}"]
    lines += [f"{TRAILER_REJECTED}: {row.path}" for row in chosen]
    return "\n".join(lines) + "\n"


def _refused(reason: str) -> IOResult[Rejected, SleepError]:
    return IOFailure(SleepRefused(reason))


def _shown(items: Sequence[str]) -> str:
    more = len(items) - SHOWN
    return "; ".join(items[:SHOWN]) + (f"; and {more} more" if more > 0 else "")


def reject_changes(deps: SleepDeps, run_id: str, paths: Sequence[str]
                   ) -> IOResult[Rejected, SleepError]:
    """One commit on the run's branch that puts each named change back as the base held
    it (see the module's docstring); refused, moving nothing, when the run is not
    finished or already merged, a path is not one of its listed changes, or a link
    would be left pointing at nothing."""
    git = deps.git
    wanted = list(dict.fromkeys(to_tree_path(p) for p in paths))
    if not wanted:
        return _refused("name at least one changed file to reject "
                        "(memhtml sleep review lists them)")

    def chosen_of(review: Review) -> IOResult[Rejected, SleepError]:
        if review.state not in REJECTABLE:
            return _refused(
                f"run {run_id} is {review.state}: only a finished run main does not hold "
                "takes rejections" + (" (resume it, or abort it)"
                                      if review.state == "stopped" else ""))
        rows = {row.path: row for row in review.files}
        by_to = {row.to: row for row in review.files if row.to is not None}
        chosen, unknown = [], []
        for path in wanted:
            row = rows.get(path) or by_to.get(path)
            if row is None:
                unknown.append(path)
            elif row not in chosen:
                chosen.append(row)
        if unknown:
            return _refused(f"run {run_id} changed no such file: {_shown(unknown)} "
                            f"(memhtml sleep review {run_id} lists its changes)")
        records = [row.path for row in chosen if is_run_record(row.path)]
        if records:
            return _refused(f"{_shown(records)}: the run's own record (its report, "
                            "ledger and decisions) is not a change to reject")
        return read_base(review, tuple(chosen))

    def read_base(review: Review, chosen: tuple[FileChange, ...]
                  ) -> IOResult[Rejected, SleepError]:
        restore = [row.path for row in chosen if row.change != "created"]
        return _bytes_at(deps, review.base, restore).bind(
            lambda base: versions_at(deps, review.tip).bind(
                lambda versions: read_tip(review, chosen, base, versions[0])))

    def read_tip(review: Review, chosen: tuple[FileChange, ...], base: dict[str, bytes],
                 tip: HeadVersion) -> IOResult[Rejected, SleepError]:
        missing = [row.path for row in chosen
                   if row.change != "created" and row.path not in base]
        if missing:
            return _refused(f"the run's base {review.base[:10]} holds no {_shown(missing)}")
        own = [row.path for row in chosen]
        return _bytes_at(deps, review.tip, [*needs_at_tip(chosen, tip), *own]).bind(
            lambda held: same_as_tip(review, chosen, held, plan_rejection(
                review, chosen, base, tip, held)))

    def same_as_tip(review: Review, chosen: tuple[FileChange, ...], held: dict[str, bytes],
                    plan: _Plan) -> IOResult[Rejected, SleepError]:
        # A change that only pointed a file's links at where the run archived or moved
        # their target comes back, once restored and followed again, as the very bytes
        # the tip holds: nothing to put back but the other memory's move.
        idle = [row.path for row in chosen if row.to is None and row.change != "created"
                and plan.contents.get(row.path) == held.get(row.path)]
        if idle:
            return _refused(
                f"{_shown(idle)}: the run changed only where its links point, following a "
                "memory it archived or moved; reject that memory's change instead (memhtml "
                f"sleep review {run_id} lists it)")
        return commit(review, chosen, plan)

    def commit(review: Review, chosen: tuple[FileChange, ...], plan: _Plan
               ) -> IOResult[Rejected, SleepError]:
        if plan.broken:
            return _refused(
                f"rejecting would leave {len(plan.broken)} link(s) pointing at nothing: "
                f"{_shown(plan.broken)}; reject the linking file's change in the same call, "
                "or leave this one")
        changes = [PathChange(path, data) for path, data in sorted(plan.contents.items())]
        made: IOResult[str, SleepError] = git.commit(
            f"refs/heads/{branch_of(run_id)}", review.tip, changes, _message(review, chosen),
            deps.author, deps.clock.now())

        def moved(error: SleepError) -> IOResult[str, SleepError]:
            if isinstance(error, RefMoved):
                return IOFailure(SleepRefused(
                    f"the branch {branch_of(run_id)} moved while the rejection was made; "
                    "review the run again"))
            return IOFailure(error)

        restored = tuple(sorted(p for p in plan.contents if p not in plan.relinked))
        hands = tuple(c.sha for c in review.commits if c.phase is None
                      and (TRAILER_OP, REJECT_OP) not in c.trailers
                      and not any(name == TRAILER_RUN for name, _ in c.trailers))
        return made.lash(moved).map(lambda sha: Rejected(
            run_id, branch_of(run_id), sha, chosen, restored, plan.relinked,
            related_left(review, chosen), hands))

    return review_run(deps, run_id).bind(chosen_of)


def _bytes_at(deps: SleepDeps, commit: str, paths: Sequence[str]
              ) -> IOResult[dict[str, bytes], SleepError]:
    """The bytes of each of ``paths`` at ``commit`` (a path it lacks is left out)."""
    git = deps.git
    entries: IOResult[tuple[TreeEntry, ...], SleepError] = git.entries_at(commit, list(paths))

    def read(found: tuple[TreeEntry, ...]) -> IOResult[dict[str, bytes], SleepError]:
        ids = {e.path: e.blob_id for e in found}
        blobs: IOResult[Mapping[str, bytes], SleepError] = git.read_blobs(
            sorted(set(ids.values())))
        return blobs.map(lambda got: {p: got[i] for p, i in ids.items() if i in got})

    if not paths:
        return IOSuccess({})
    return entries.bind(read)


__all__ = ["REJECTABLE", "Rejected", "plan_rejection", "reject_changes"]
