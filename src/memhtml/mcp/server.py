"""The MCP server: memhtml's store as an agent's memory, over stdio.

``build_server`` wires the composition root's ``Services`` into an ``MCPServer``
with its tools; ``serve`` runs that server on stdin/stdout until the client
hangs up. ``memhtml mcp`` (the CLI) opens the services, so the server searches with
the same embedder and vector cache as ``memhtml search``. The server keeps one
``Store`` (and so one parsed head) for its whole life and advances it to the branch
tip before every call, so a commit made by the CLI or by a person with git is seen
by the next call, at the cost of the paths that changed.

Curation (``sleep``) is deliberately not a tool. It rewrites the corpus (merges,
decay, archiving) and lands its work on a branch that a person is meant to read and
merge; an agent calling it mid-conversation would rewrite its own memory with nobody
looking. Run it from the CLI.
"""

from __future__ import annotations

import sys
import threading
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from mcp.server.mcpserver import MCPServer

from memhtml.compose import Services, sync_policy
from memhtml.mcp.gate import StoreGate
from memhtml.mcp.syncing import ServerSync
from memhtml.mcp.tools import tools_for

SERVER_NAME = "memhtml"
INSTRUCTIONS = (
    "Long-term memory in a git repository, one fact per file. Search before answering "
    "from memory and before writing; read a hit at the smallest tier that answers. Write "
    "one self-contained fact per memory_write; when a stored fact is wrong or out of "
    "date, use memory_correct rather than writing a conflicting one. Hits with valid "
    "false have passed their valid_until. Every write is one commit."
)


def _version() -> str:
    try:
        return version("memhtml")
    except PackageNotFoundError:
        return "0"


def _server(gate: StoreGate) -> MCPServer[Any]:
    return MCPServer(
        name=SERVER_NAME, title="memhtml memory", instructions=INSTRUCTIONS,
        version=_version(), log_level="WARNING", tools=tools_for(gate),
    )


def _gate(services: Services) -> StoreGate:
    """The gate, sharing the store through ``sync_remote`` when that is set (a bad
    ``sync_seconds`` is refused before the server starts, by ``memhtml mcp``)."""
    policy = sync_policy(services.settings).value_or(None)
    if policy is None:
        return StoreGate(services)
    remote, seconds = policy
    return StoreGate(services, ServerSync(services, remote, seconds))


def build_server(services: Services) -> MCPServer[Any]:
    """An MCP server over the store ``services`` open, every tool registered, not yet
    running."""
    return _server(_gate(services))


def serve(services: Services) -> None:
    """Serve the store ``services`` open over stdio until the client disconnects; a
    write still waiting to be pushed is pushed then."""
    gate = _gate(services)
    server = _server(gate)
    # Parse the head beside the handshake rather than before it: a large store takes
    # a second or two to load cold, and a client waits on initialize with a timeout.
    # Tool calls queue on the gate's lock until the head is warm.
    threading.Thread(target=gate.warm, name="memhtml-warm", daemon=True).start()
    settings = services.settings
    shared = f", syncing through {settings.sync_remote}" if settings.sync_remote else ""
    print(f"memhtml mcp: serving {settings.store} ({settings.branch}){shared}",
          file=sys.stderr)
    try:
        server.run("stdio")
    finally:
        gate.close()
