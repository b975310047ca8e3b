"""Which repository is a store, on which branch, and who its commits are by.

A store is explicit: ``memhtml init`` commits a marker (``.memhtml/store.toml``), and
opening any other repository is refused before anything is read or written, so a
command run in the wrong directory never commits memories onto a project's own
branch. A store made before the marker existed is recognised by the layout its
``init`` committed and keeps working unchanged.

The branch a store writes is this clone's own choice, kept where no pull can reach
it: the repository's own git config (``memhtml.branch``), recorded by ``init`` and
``clone``, or by the first opening of a clone that has none. A committed file (the
marker's ``branch``, a config key) only helps find the store that first time; after
it, whatever a collaborator pushes never moves where this clone writes. No door ever
writes a sleep run's branch (``sleep/...``), which ``sleep abort`` deletes.

Commits carry the person's identity as author (what git itself would use) and
memhtml as committer, so ``git log`` tells who asked for a change and which program
made it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.compose.settings import MARKER_FILE, Settings, SettingsError
from memhtml.contracts.errors import NotFound
from memhtml.contracts.services import GitService, Signature
from memhtml.store.layout import BRANCH_KEY, store_branch_problem

if TYPE_CHECKING:
    from memhtml.adapters.git import PygitService
    from memhtml.store.layout import StoreMark

AGENT = Signature("memhtml", "memhtml@localhost")
"""memhtml itself: the committer of every commit, the author of a sleep run's, and
the author of a door's when no identity is configured."""
DEFAULT_BRANCH = "main"
"""Where a store made before the marker existed lives (``init`` then always chose it)."""


@dataclass(frozen=True, slots=True)
class NotAStore(SettingsError):  # noqa: N818 - an error value, never raised
    """The repository a command was pointed at is not a store: no branch of it that
    the command would use carries the marker ``memhtml init`` commits. Nothing was
    read or written; ``reason`` names the repository and the two ways out."""


@dataclass(frozen=True, slots=True)
class BranchRefused(SettingsError):  # noqa: N818 - an error value, never raised
    """A branch no door may write was named as the store's: a sleep run's (``sleep/...``),
    which ``sleep abort`` deletes with whatever was committed there, or a name that is
    not a plain branch (a tag, ``HEAD``, a malformed name). Named by a flag, a variable,
    the user's config, ``init``/``clone --branch`` or this clone's record; nothing was
    read or written, and ``reason`` says which and how to name another."""


@dataclass(frozen=True, slots=True)
class InitRefused(SettingsError):  # noqa: N818 - an error value, never raised
    """``memhtml init`` cannot make the store on the branch asked for (HEAD detached,
    a name git would refuse, or a checkout on another branch); nothing was written."""


def person(settings: Settings, git: PygitService, env: Mapping[str, str]) -> Signature:
    """The author of a door's commits: the ``author_name``/``author_email`` settings,
    else git's identity (``GIT_AUTHOR_*``, the repository's config, the user's), else
    memhtml. A part git would refuse in a signature (angle brackets, a line break)
    counts as unset."""
    name, email = git.configured_identity(env)

    def usable(value: str | None) -> str | None:
        if value is None or not value.strip() or any(ch in value for ch in "<>\n\r\0"):
            return None
        return value.strip()

    return Signature(usable(settings.author_name) or usable(name) or AGENT.name,
                     usable(settings.author_email) or usable(email) or AGENT.email)


def _ref(branch: str) -> str:
    """The ref a branch name stands for. Only ``HEAD`` (read, for a detached checkout)
    and ``refs/heads/`` pass as they are: any other ``refs/...`` is taken as a branch
    name, so a tag or a remote-tracking ref is never read or written as the store."""
    if branch == "HEAD" or branch.startswith("refs/heads/"):
        return branch
    return f"refs/heads/{branch}"


def _mark_at(git: PygitService, branch: str) -> IOResult[StoreMark | None, SettingsError]:
    """What ``branch``'s tip says about being a store; None for a missing or unborn
    branch, or a tip that is not a store's."""
    from memhtml.store.layout import store_mark

    def judged(tip: str | None) -> IOResult[StoreMark | None, SettingsError]:
        if tip is None:
            return IOSuccess(None)
        return store_mark(git, tip).alt(lambda e: SettingsError(f"cannot read {branch}: {e}"))

    resolved: IOResult[str | None, SettingsError] = git.resolve(_ref(branch)).map(_some).lash(
        lambda e: IOSuccess(None) if isinstance(e, NotFound)
        else IOFailure(SettingsError(f"cannot read {branch}: {e}")))
    return resolved.bind(judged)


def not_a_store(root: Path, branches: tuple[str, ...]) -> NotAStore:
    where = " or ".join(branches) if branches else "any branch (HEAD is detached)"
    return NotAStore(
        f"{root} is not a memhtml store: no {MARKER_FILE.as_posix()} on {where}. Run "
        f"`memhtml init {root}` to make it one (on the branch checked out), or pass "
        f"--store DIR (or set MEMHTML_STORE) to name the store you meant")


def refused_branch(name: str, named_by: str, fix: str) -> BranchRefused | None:
    """``BranchRefused`` for ``name`` (``named_by`` says where it came from, ``fix`` how
    to name another) when no door may write it; None for a branch a store may live on."""
    problem = store_branch_problem(name)
    if problem is None:
        return None
    return BranchRefused(f"{named_by} names {problem}. {fix}")


_RECORD_FIX = (f"Set this clone's branch (git config {BRANCH_KEY} NAME), or remove the "
               f"record (git config --unset {BRANCH_KEY}) to find the store again")


def recorded_branch(git: GitService) -> IOResult[str | None, SettingsError]:
    """This clone's record of its store's branch (``memhtml.branch`` in the repository's
    own git config); None when there is none, or when the branch it names no longer
    exists (the person renamed or deleted it: a pull never deletes a local branch). A
    record no door may write is refused (``BranchRefused``): it was set by hand."""
    read: IOResult[str | None, SettingsError] = git.local_config_value(BRANCH_KEY).alt(
        lambda e: SettingsError(f"cannot read git config {BRANCH_KEY}: {e}"))

    def judged(value: str | None) -> IOResult[str | None, SettingsError]:
        if value is None:
            return IOSuccess(None)
        name = value.removeprefix("refs/heads/")
        refused = refused_branch(name, f"this clone's record (git config {BRANCH_KEY})",
                                 _RECORD_FIX)
        if refused is not None:
            return IOFailure(refused)
        found: IOResult[str | None, SettingsError] = git.resolve(_ref(name)).map(
            lambda _: _named(name)).lash(
            lambda e: IOSuccess(None) if isinstance(e, NotFound)
            else IOFailure(SettingsError(f"cannot read {name}: {e}")))
        return found

    return read.bind(judged)


def record_branch(git: GitService, branch: str) -> IOResult[str, SettingsError]:
    """Record ``branch`` as this clone's store branch (``init``, ``clone``): from now on
    every door writes it, whatever a pulled commit names."""
    refused = refused_branch(branch, "the branch to record", _RECORD_FIX)
    if refused is not None:
        return IOFailure(refused)
    recorded: IOResult[None, SettingsError] = git.set_config(BRANCH_KEY, branch).alt(
        lambda e: SettingsError(f"cannot record the store's branch in git config "
                                f"{BRANCH_KEY}: {e}"))
    return recorded.map(lambda _: branch)


def _kept(git: GitService, branch: str) -> IOResult[str, SettingsError]:
    """Record a branch found by looking, so a later pull cannot move it; a repository
    whose config cannot be written (read-only, another user's) still reads, and is
    looked at again next time."""
    return record_branch(git, branch).lash(lambda _: IOSuccess(branch))


def store_branch(git: PygitService, configured: str, root: Path
                 ) -> IOResult[str, SettingsError]:
    """The branch of the store at ``root``, or ``NotAStore`` (``BranchRefused`` for a
    branch no door may write).

    A configured branch (flag, ``MEMHTML_BRANCH``, the user's config) names it for this
    process, and must be a store's. Otherwise this clone's record is the branch, as it
    is, whatever its tip's marker says now (``recorded_branch``). With no record (a
    plain ``git clone``, a clone from before records) the store is found by looking
    (``discover_branch``), and what was found is recorded."""
    if configured:
        name = configured.removeprefix("refs/heads/")
        refused = refused_branch(
            name, "the branch setting (--branch, MEMHTML_BRANCH or your config)",
            "Name the store's branch, or leave the setting out to use this clone's own")
        if refused is not None:
            return IOFailure(refused)
        return _mark_at(git, name).bind(
            lambda mark: IOSuccess(name) if mark is not None
            else IOFailure(not_a_store(root, (name,))))
    return recorded_branch(git).bind(
        lambda kept: IOSuccess(kept) if kept is not None
        else discover_branch(git, root).bind(lambda found: _kept(git, found)))


def discover_branch(git: PygitService, root: Path) -> IOResult[str, SettingsError]:
    """The store's branch as a clone with no record of its own finds it: the branch HEAD
    names, then ``main``, is tried, and the first whose tip carries the marker or the
    older layout is the store; the branch its marker records wins over the one it was
    read from when that branch is a store whose own marker names itself, or no branch
    (a checkout on a topic branch still writes to the store's branch, while a pulled
    marker pointing at another branch cut from the store, whose marker names the
    store's, does not lead there). A detached HEAD (mid-rebase), or HEAD on a sleep
    run's branch, is read only for the branch its marker records; a marker naming a
    branch no door may write names none."""
    head, _ = git.head_branch()
    usable_head = head if head is not None and store_branch_problem(head) is None else None
    candidates = tuple(dict.fromkeys((usable_head or "HEAD", DEFAULT_BRANCH)))

    def followed(branch: str, mark: StoreMark) -> IOResult[str, SettingsError]:
        named = mark.branch
        if named is None or named == branch:
            return IOSuccess(branch) if branch != "HEAD" else first(candidates[1:])
        return _mark_at(git, named).bind(
            lambda there: IOSuccess(named) if there is not None
            and there.branch in (named, None)
            else IOSuccess(branch) if branch != "HEAD" else first(candidates[1:]))

    def first(rest: tuple[str, ...]) -> IOResult[str, SettingsError]:
        if not rest:
            return IOFailure(not_a_store(root, tuple(c for c in candidates if c != "HEAD")))
        branch = rest[0]
        return _mark_at(git, branch).bind(
            lambda mark: first(rest[1:]) if mark is None else followed(branch, mark))

    return first(candidates)


def branch_without_store(git: PygitService, configured: str
                         ) -> IOResult[str, SettingsError]:
    """The branch of a repository opened with no store required (the demo, making one):
    the configured one, else this clone's record, else the one HEAD names, else
    ``main``; never one no door may write."""
    def chosen(kept: str | None) -> IOResult[str, SettingsError]:
        name = (configured.removeprefix("refs/heads/") or kept or git.head_branch()[0]
                or DEFAULT_BRANCH)
        refused = refused_branch(name, "the branch to open", "Name the store's branch")
        return IOFailure(refused) if refused is not None else IOSuccess(name)

    return (IOSuccess(None) if configured else recorded_branch(git)).bind(chosen)


def init_branch(git: PygitService, requested: str, is_bare: bool
                ) -> IOResult[str, SettingsError]:
    """The branch ``init`` makes the store on: ``requested`` (``--branch`` or a
    configured branch), else the one HEAD names.

    The checkout must end up on the store's branch, so that it gets the files. An
    unborn HEAD is pointed at the requested branch when nothing would have to be
    checked out for it (the branch is new, or the repository is bare); HEAD on
    another branch is refused with how to switch, since switching is git's job."""
    from memhtml.store.layout import is_branch_name, is_run_branch

    head, unborn = git.head_branch()
    chosen = requested.removeprefix("refs/heads/") or head
    if chosen is None:
        return IOFailure(InitRefused(
            "HEAD is detached: switch to the branch the store should live on "
            "(git switch NAME), or pass --branch NAME"))
    refused = refused_branch(
        chosen, "--branch" if requested else "HEAD",
        "Switch to the branch the store should live on, or pass --branch NAME"
    ) if is_run_branch(chosen) else None
    if refused is not None:
        return IOFailure(refused)
    if not is_branch_name(chosen):
        return IOFailure(InitRefused(
            f"{chosen!r} is not a branch name memhtml takes: letters, digits and "
            f"'._/-', not starting with a dot, slash or dash, no '..'"))
    if chosen == head:
        return IOSuccess(chosen)
    if not unborn:
        return IOFailure(_elsewhere(chosen, head, is_bare))

    def pointed(tip: str | None) -> IOResult[str, SettingsError]:
        if tip is not None and not is_bare:
            return IOFailure(_elsewhere(chosen, head, is_bare))
        moved: IOResult[None, SettingsError] = git.point_head(chosen).alt(
            lambda e: InitRefused(f"cannot point HEAD at {chosen}: {e}"))
        return moved.map(lambda _: chosen)

    resolved: IOResult[str | None, SettingsError] = git.resolve(_ref(chosen)).map(
        _some).lash(lambda _: IOSuccess(None))
    return resolved.bind(pointed)


def _some(sha: str) -> str | None:
    return sha


def _named(branch: str) -> str | None:
    return branch


def _elsewhere(chosen: str, head: str | None, is_bare: bool) -> InitRefused:
    if is_bare:
        switch = f"git symbolic-ref HEAD refs/heads/{chosen}"
    else:
        switch = f"git switch {chosen}, or git switch -c {chosen} for a new branch"
    on = "detached" if head is None else f"on {head}"
    instead = "" if head is None else f", or leave out --branch to make {head} the store's branch"
    return InitRefused(
        f"HEAD is {on}, not on {chosen}: a store lives on the branch HEAD names, so the "
        f"checkout gets its files. Switch first ({switch}) and run init again{instead}")
