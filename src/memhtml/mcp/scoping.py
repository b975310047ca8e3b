"""The server's scopes: a gate for each store ``[scopes]`` names, beside the own one.

Each scope is opened once when the server starts, with its own services, behind a
gate of its own (its own store thread and lock; no sync: ``sync_remote`` is the own
store's, and a scope syncs with ``memhtml sync --scope NAME``). A scope that cannot
be opened is kept with its reason: a search names it and answers from the others, and
a call naming it is refused with that reason.

The ``scope`` argument is published only when scopes are configured: every byte of
``tools/list`` sits in a model's context on every turn, and a server with no scope has
nothing to choose. Unpublished, a call naming it is refused as any unknown argument.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated

from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult
from pydantic import Field

from memhtml.compose import error_code
from memhtml.compose.scopes import BrokenScope, ScopeRefused, open_scopes
from memhtml.contracts.vocabulary import OWN_SCOPE
from memhtml.mcp.arguments import tool_error
from memhtml.mcp.gate import StoreGate

SCOPE_MAX = 64

ScopeArg = Annotated[str | None, Field(max_length=SCOPE_MAX, description=(
    "A scope (own: this store); reads span all, writes go to own."))]


@dataclass
class ScopeGates:
    """The own gate, a gate for each scope opened, the scopes that could not be, and
    which scopes take writes."""

    own: StoreGate
    others: dict[str, StoreGate] = field(default_factory=dict)
    writable: frozenset[str] = frozenset()
    broken: tuple[BrokenScope, ...] = ()

    @classmethod
    def open(cls, own: StoreGate, env: Mapping[str, str] | None = None) -> ScopeGates:
        """Every scope of the user's config, opened beside ``own``."""
        opened, broken = open_scopes(own.services.settings,
                                     os.environ if env is None else env)
        return cls(own, {scope.name: StoreGate(scope.services) for scope in opened},
                   frozenset(scope.name for scope in opened if scope.writable),
                   tuple(broken))

    @property
    def configured(self) -> bool:
        return bool(self.others or self.broken)

    def gate(self, scope: str | None, *, writes: bool) -> StoreGate | CallToolResult:
        """The gate of ``scope`` (None or ``own``: the own store), or the tool error
        refusing it: not configured, not opened, or read only for a write."""
        if scope is None or scope == OWN_SCOPE:
            return self.own
        found = self.others.get(scope)
        if found is None:
            stuck = next((b for b in self.broken if b.name == scope), None)
            if stuck is not None:
                return tool_error("ERR_SCOPE_UNUSABLE", stuck.reason)
            known = ", ".join([OWN_SCOPE, *sorted(self.others)])
            return _refused(f"no scope {scope!r}: the scopes are {known}")
        if writes and scope not in self.writable:
            return _refused(f"scope {scope} is read only: writes go to this store unless "
                            f"a writable scope is named")
        return found

    def spanning(self, scope: str | None) -> list[tuple[str, StoreGate]] | CallToolResult:
        """The gates a spanning read asks, own first then by name; only the one named."""
        if scope is not None:
            chosen = self.gate(scope, writes=False)
            return chosen if isinstance(chosen, CallToolResult) else [(scope, chosen)]
        return [(OWN_SCOPE, self.own), *sorted(self.others.items())]

    def note(self) -> str | None:
        """What this thread's last call had to tell, from whichever gate ran it (a
        write to a scope's vectors, the own store's sync), once."""
        told = [text for text in (self.own.note(), *(g.note() for g in self.others.values()))
                if text]
        return "\n".join(told) or None

    def close(self) -> None:
        for gate in self.others.values():
            gate.close()


def _refused(reason: str) -> CallToolResult:
    error = ScopeRefused(reason)
    return tool_error(error_code(error), error.reason)


def published(tool: Tool, gates: ScopeGates) -> Tool:
    """``tool`` with its ``scope`` argument left out of the published schema when no
    scope is configured (the strict argument check then refuses it by name)."""
    properties = tool.parameters.get("properties", {})
    if gates.configured or "scope" not in properties:
        return tool
    tool.parameters = {**tool.parameters,
                       "properties": {k: v for k, v in properties.items() if k != "scope"}}
    return tool


__all__ = ["ScopeArg", "ScopeGates", "published"]
