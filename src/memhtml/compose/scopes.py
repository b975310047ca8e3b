"""Scopes: the other stores a store reads, each opened on its own settings.

``[scopes]`` in the user's config file names them (``compose.settings``: a local
setting, never a committed one). The store the command was pointed at is the scope
``own``. A scope is a whole store of its own: its own marker and branch record, its
own ``.memhtml/config.toml`` (its embedder, its vector settings), its own clone
state and git remotes. Nothing of one scope's settings reaches another, so a scope
that is a clone syncs with its own remotes, and the person's store is never pushed
through a team scope's remote.

Reads span the scopes; one that cannot be opened is reported and the others answer
(``open_scopes`` returns it as a ``BrokenScope``). Naming a scope is strict: a scope
not configured is refused, one that cannot be opened is refused with its path and the
fix, and a write to one not marked ``writable`` is refused (``ScopeRefused``), before
anything is read or written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from returns.io import IOFailure, IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.compose.settings import (
    USER_CONFIG_HINT,
    ScopeSetting,
    Settings,
    SettingsError,
    load_settings,
    user_scopes,
)
from memhtml.contracts.vocabulary import OWN_SCOPE

if TYPE_CHECKING:
    from memhtml.compose.services import Services
    from memhtml.contracts.services import Clock


@dataclass(frozen=True, slots=True)
class ScopeRefused(SettingsError):  # noqa: N818 - an error value, never raised
    """A scope named for a command that it cannot serve: not configured, or not
    writable for a write. Nothing was read or written."""


@dataclass(frozen=True, slots=True)
class ScopeUnusable(SettingsError):  # noqa: N818 - an error value, never raised
    """A configured scope whose path is not a memhtml store (missing, not a git
    repository, no marker) or whose settings cannot be read; ``reason`` names the
    scope, the path and what to do."""


@dataclass(frozen=True)
class Scope:
    """One opened scope: its name, its own services, whether writes may go to it."""

    name: str
    services: Services
    writable: bool


@dataclass(frozen=True, slots=True)
class BrokenScope:
    """A configured scope a read could not open, and why (one line with the fix)."""

    name: str
    path: str
    reason: str


def configured_scopes(env: Mapping[str, str]) -> tuple[ScopeSetting, ...]:
    """The user's scopes; none when the file cannot be read (``load_settings`` has
    refused such a file before any scope is asked for)."""
    return user_scopes(env).value_or(())


def _setting(env: Mapping[str, str], name: str) -> ScopeSetting | ScopeRefused:
    configured = {scope.name: scope for scope in configured_scopes(env)}
    if name in configured:
        return configured[name]
    known = ", ".join([OWN_SCOPE, *configured])
    return ScopeRefused(f"no scope {name!r}: the scopes are {known} ([scopes] in "
                        f"{USER_CONFIG_HINT} names the others)")


def is_own(own: Settings, scope: ScopeSetting) -> bool:
    """Whether ``scope`` is the store the command was pointed at (the team store
    opened with ``--store``, say): then it is read once, as ``own``."""
    try:
        return scope.path.resolve() == own.store.resolve()
    except OSError:
        return False


def _unusable(scope: ScopeSetting, why: str) -> ScopeUnusable:
    return ScopeUnusable(
        f"scope {scope.name} ({scope.path}) cannot be used: {why}; make it a store "
        f"(`memhtml init {scope.path}` or `memhtml clone URL {scope.path}`) or remove "
        f"{scope.name} from [scopes] in {USER_CONFIG_HINT}")


def open_scope_setting(scope: ScopeSetting, env: Mapping[str, str], *,
                       clock: Clock | None = None) -> IOResult[Services, ScopeUnusable]:
    """The services of ``scope``'s store, on its own settings: the user's file, its
    own committed config and the ``MEMHTML_*`` variables, but the branch this clone of
    it recorded (a ``MEMHTML_BRANCH`` or ``--branch`` names the own store's), and no
    scopes of its own (a scope's scopes are not followed)."""
    from memhtml.compose.services import open_services

    root = scope.path
    try:
        missing = None if root.is_dir() else (
            "no such directory" if not root.exists() else "not a directory")
        resolved = root.resolve()
    except OSError as exc:  # a folder on the way that cannot be read
        return IOFailure(_unusable(scope, f"cannot read it: {exc.strerror or exc}"))
    if missing is not None:
        return IOFailure(_unusable(scope, missing))
    loaded = load_settings(resolved, env)
    if not is_successful(loaded):
        return IOFailure(_unusable(scope, loaded.failure().reason))
    settings = replace(loaded.unwrap().settings, branch="")
    opened: IOResult[Services, ScopeUnusable] = open_services(
        settings, clock=clock, env=env).alt(lambda error: _unusable(scope, error.reason))
    return opened


def scope_warnings(services: Services, env: Mapping[str, str]) -> tuple[str, ...]:
    """What an opened scope's own config file tried to set and may not (a local key,
    an unknown one), for the edge to show as it shows the own store's."""
    return load_settings(services.settings.store, env).map(
        lambda loaded: loaded.warnings).value_or(())


def open_scope(own: Settings, name: str, env: Mapping[str, str], *, writes: bool,
               clock: Clock | None = None) -> IOResult[Services, ScopeRefused | ScopeUnusable]:
    """The services of the scope ``name`` (not ``own``: the caller has those), refused
    when it is not configured, or when ``writes`` and it is not writable."""
    found = _setting(env, name)
    if isinstance(found, ScopeRefused):
        return IOFailure(found)
    if is_own(own, found):
        # The store the command was pointed at, named by its scope: opened as itself.
        from memhtml.compose.services import open_services

        itself: IOResult[Services, ScopeRefused | ScopeUnusable] = open_services(
            own, clock=clock, env=env).alt(lambda error: _unusable(found, error.reason))
        return itself
    if writes and not found.writable:
        return IOFailure(ScopeRefused(
            f"scope {name} is read only: writes go to this store unless a writable scope "
            f"is named; mark it writable with [scopes.{name}] path = \"{found.path}\" and "
            f"writable = true in {USER_CONFIG_HINT}"))
    opened: IOResult[Services, ScopeRefused | ScopeUnusable] = open_scope_setting(
        found, env, clock=clock)
    return opened


def open_scopes(own: Settings, env: Mapping[str, str], *, clock: Clock | None = None
                ) -> tuple[list[Scope], list[BrokenScope]]:
    """Every configured scope but the own store, opened, sorted by name, and those
    that could not be."""
    opened: list[Scope] = []
    broken: list[BrokenScope] = []
    for scope in configured_scopes(env):
        if is_own(own, scope):
            continue
        services = open_scope_setting(scope, env, clock=clock)
        if is_successful(services):
            opened.append(Scope(scope.name, unsafe_perform_io(services.unwrap()),
                                scope.writable))
        else:
            broken.append(BrokenScope(scope.name, str(scope.path),
                                      unsafe_perform_io(services.failure()).reason))
    return opened, broken


__all__ = ["OWN_SCOPE", "BrokenScope", "Scope", "ScopeRefused", "ScopeUnusable",
           "configured_scopes", "is_own", "open_scope", "open_scope_setting", "open_scopes",
           "scope_warnings"]
