"""``memhtml clone``: a store cloned from a remote, on the branch that holds it.

A clone follows the remote's HEAD, as ``git clone`` does, when the branch HEAD names
holds the store. A remote made with ``git init --bare`` has a HEAD naming ``master``
(or the person's ``init.defaultBranch``) and, once a store is pushed there, only
``main``: HEAD names a branch the remote lacks, ``git clone`` checks nothing out, and
following HEAD finds nothing. git cannot set a remote's HEAD by pushing, so a remote
reached over the network keeps such a HEAD whatever ``memhtml sync`` does. So when
HEAD leads to no store, the clone looks at every branch the remote has, and takes the
one that carries the marker by a rule that reads the same on every machine
(``choose_branch``), saying which and why. Where the rule cannot choose, nothing is
guessed: the clone is refused with the branches named and how to pick one.

A clone refused after ``git clone`` ran is taken away again (the directory removed,
or emptied when it was given empty), as git does with a clone that fails, so the same
command with ``--branch`` can run next.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from returns.io import IOFailure, IOResult, IOSuccess
from returns.result import Failure, Result, Success

from memhtml.compose.settings import SettingsError
from memhtml.compose.stores import (
    DEFAULT_BRANCH,
    BranchRefused,
    NotAStore,
    record_branch,
    refused_branch,
)
from memhtml.contracts.credentials import redact_credentials
from memhtml.store.layout import MARKER, StoreMark, is_branch_name, is_store_branch

if TYPE_CHECKING:
    from memhtml.adapters.git import PygitService

Rule = Literal["option", "head", "marker", "main", "only"]
"""Why a clone took its branch: ``--branch`` named it; the remote's HEAD names it;
the stores' markers name it; several stores and one of them is ``main``; the one
branch that carries a store."""

_SHOWN_BRANCHES = 20
"""How many of a remote's branches a message names before saying how many more."""


@dataclass(frozen=True, slots=True)
class SeveralStores(SettingsError):  # noqa: N818 - an error value, never raised
    """The remote's HEAD leads to no store and several of its branches carry one, none
    of them preferred (by the markers, or by being ``main``); ``reason`` names them
    and how to pick one (``--branch``). Nothing is left of the clone."""


@dataclass(frozen=True, slots=True)
class ClonedBranch:
    """The branch a clone took, the rule that chose it, and the reason in words."""

    branch: str
    rule: Rule
    reason: str


def choose_branch(url: str, head: str | None, marks: Mapping[str, StoreMark | None],
                  directory: str = "DIR") -> Result[ClonedBranch, SettingsError]:
    """The store's branch on the remote ``url``, from ``head`` (the branch its HEAD
    names; None: none) and what each of its branches' tips says (``marks``).

    The branch HEAD names, when it holds a store, as ``git clone`` would (or the
    branch its marker names, when that is a store whose own marker names itself or
    nothing, as every first opening follows it). Otherwise, among the branches that
    carry a store: the one their markers name; else ``main``; else the only one.
    Several and none preferred is ``SeveralStores``, which says how to pick one for
    the clone into ``directory``; none is ``NotAStore``.

    >>> from memhtml.store.layout import StoreMark
    >>> url = "file:///srv/memory.git"
    >>> print(choose_branch(url, "master", {"main": StoreMark("marker", "main")})
    ...       .unwrap().reason)
    the remote's HEAD names master, a branch it does not have; main is the branch the
    store's marker names
    >>> two = {"alpha": StoreMark("marker", "alpha"), "beta": StoreMark("marker", "beta")}
    >>> print(choose_branch(url, "master", two, "copy").failure().reason)
    file:///srv/memory.git: the remote's HEAD names master, a branch it does not have,
    and 2 of its branches carry a store (alpha, beta), none preferred (by a marker
    naming it, or by being main). Pick one with --branch: memhtml clone
    file:///srv/memory.git copy --branch alpha
    """
    stores = {name: mark for name, mark in marks.items()
              if mark is not None and is_store_branch(name)}

    def named_by(mark: StoreMark) -> str | None:
        there = stores.get(mark.branch) if mark.branch is not None else None
        return mark.branch if there is not None and there.branch in (mark.branch, None) else None

    if head is not None and head in stores:
        followed = named_by(stores[head])
        if followed is not None and followed != head:
            return Success(ClonedBranch(followed, "marker", (
                f"the remote's HEAD names {head}, whose marker names {followed}, a store "
                f"whose own marker names itself")))
        return Success(ClonedBranch(head, "head", "the branch the remote's HEAD names"))
    if head is None:
        not_head = "the remote's HEAD names no branch"
    elif head in marks:
        not_head = f"the remote's HEAD names {_shown(head)}, which holds no store"
    else:
        not_head = f"the remote's HEAD names {_shown(head)}, a branch it does not have"
    named = sorted({found for mark in stores.values() if (found := named_by(mark))})
    choices = named or sorted(stores)

    def took(branch: str, rule: Rule, why: str) -> Result[ClonedBranch, SettingsError]:
        return Success(ClonedBranch(branch, rule, f"{not_head}; {branch} is {why}"))

    if len(named) == 1:
        return took(named[0], "marker", "the branch the store's marker names")
    if DEFAULT_BRANCH in choices:
        return took(DEFAULT_BRANCH, "main", (
            f"taken among the {len(choices)} branches carrying a store ({_listed(choices)})"))
    if len(choices) == 1:
        return took(choices[0], "only", "the only branch carrying a store")
    if choices:
        return Failure(SeveralStores(
            f"{url}: {not_head}, and {len(choices)} of its branches carry a store "
            f"({_listed(choices)}), none preferred (by a marker naming it, or by being "
            f"{DEFAULT_BRANCH}). Pick one with --branch: memhtml clone {url} {directory} "
            f"--branch {choices[0]}"))
    return Failure(_no_store(url, marks, not_head))


def _no_store(url: str, marks: Mapping[str, StoreMark | None], why: str,
             branch: str | None = None) -> NotAStore:
    """``NotAStore`` for the remote ``url``: nothing on ``branch`` (None: on no branch)
    carries a store. ``why`` says where the clone looked; the branches that do carry
    one are named, or all of them when none does."""
    if not marks:
        return NotAStore(f"{url} holds no memhtml store: it has no branch at all. "
                         f"{_MAKE_ONE}")
    stores = sorted(name for name, mark in marks.items()
                    if mark is not None and is_store_branch(name))
    if branch is not None and stores:
        return NotAStore(
            f"{url} holds no memhtml store on {_shown(branch)} ({why}): {MARKER} is not "
            f"at its tip. The branches carrying one: {_listed(stores)}; pick one with "
            f"--branch")
    where = f"on {_shown(branch)}" if branch is not None else "on any of its branches"
    return NotAStore(
        f"{url} holds no memhtml store: no {MARKER} {where} ({why}; its branches: "
        f"{_listed(sorted(marks))}). {_MAKE_ONE}")


_MAKE_ONE = ("To make one: git clone it, run memhtml init in the clone and memhtml sync; "
             "or clone the URL of the store you meant")


def _shown(name: str) -> str:
    """A branch name from the remote as a message may print it: quoted unless plain."""
    return name if is_branch_name(name) else repr(name)


def _listed(names: list[str]) -> str:
    shown = ", ".join(_shown(name) for name in names[:_SHOWN_BRANCHES])
    more = len(names) - _SHOWN_BRANCHES
    return shown + (f" and {more} more" if more > 0 else "")


def clone_store(url: str, target: Path, branch: str | None = None,
                on_progress: Callable[[str], None] | None = None
                ) -> IOResult[ClonedBranch, SettingsError]:
    """Clone the store at ``url`` into ``target`` (a new or empty directory), on
    ``branch`` or the one ``choose_branch`` takes, checked out, and recorded as the
    clone's own. Opening it afterwards (``open_services``) makes the clone ready like
    any other: the merge driver for generated pages set where no level of git config
    defines it, and the local state directory made. A ``branch`` no door may write is
    refused before anything is cloned; a remote with no store on that branch (or, with
    none named, one the rule cannot choose) is refused after, and the clone removed."""
    from memhtml.adapters.git_remote import clone_repository, discard_clone
    from memhtml.compose.run import explain

    refused: BranchRefused | None = refused_branch(
        branch, "--branch", "Name the store's branch, or leave --branch out to take the "
        "remote's default") if branch else None
    if refused is not None:
        return IOFailure(refused)
    made = not target.exists()

    # The URL is named in messages only from here on: never with its credentials.
    shown = redact_credentials(url)

    def taken(_: None) -> IOResult[ClonedBranch, SettingsError]:
        chosen = _opened(target).bind(
            lambda git: _take(git, shown, target, branch, on_progress))

        def undone(error: SettingsError) -> IOResult[ClonedBranch, SettingsError]:
            discard_clone(target, made)
            return IOFailure(error)

        return chosen.lash(undone)

    cloned: IOResult[None, SettingsError] = clone_repository(
        url, target, branch, on_progress=on_progress).alt(
        lambda error: SettingsError(f"git clone failed: {explain(error)}"))
    return cloned.bind(taken)


def _opened(target: Path) -> IOResult[PygitService, SettingsError]:
    from memhtml.adapters.git import PygitService

    opened: IOResult[PygitService, SettingsError] = PygitService.open(target / ".git").alt(
        lambda error: SettingsError(f"no git repository at {target}: {error.reason}"))
    return opened


def _take(git: PygitService, url: str, target: Path, branch: str | None,
          on_progress: Callable[[str], None] | None) -> IOResult[ClonedBranch, SettingsError]:
    """Choose the clone's branch from the branches ``git clone`` fetched, check it out
    when the clone is not on it already, and record it."""
    from memhtml.adapters.git_remote import GitRemotes, check_out_tracked
    from memhtml.compose.run import explain

    remotes = GitRemotes(git.path)
    head, unborn = git.head_branch()

    def checked_out(remote: str, took: ClonedBranch) -> IOResult[ClonedBranch, SettingsError]:
        if took.branch == head and not unborn:
            return IOSuccess(took)
        switched: IOResult[None, SettingsError] = check_out_tracked(
            target, remote, took.branch, on_progress=on_progress).alt(
            lambda error: SettingsError(f"cannot check out {took.branch}: {explain(error)}"))
        return switched.map(lambda _: took)

    def on(remote: str) -> IOResult[ClonedBranch, SettingsError]:
        tips: IOResult[Mapping[str, str], SettingsError] = remotes.tracked_branches(
            remote).alt(lambda error: SettingsError(explain(error)))
        return tips.bind(lambda found: _chosen(git, url, target, head, branch, found)).bind(
            lambda took: checked_out(remote, took)).bind(
            lambda took: record_branch(git, took.branch).map(lambda _: took))

    # git clone names its one remote: ``origin``, or the person's clone.defaultRemoteName.
    named: IOResult[tuple[str, ...], SettingsError] = remotes.remotes().alt(
        lambda error: SettingsError(explain(error)))
    return named.bind(lambda names: on(names[0]) if len(names) == 1 else IOFailure(
        SettingsError(f"the clone at {target} has {len(names)} remotes, not the one git "
                      f"clone makes")))


def _chosen(git: PygitService, url: str, target: Path, head: str | None, branch: str | None,
            tips: Mapping[str, str]) -> IOResult[ClonedBranch, SettingsError]:
    """The branch ``--branch`` names, when it holds a store; else ``choose_branch``'s
    answer from the remote's branches (``tips``: each one's commit)."""
    if not branch:
        return _marks_for_rule(git, tips, head).bind(lambda marks: IOResult.from_result(
            choose_branch(url, head, marks, str(target))))

    def named(marks: Mapping[str, StoreMark | None]) -> IOResult[ClonedBranch, SettingsError]:
        if marks.get(branch) is not None:
            return IOSuccess(ClonedBranch(branch, "option", "named by --branch"))
        return _marks(git, tips).bind(lambda every: IOFailure(
            _no_store(url, every, "named by --branch", branch)))

    return _marks(git, _only(tips, branch)).bind(named)


def _marks_for_rule(git: PygitService, tips: Mapping[str, str], head: str | None
                    ) -> IOResult[Mapping[str, StoreMark | None], SettingsError]:
    """What ``choose_branch`` needs to read: when HEAD's branch holds a store, that
    branch's mark and that of the branch its marker names (the rule stops there);
    otherwise every branch's. A remote may have many branches, and the common clone
    should not read them all."""
    def judged(marks: Mapping[str, StoreMark | None]
               ) -> IOResult[Mapping[str, StoreMark | None], SettingsError]:
        at_head = marks.get(head) if head is not None else None
        if at_head is None:
            return _marks(git, tips)
        if at_head.branch in (None, head):
            return IOSuccess(marks)
        return _marks(git, _only(tips, at_head.branch)).map(
            lambda there: {**marks, **there})

    return _marks(git, _only(tips, head) if head is not None else {}).bind(judged)


def _only(tips: Mapping[str, str], branch: str) -> Mapping[str, str]:
    return {branch: tips[branch]} if branch in tips else {}


def _marks(git: PygitService, tips: Mapping[str, str]
           ) -> IOResult[Mapping[str, StoreMark | None], SettingsError]:
    """What each branch's tip says about being a store; a tip that cannot be read (not
    a commit, a tree git cannot walk) holds none."""
    from memhtml.store.layout import store_mark

    def then(done: IOResult[tuple[tuple[str, StoreMark | None], ...], SettingsError],
             item: tuple[str, str]
             ) -> IOResult[tuple[tuple[str, StoreMark | None], ...], SettingsError]:
        name, sha = item
        mark: IOResult[StoreMark | None, SettingsError] = store_mark(git, sha).lash(
            lambda _: IOSuccess(None))
        return done.bind(lambda so_far: mark.map(lambda found: (*so_far, (name, found))))

    start: IOResult[tuple[tuple[str, StoreMark | None], ...], SettingsError] = IOSuccess(())
    return reduce(then, tips.items(), start).map(dict)
