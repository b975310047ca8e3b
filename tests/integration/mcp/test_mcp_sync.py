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


def _notes(result: object) -> str:
    return " ".join(text_of_block(b) for b in getattr(result, "content", [])[1:])


def test_a_remote_refused_for_its_paths_costs_no_call_and_no_write(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A remote bringing a 300-byte name and a link at ``areas/tasks`` made every call
    fail (the sync ran before the door and crashed). Now the sync refuses, the reply
    says why, and the door runs on the local branch: the write commits here."""
    from tests.integration.sync.remote_trees import LINK, Attacker, Entry, tip, tree_paths

    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Pat\n\temail = pat@example.invalid\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    remote, served_store, _ = _remote_and_clones(tmp_path, capsys)
    long_name = "areas/inbox/" + "x" * 300 + ".html"
    attacker = Attacker.beside(tmp_path / "attacker.git", str(remote))
    attacker.push_tree(str(remote), "main", {long_name: Entry(b"long\n"),
                                             "areas/tasks": Entry(b"/etc", LINK)})
    before = tip(served_store)

    async def scenario() -> None:
        async with served(served_store, SYNC) as session:
            found = await session.call_tool("memory_search", {"query": "anything"})
            assert not found.is_error, text_of(found)
            notes = _notes(found)
            assert "sync with origin failed" in notes and "nothing was brought in" in notes
            assert "'areas/tasks' refused" in notes and "255-byte limit" in notes, notes
            written = await _write(session, "Written while refused")
            path = str(written["path"])
            assert path in tree_paths(served_store), "the write is committed locally"
            read = await session.call_tool("memory_read", {"path": path})
            assert not read.is_error, text_of(read)
            task = await session.call_tool("memory_write", {
                "title": "Rotate the key", "claim": "Rotate it.", "type": "task"})
            assert str(data(task)["path"]).startswith("areas/tasks/"), data(task)

    asyncio.run(asyncio.wait_for(scenario(), SCENARIO_TIMEOUT_S))
    held = tree_paths(served_store)
    assert long_name not in held and not (served_store / "areas" / "tasks").is_symlink()
    assert tip(served_store) != before


def test_a_memory_the_remote_deleted_is_named_in_the_reply(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Written here a moment ago, deleted by another clone with git rm: the pull takes
    it out (it is not written back as if a stale index had undone it) and the reply
    that ran the pull names it."""
    remote, served_store, _ = _remote_and_clones(tmp_path, capsys)
    elsewhere = tmp_path / "elsewhere"

    async def scenario() -> None:
        async with served(served_store, SYNC) as session:
            written = str((await _write(session, "Short lived"))["path"])

            def pushed() -> bool:
                return written in git(remote, "ls-tree", "-r", "--name-only", "main").split()

            await _until(pushed)
            # Another machine's plain git: a fresh clone, a deletion, a push.
            git(tmp_path, "clone", "-q", str(remote), str(elsewhere))
            git(elsewhere, "rm", "-q", written)
            git(elsewhere, "commit", "-qm", "not worth keeping")
            git(elsewhere, "push", "-q", "origin", "main")
            await asyncio.sleep(0.6)
            result = await session.call_tool("memory_search", {"query": "short lived"})
            notes = _notes(result)
            assert f"deleted: {written}" in notes and "memhtml restore" in notes, notes
            assert data(result)["hits"] == [], data(result)
            await asyncio.sleep(0.6)
            again = await session.call_tool("memory_search", {"query": "short lived"})
            assert data(again)["hits"] == [], "not written back by the next call"

    asyncio.run(asyncio.wait_for(scenario(), SCENARIO_TIMEOUT_S))
    assert written_absent(served_store, remote)


def written_absent(store: Path, remote: Path) -> bool:
    mine = git(store, "ls-tree", "-r", "--name-only", "main").split()
    theirs = git(remote, "ls-tree", "-r", "--name-only", "main").split()
    return not any("short-lived" in p for p in (*mine, *theirs))
