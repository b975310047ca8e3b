"""What every command shares: the ``--store`` and ``--json`` options, and opening a store.

The options are one flattened dataclass, so each command lists them in its help
without repeating their declarations. Opening a store goes through the composition
root (``memhtml.compose``), which is where flags, ``MEMHTML_*`` variables, the
store's ``.memhtml/config.toml`` and the user's ``~/.config/memhtml/config.toml`` meet
and where every service is picked; nothing here picks an adapter of its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from cyclopts import Parameter

from memhtml.cli.output import CliError, print_err, unwrap_io

if TYPE_CHECKING:
    from memhtml.cli.output import Reply
    from memhtml.compose import Services, Settings
    from memhtml.compose.scoped import Answering
    from memhtml.compose.scopes import BrokenScope
    from memhtml.store import Landed, Store


@Parameter(name="*")
@dataclass(frozen=True)
class Common:
    """Options every command takes."""

    store: str | None = None
    """The store directory. Default: $MEMHTML_STORE, else the git repository around
    the current directory."""
    json: bool = False
    """Print machine-readable JSON on stdout instead of text."""
    scope: str | None = None
    """A scope ([scopes] in ~/.config/memhtml/config.toml; own is this store): search,
    recall and brief read only it, every other command acts on its store instead of
    this one. Writes need a scope marked writable. Default: search, recall and brief
    span every scope; everything else acts on this store."""


def no_scope(common: Common) -> None:
    """Refuse ``--scope`` for a command that opens no store (or makes one): it would
    be ignored, and a person who named a scope meant something by it."""
    if common.scope is not None:
        from memhtml.cli.output import UsageError

        raise UsageError("this command reads or makes no store of [scopes]; leave out "
                         "--scope")


NO_STORE = ("no store found: pass --store DIR, set MEMHTML_STORE, or run inside a store's "
            "checkout (`memhtml init DIR` makes one)")


def store_root(common: Common) -> Path:
    """The store directory the options name, or a failure saying how to name one."""
    from memhtml.compose import discover_store

    root = discover_store(common.store, os.environ, Path.cwd())
    if root is None:
        raise CliError(NO_STORE, code="ERR_NO_STORE")
    return root


def settings_for(common: Common, overrides: dict[str, str] | None = None) -> Settings:
    """Settings of the store the options name: flags over environment over the store's
    config over the user's. What the store's own config tried to set and may not
    (a local setting, an unknown key) is printed once to stderr, in ``--json`` mode
    too: stdout is the answer, and an MCP client's protocol."""
    from returns.io import IOResult

    from memhtml.compose import load_settings

    loaded = unwrap_io(IOResult.from_result(
        load_settings(store_root(common), os.environ, overrides or {})),
        lambda error: error.reason)
    for warning in dict.fromkeys(loaded.warnings):
        print_err(f"warning: {warning}")
    return loaded.settings


T = TypeVar("T")

@dataclass
class _Holding:
    """What the console command keeps referenced until the process ends (see
    ``hold_until_exit``); ``values`` is None in any other caller, which frees as usual."""

    values: list[object] | None = None


_holding = _Holding()


def hold_until_exit() -> None:
    """Keep every store this process opens referenced until it exits.

    Only for the console command, which then ends with ``os._exit``: a store holds the
    version it loaded (at 100,000 memories, 100,000 records and their maps), and
    freeing it object by object when a command's body returns cost 0.4 s of a cold
    command for memory the process's end returns anyway.
    """
    if _holding.values is None:
        _holding.values = []


def _held(value: T) -> T:
    if _holding.values is not None:
        _holding.values.append(value)
    return value


def open_cli_services(common: Common, *, embedder: str | None = None,
                      overrides: dict[str, str] | None = None, writes: bool = True
                      ) -> Services:
    """The composition root's services for the store the options name, or for the
    scope ``--scope`` names (refused when it is not configured, cannot be opened, or,
    when the command ``writes``, is not writable); a directory that is not a
    repository, or a setting that cannot be honoured, is a failure."""
    from memhtml.compose import open_services
    from memhtml.compose.scopes import open_scope
    from memhtml.contracts.vocabulary import OWN_SCOPE

    settings = settings_for(common, overrides)
    if common.scope is not None and common.scope != OWN_SCOPE:
        services = unwrap_io(open_scope(settings, common.scope, os.environ, writes=writes),
                             lambda error: error.reason)
        _scope_warnings(common.scope, services)
    else:
        services = unwrap_io(open_services(settings, embedder=embedder),
                             lambda error: error.reason)
    finish_interrupted_writes(services)
    return _held(services)


def open_cli_init(common: Common, root: Path, branch: str = "") -> Services:
    """The services ``init`` makes the store at ``root`` with, on ``branch`` (else the
    configured branch, else HEAD's); see ``memhtml.compose.open_for_init``."""
    from dataclasses import replace

    from memhtml.compose.services import open_for_init

    settings = replace(settings_for(common), store=root)
    services = unwrap_io(open_for_init(settings, branch), lambda error: error.reason)
    finish_interrupted_writes(services)
    return services


def finish_interrupted_writes(services: Services) -> None:
    """Before anything else: finish writes an earlier process left half done (killed
    after its commit landed, or kept from the index by git's lock), and write back a
    write that a person's commit made from a stale index undid, so nothing landed is
    lost to a plain ``git commit``; a person's own undo of one is kept, and said."""
    from returns.io import IOSuccess

    from memhtml.cli.output import print_err
    from memhtml.store import Recovered, finish_checkout

    finished = finish_checkout(services.store_deps()).map(
        lambda done: (done, "")).lash(lambda error: IOSuccess((Recovered(), describe_error(
            error))))
    done, problem = unwrap_io(finished, str)
    if done.synced:
        print_err(f"note: brought the checkout up to date for {len(done.synced)} path(s) an "
                  f"earlier write left behind: {', '.join(done.synced)}")
    if done.restored:
        print_err(f"note: wrote back {len(done.restored)} path(s) that commit "
                  f"{', '.join(sha[:10] for sha in done.reverted_by)} (made from a stale git "
                  f"index) had undone: {', '.join(done.restored)}")
    if done.kept:
        commits = ", ".join(sha[:10] for sha in dict.fromkeys(done.kept_by))
        print_err(f"note: kept {len(done.kept)} path(s) that your commit {commits} put back "
                  f"as they were before a memhtml write: {', '.join(done.kept)} (git revert "
                  f"{commits} brings the write back)")
    if problem:
        print_err(f"note: could not check the checkout for interrupted writes: {problem}")


def describe_error(error: object) -> str:
    from memhtml.compose import explain

    return explain(error)


def open_common(common: Common, *, writes: bool = True) -> tuple[Services, Store]:
    """Services and a store over them in one step, for the commands that need both;
    ``writes=False`` for a command that only reads (any scope may be named then)."""
    services = open_cli_services(common, writes=writes)
    return services, _held(services.store())


def _scope_warnings(name: str, services: Services) -> None:
    """A scope's own config warnings, once each, named by the scope."""
    from memhtml.compose.scopes import scope_warnings

    for warning in dict.fromkeys(scope_warnings(services, os.environ)):
        print_err(f"warning: scope {name}: {warning}")


def open_spanning(common: Common, *, alone: bool = False
                  ) -> tuple[list[Answering], list[BrokenScope]]:
    """The scopes a spanning read (search, recall, brief) asks, in order: the own
    store, then every configured scope by name; only the one ``--scope`` names when
    given (refused when it cannot be opened), or the own store ``alone``. The scopes
    that could not be opened come second, for the read to name."""
    from memhtml.compose import open_services
    from memhtml.compose.scoped import Answering
    from memhtml.compose.scopes import open_scope, open_scopes
    from memhtml.contracts.vocabulary import OWN_SCOPE

    settings = settings_for(common)
    named = common.scope
    if named is not None and named != OWN_SCOPE:
        services = unwrap_io(open_scope(settings, named, os.environ, writes=False),
                             lambda error: error.reason)
        _scope_warnings(named, services)
        finish_interrupted_writes(services)
        return [Answering(named, _held(services), _held(services.store()))], []
    own = unwrap_io(open_services(settings), lambda error: error.reason)
    finish_interrupted_writes(own)
    answering = [Answering(OWN_SCOPE, _held(own), _held(own.store()))]
    if named == OWN_SCOPE or alone:
        return answering, []
    others, broken = open_scopes(own.settings, os.environ)
    for scope in others:
        _scope_warnings(scope.name, scope.services)
        finish_interrupted_writes(scope.services)
        answering.append(Answering(scope.name, _held(scope.services),
                                   _held(scope.services.store())))
    return answering, broken


def with_vectors(services: Services, store: Store, landed: Landed, reply: Reply) -> Reply:
    """``reply`` after the memories ``landed`` wrote were embedded into the vector
    cache (``Services.top_up``), so search stays hybrid with no separate step; a note
    says what could not be embedded. Nothing happens with no embedder configured."""
    from dataclasses import replace

    from memhtml.compose.run import perform

    if not landed.paths:
        return reply
    topped = perform(store.head().bind(lambda version: services.top_up(version, landed.paths)))
    note = topped.map(lambda top: top.note).value_or(None)
    return replace(reply, notes=(*reply.notes, f"note: {note}")) if note else reply
