"""Shared helpers for the MCP server's integration tests.

Each test spawns ``python -m memhtml.mcp --store <dir>`` as a real subprocess (forked
from a warm interpreter behind a launcher process: ``warm_cli``) and talks to it with
the SDK's own stdio client, so what is checked is what an MCP client sees on the wire.
The store is a real repository made with the store library.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client
from mcp.types import CallToolResult, TextContent
from returns.io import IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.clock import FixedClock
from memhtml.adapters.git import PygitService
from memhtml.adapters.journal_files import JournalFiles
from memhtml.adapters.local_state_files import LocalStateFiles
from memhtml.adapters.snapshot_files import SnapshotFiles
from memhtml.compose.services import blob_reader
from memhtml.contracts.services import Signature
from memhtml.store import Store, StoreDeps, init_store
from tests.integration import warm_cli

T = TypeVar("T")
E = TypeVar("E")

SCENARIO_TIMEOUT_S = 120.0
OUTSIDE_AUTHOR = Signature("Someone Else", "else@example.org")
OUTSIDE_CLOCK = FixedClock(datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC))


def ok(io: IOResult[T, E]) -> T:
    assert is_successful(io), io
    return unsafe_perform_io(io.unwrap())


def make_store(tmp_path: Path) -> Path:
    """A fresh checkout made into a store, at ``tmp_path / "store"``."""
    root = tmp_path / "store"
    root.mkdir()
    git = ok(PygitService.init(root))
    ok(init_store(StoreDeps(git=git, clock=OUTSIDE_CLOCK, author=OUTSIDE_AUTHOR,
                            snapshots=SnapshotFiles(root / ".memhtml", blob_reader(git)),
                            local=LocalStateFiles(root / ".memhtml"), worktree=root,
                            journals=JournalFiles(root / ".git"))))
    return root


def git_cli(root: Path, *args: str) -> str:
    """Run the git command line in ``root`` and return its stdout."""
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def outside_store(root: Path) -> Store:
    """A second handle on the store, as the CLI or another process would hold one."""
    git = ok(PygitService.open(root / ".git"))
    return Store(StoreDeps(git=git, clock=OUTSIDE_CLOCK, author=OUTSIDE_AUTHOR,
                           worktree=root, journals=JournalFiles(root / ".git")))


def server_environment() -> dict[str, str]:
    """The SDK's default environment for a server process, with this process's
    ``PYTHONPATH``: the server then imports the memhtml under test (a source tree
    named on the path), not only an installed one."""
    env = get_default_environment()
    # The suite's embedder choice too (tests/conftest.py: lexical unless a test asks
    # for the recorded default), so the server searches as the test's CLI calls do.
    for name in ("PYTHONPATH", "MEMHTML_EMBEDDER"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


@asynccontextmanager
async def served(root: Path, env: dict[str, str] | None = None
                 ) -> AsyncIterator[ClientSession]:
    """A client session with a server process serving ``root``; stderr goes to a log
    beside the store, which a failing test can be read against. ``env`` adds variables
    to the SDK's default environment for the server."""
    environment = {**server_environment(), **(env or {})}
    command, args = warm_cli.launcher("memhtml.mcp", "--store", str(root), env=environment)
    params = StdioServerParameters(command=command, args=args, cwd=str(root.parent),
                                   env=environment)
    with (root.parent / "server.log").open("w", encoding="utf-8") as log:
        async with stdio_client(params, errlog=log) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session


def run(root: Path, scenario: Callable[[ClientSession], Awaitable[None]]) -> None:
    """Serve ``root`` and run ``scenario`` against it, with a bound on the whole run."""

    async def main() -> None:
        async with served(root) as session:
            await scenario(session)

    try:
        asyncio.run(asyncio.wait_for(main(), SCENARIO_TIMEOUT_S))
    except BaseExceptionGroup as group:
        # The client's task groups wrap a failed assertion; raise the assertion itself
        # so pytest shows it rather than the nesting.
        raise _first_leaf(group) from None


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


def data(result: CallToolResult) -> dict[str, Any]:
    """The structured answer of a call that must have succeeded."""
    assert not result.is_error, text_of(result)
    structured = result.structured_content
    assert isinstance(structured, dict), structured
    return dict(structured)


def refused(result: CallToolResult) -> str:
    """The error text of a call that must have failed as a tool error."""
    assert result.is_error, result
    return text_of(result)
