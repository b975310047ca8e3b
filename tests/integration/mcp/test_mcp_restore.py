"""``memory_restore`` over stdio with the official client: an archived memory back live.

The tool is the ``restore`` door: one commit that moves the archived file back to its
original path, status active, every link to it pointed back. Search finds it again.
A live path or a second restore is a tool error with a stable code and nothing
committed; its arguments are checked like every tool's (unknown names, nulls, sizes).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from tests.integration.mcp.mcp_support import data, git_cli, make_store, refused, run

KETTLE = "areas/inbox/kettle.html"


def _head(root: Path) -> str:
    return git_cli(root, "rev-parse", "HEAD").strip()


def _plain(text: str, code: str) -> None:
    assert re.match(r"^ERR_[A-Z_]+: ", text), text
    assert text.startswith(f"{code}: "), text
    for leak in ("pydantic", "validation error", "Traceback"):
        assert leak not in text, text


async def _kettle_and_ladder(session: ClientSession) -> str:
    kettle = data(await session.call_tool("memory_write", {
        "title": "Kettle", "claim": "The kettle is descaled on Mondays.", "path": KETTLE}))
    assert kettle["path"] == KETTLE
    ladder = data(await session.call_tool("memory_write", {
        "title": "Ladder", "claim": "The ladder is in the shed.",
        "link": [{"rel": "relates_to", "path": KETTLE}]}))
    path = ladder["path"]
    assert isinstance(path, str)
    return path


@pytest.mark.parametrize("named", ["original", "archive"])
def test_archive_then_restore_through_the_tools(tmp_path: Path, named: str) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        ladder = await _kettle_and_ladder(session)
        gone = data(await session.call_tool("memory_archive", {"path": KETTLE}))
        archived = gone["archived_to"]
        assert archived.endswith("/" + KETTLE)
        assert data(await session.call_tool("memory_search", {"query": "kettle descaled"}))[
            "hits"] == []

        back = data(await session.call_tool("memory_restore", {
            "path": KETTLE if named == "original" else archived}))
        assert back["path"] == KETTLE
        assert set(back["changed"]) == {KETTLE, archived, ladder}
        assert back["commit"] == _head(root)
        hits = data(await session.call_tool("memory_search", {"query": "kettle descaled"}))
        assert [hit["path"] for hit in hits["hits"]] == [KETTLE]
        read = data(await session.call_tool("memory_read", {"path": KETTLE, "tier": "all"}))
        assert read["status"] == "active" and "memhtml-archived" not in read["text"]
        edges = data(await session.call_tool("memory_related", {"path": KETTLE}))
        assert edges["inbound"] == [{"rel": "relates_to", "path": ladder, "exists": True}]

    run(root, scenario)
    subjects = git_cli(root, "log", "-2", "--format=%s", "--", KETTLE).splitlines()
    assert subjects == [f"memhtml restore: {KETTLE}", f"memhtml archive: {KETTLE}"]
    assert git_cli(root, "status", "--porcelain") == ""


def test_restore_of_a_live_memory_or_twice_is_refused_and_commits_nothing(
        tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        await _kettle_and_ladder(session)
        head = _head(root)
        text = refused(await session.call_tool("memory_restore", {"path": KETTLE}))
        _plain(text, "ERR_REFUSED")
        assert "live" in text and _head(root) == head
        archived = data(await session.call_tool("memory_archive", {"path": KETTLE}))[
            "archived_to"]
        corrected = refused(await session.call_tool("memory_correct", {
            "path": KETTLE, "title": "Kettle", "claim": "Descaled on Fridays."}))
        assert f"memhtml restore {KETTLE}" in corrected, corrected
        data(await session.call_tool("memory_restore", {"path": KETTLE}))
        head = _head(root)
        for again in (KETTLE, archived):
            text = refused(await session.call_tool("memory_restore", {"path": again}))
            _plain(text, "ERR_REFUSED")
            assert "nothing to restore" in text, text
        assert _head(root) == head

    run(root, scenario)


BAD_CALLS: tuple[tuple[dict[str, Any], str], ...] = (
    ({}, "ERR_INVALID_ARGUMENTS"),
    ({"path": None}, "ERR_INVALID_ARGUMENTS"),
    ({"path": KETTLE, "paths": [KETTLE]}, "ERR_UNKNOWN_ARGUMENT"),
    ({"path": "p" * 1_000_000}, "ERR_INVALID_ARGUMENTS"),
    ({"path": KETTLE, "at": "r" * 100_000}, "ERR_INVALID_ARGUMENTS"),
    ({"path": "../outside.html"}, "ERR_PATH_REFUSED"),
    ({"path": "areas/inbox/never.html"}, "ERR_NOT_FOUND"),
    ({"path": KETTLE, "at": "no-such-rev"}, "ERR_"),
)


def test_bad_arguments_are_refused_in_plain_words_and_nothing_is_written(
        tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        await _kettle_and_ladder(session)
        head = _head(root)
        for arguments, code in BAD_CALLS:
            text = refused(await session.call_tool("memory_restore", arguments))
            assert re.match(r"^ERR_[A-Z_]+: ", text) and text.startswith(code), (
                list(arguments), text[:300])
            assert len(text) <= 2_000, len(text)
        assert _head(root) == head

    run(root, scenario)
