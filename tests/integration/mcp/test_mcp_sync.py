"""The MCP server sharing its store through a git remote (``sync_remote``): writes go
out batched, another clone's writes come in on a stale read, and a remote that cannot
be reached costs no write and is retried."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from mcp import ClientSession

from tests.integration.cli.cli_support import call
from tests.integration.mcp.mcp_support import SCENARIO_TIMEOUT_S, data, served, text_of
from tests.integration.sync.sync_support import git

SYNC = {"MEMHTML_SYNC_REMOTE": "origin", "MEMHTML_SYNC_SECONDS": "0.5"}


def _remote_and_clones(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                       ) -> tuple[Path, Path, Path]:
    remote = tmp_path / "remote.git"
    pygit2.init_repository(str(remote), bare=True, initial_head="main")
    served_store, other = tmp_path / "served", tmp_path / "other"
    assert call(capsys, "init", str(served_store), "--json")[0] == 0
    git(served_store, "remote", "add", "origin", str(remote))
    assert call(capsys, "sync", "--store", str(served_store), "--json")[0] == 0
    assert call(capsys, "clone", str(remote), str(other), "--json")[0] == 0
    return remote, served_store, other


async def _write(session: ClientSession, title: str) -> dict[str, object]:
    result = await session.call_tool("memory_write", {
        "title": title, "claim": f"{title} is remembered.", "type": "semantic"})
    return data(result)


async def _until(check: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "timed out waiting"
        await asyncio.sleep(0.1)


def test_writes_are_pushed_and_reads_pull(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    remote, served_store, other = _remote_and_clones(tmp_path, capsys)

    async def scenario() -> None:
        async with served(served_store, SYNC) as session:
            first = await _write(session, "Deploy day")
            second = await _write(session, "Lunch hour")
            paths = {str(first["path"]), str(second["path"])}

            def pushed() -> bool:
                tree = git(remote, "ls-tree", "-r", "--name-only", "main").split()
                return paths <= set(tree)

            await _until(pushed)
            # Another clone writes and syncs; the server's next read, once its last
            # pull is stale, sees it.
            code, wrote = call(capsys, "write", "--title", "Elsewhere",
                               "--claim", "Written on another machine.",
                               "--store", str(other), "--json")
            assert code == 0, wrote
            assert call(capsys, "sync", "--store", str(other), "--json")[0] == 0
            await asyncio.sleep(0.6)
            found = data(await session.call_tool("memory_search", {
                "query": "another machine"}))
            assert [h["path"] for h in found["hits"]] == wrote["new"], found

    asyncio.run(asyncio.wait_for(scenario(), SCENARIO_TIMEOUT_S))
    log = git(remote, "log", "--format=%s", "main")
    assert log.count("memhtml write") == 3


def test_an_unreachable_remote_costs_no_write_and_is_retried(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    remote, served_store, _ = _remote_and_clones(tmp_path, capsys)
    hidden = tmp_path / "hidden.git"

    async def scenario() -> None:
        async with served(served_store, SYNC) as session:
            await session.call_tool("memory_search", {"query": "anything"})
            remote.rename(hidden)
            written = await _write(session, "Offline fact")
            await asyncio.sleep(0.8)  # the timer's push fails
            result = await session.call_tool("memory_search", {"query": "offline"})
            notes = " ".join(text_of_block(b) for b in result.content[1:])
            assert "sync with origin failed" in notes, [text_of(result), notes]
            assert data(result)["hits"], "the write is committed locally"
            hidden.rename(remote)
            await asyncio.sleep(0.6)
            retried = await session.call_tool("memory_search", {"query": "offline"})
            assert len(retried.content) == 1, "the retry succeeded: nothing to tell"
            tree = git(remote, "ls-tree", "-r", "--name-only", "main").split()
            assert str(written["path"]) in tree

    asyncio.run(asyncio.wait_for(scenario(), SCENARIO_TIMEOUT_S))
    shutil.rmtree(hidden, ignore_errors=True)


def text_of_block(block: object) -> str:
    return str(getattr(block, "text", ""))


def test_a_bad_interval_is_refused_before_serving(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    assert call(capsys, "init", str(store), "--json")[0] == 0
    monkeypatch.setenv("MEMHTML_SYNC_REMOTE", "origin")
    monkeypatch.setenv("MEMHTML_SYNC_SECONDS", "-1")
    code, answer = call(capsys, "mcp", "--store", str(store), "--json")
    assert code == 2 and "sync_seconds" in answer["error"], answer
