"""Anthropic's memory tool with a memhtml store behind it, for the Anthropic SDK.

The SDK's client-side memory tool (``memory_20250818``) has a model keep files under
``/memories``. ``MemhtmlMemoryTool`` is the SDK's own ``BetaAbstractMemoryTool`` with
each command served by a store: a file is a memory (read and edited as its
markdown), ``delete`` archives, ``rename`` moves, and every change is one commit whose
subject names the command (``memhtml memory-tool: str_replace /memories/notes.md``).
What a refused command says comes back to the model as an error result, in the SDK
handler's own words where it has them. Needs the ``memory-tool`` extra
(``pip install 'memhtml[memory-tool]'``)::

    from anthropic import Anthropic
    from memhtml.memory_tool import MemhtmlMemoryTool

    memory = MemhtmlMemoryTool("~/memory")
    runner = Anthropic().beta.messages.tool_runner(
        model="claude-sonnet-4-5", max_tokens=2048, tools=[memory],
        messages=[{"role": "user", "content": "Remember that I take my coffee black."}])
    for message in runner:
        ...

The store is found as the CLI finds it (the argument, else ``MEMHTML_STORE``, else
the repository around the working directory), with the same settings, so a write
is embedded for hybrid search as ``memhtml write``'s is. Calls are served one at a
time through the same gate as the MCP server's, so a tool shared by several threads
never interleaves two changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)
from returns.io import IOResult
from returns.result import Failure, Success

from memhtml.compose import Services, explain, load_settings, open_services, perform
from memhtml.compose.memory_tool import (
    tool_create,
    tool_delete,
    tool_insert,
    tool_rename,
    tool_str_replace,
    tool_view,
)
from memhtml.compose.settings import discover_store
from memhtml.mcp.gate import StoreGate
from memhtml.store import Store, StoreError

__all__ = ["MemhtmlMemoryTool", "StoreNotOpenedError"]


class StoreNotOpenedError(Exception):
    """The store the tool was pointed at could not be opened (not a repository, not a
    store, a setting that cannot be honoured): raised at construction, so a program
    learns it before a model is told anything."""


def _services(store: str | os.PathLike[str] | None) -> Services:
    root = discover_store(None if store is None else os.fspath(store), os.environ, Path.cwd())
    if root is None:
        raise StoreNotOpenedError("no store: pass its directory, or set MEMHTML_STORE")
    loaded = load_settings(root, os.environ)
    if isinstance(loaded, Failure):
        raise StoreNotOpenedError(loaded.failure().reason)
    opened = perform(open_services(loaded.unwrap().settings))
    if isinstance(opened, Failure):
        raise StoreNotOpenedError(opened.failure().reason)
    return opened.unwrap()


class MemhtmlMemoryTool(BetaAbstractMemoryTool):
    """The memory tool served by the store at ``store`` (see the module's text).

    ``services`` hands in services opened elsewhere (a program that already holds
    them); otherwise the store is opened here, and ``StoreNotOpenedError`` says why not.
    """

    def __init__(self, store: str | os.PathLike[str] | None = None, *,
                 services: Services | None = None,
                 cache_control: BetaCacheControlEphemeralParam | None = None) -> None:
        super().__init__(cache_control=cache_control)
        self._gate = StoreGate(services if services is not None else _services(store))

    def close(self) -> None:
        """Let the store's thread go (the tool answers nothing after this)."""
        self._gate.close()

    def _answer(self, door: Callable[[Store], IOResult[str, StoreError]]) -> str:
        match self._gate.run(door):
            case Success(answer):
                return str(answer)
            case Failure(error):
                raise ToolError(explain(error))
        raise ToolError("the store gave no answer")  # pragma: no cover - exhaustive above

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path = _text(command.path, "path")
        rng = command.view_range
        if rng is not None and (not isinstance(rng, list)
                                or not all(type(n) is int for n in rng)):
            raise ToolError("`view_range` must be two whole line numbers, [start, end]")
        return self._answer(lambda store: tool_view(store, path, rng))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        path, text = _text(command.path, "path"), _text(command.file_text, "file_text")
        return self._answer(lambda store: tool_create(store, path, text))

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path = _text(command.path, "path")
        old, new = _text(command.old_str, "old_str"), _text(command.new_str, "new_str")
        return self._answer(lambda store: tool_str_replace(store, path, old, new))

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        path, text = _text(command.path, "path"), _text(command.insert_text, "insert_text")
        line = command.insert_line
        if type(line) is not int:
            raise ToolError("`insert_line` must be a whole line number (0: before the first)")
        return self._answer(lambda store: tool_insert(store, path, line, text))

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        path = _text(command.path, "path")
        return self._answer(lambda store: tool_delete(store, path))

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old, new = _text(command.old_path, "old_path"), _text(command.new_path, "new_path")
        return self._answer(lambda store: tool_rename(store, old, new))


def _text(value: object, name: str) -> str:
    """A command's string field, or the error a model can act on: the SDK builds the
    command from the model's input without validating it, so a field may be missing
    or of another type."""
    if not isinstance(value, str):
        raise ToolError(f"`{name}` must be a string")
    return value
