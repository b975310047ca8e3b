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

import gc
import sys
import threading
from importlib.metadata import PackageNotFoundError, version
from typing import Any, cast

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, InputRequiredResult

from memhtml.compose import Services, error_code, explain, sync_policy
from memhtml.mcp.arguments import UnknownTool, tool_error
from memhtml.mcp.gate import StoreGate
from memhtml.mcp.scoping import ScopeGates
from memhtml.mcp.syncing import ServerSync
from memhtml.mcp.tools import tools_for
from memhtml.mcp.transport import CheckedLines, claimed_stdin, text_lines
from memhtml.mcp.warm import WarmAnswers

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


class MemoryServer(MCPServer[Any]):
    """The SDK's server with two answers it leaves out: a call to a tool that does not
    exist is a tool error with its code (``ERR_UNKNOWN_TOOL``), like every other
    refusal, and a stdin line that is not a message gets its JSON-RPC error
    (``memhtml.mcp.transport``) rather than silence."""

    def __init__(self, tools: list[Tool]) -> None:
        super().__init__(name=SERVER_NAME, title="memhtml memory", instructions=INSTRUCTIONS,
                         version=_version(), log_level="WARNING", tools=tools)
        self._tool_names = tuple(tool.name for tool in tools)

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None
                        ) -> CallToolResult | InputRequiredResult:
        if name not in self._tool_names:
            wrong = UnknownTool(name, self._tool_names)
            return tool_error(error_code(wrong), explain(wrong))
        return await super().call_tool(name, arguments, context)

    async def run_stdio_async(self) -> None:
        """Serve on stdin and stdout as the SDK does, through ``CheckedLines``. The
        low-level server is the SDK's own attribute: the SDK offers no public way to
        run an ``MCPServer`` over given streams."""
        with claimed_stdin() as stdin:
            checked = CheckedLines(text_lines(stdin))
            # The SDK's reader only iterates over stdin's lines; CheckedLines does that.
            async with stdio_server(stdin=cast("anyio.AsyncFile[str]", checked)) as (
                    read_stream, write_stream):
                checked.answer_on(write_stream)
                lowlevel = self._lowlevel_server
                await lowlevel.run(read_stream, write_stream,
                                   lowlevel.create_initialization_options())


def _server(gate: StoreGate) -> MemoryServer:
    # The stores [scopes] names, each behind a gate of its own (memhtml.mcp.scoping).
    return MemoryServer(tools_for(gate, ScopeGates.open(gate)))


def _gate(services: Services) -> StoreGate:
    """The gate, sharing the store through ``sync_remote`` when that is set (a bad
    ``sync_seconds`` is refused before the server starts, by ``memhtml mcp``)."""
    policy = sync_policy(services.settings).value_or(None)
    if policy is None:
        return StoreGate(services)
    remote, seconds = policy
    return StoreGate(services, ServerSync(services, remote, seconds))


def build_server(services: Services) -> MemoryServer:
    """An MCP server over the store ``services`` open, every tool registered, not yet
    running."""
    return _server(_gate(services))


def server_and_gate(services: Services) -> tuple[MemoryServer, StoreGate]:
    """The server and the gate its tools run through, for an edge that serves the same
    tools another way (``memhtml serve``'s browser app) and reads through the gate."""
    gate = _gate(services)
    return _server(gate), gate


def started(services: Services) -> tuple[MemoryServer, StoreGate]:
    """The server and its gate for a process that serves until it is stopped (stdio
    here, HTTP in ``memhtml.mcp.http``), the head already loading on the store thread."""
    # The console entry switches the cyclic collector off, which suits a command
    # that exits in a second; a server lives for days, and every reference cycle a
    # call leaves (a closure, an exception's traceback, the SDK's task objects) would
    # stay. So it is on here, and what the warm load built is frozen out of its
    # passes: the head is the largest thing the process holds and makes no cycles.
    gc.enable()
    gate = _gate(services)
    server = _server(gate)

    def warm() -> None:
        gate.warm()
        gc.freeze()

    # Parse the head beside the handshake rather than before it: a large store takes
    # a second or two to load cold, and a client waits on initialize with a timeout.
    # Tool calls queue on the gate's lock until the head is warm.
    threading.Thread(target=warm, name="memhtml-warm", daemon=True).start()
    return server, gate


def serving_line(services: Services, where: str = "") -> str:
    """The one line a server prints to stderr as it starts: the store, the branch,
    the remote it syncs through, and ``where`` (an HTTP server's address)."""
    settings = services.settings
    shared = f", syncing through {settings.sync_remote}" if settings.sync_remote else ""
    return f"memhtml mcp: serving {settings.store} ({settings.branch}){shared}{where}"


def serve(services: Services, *, answer_hooks: bool = True) -> None:
    """Serve the store ``services`` open over stdio until the client disconnects; a
    write still waiting to be pushed is pushed then. With ``answer_hooks`` (not for a
    server on another branch than the clone's), ``memhtml recall`` and ``brief`` are
    answered from this process's head over a local socket (``memhtml.mcp.warm``)."""
    server, gate = started(services)
    print(serving_line(services), file=sys.stderr)
    answers = WarmAnswers(services, gate)
    if answer_hooks:
        answers.start()
    try:
        server.run("stdio")
    finally:
        answers.close()
        gate.close()
