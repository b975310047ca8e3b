"""The MCP tools under arguments a careless or hostile model sends: names that only
look like the right ones, nulls, unknown keys nested in link items, enormous values,
claims that are empty, NUL-bearing or copies in another spelling, neighbourhoods
with cycles and hubs, and folders that try to leave the store.

Every call goes through the official client over stdio to a real server process on
a real store; nothing a refused call names is committed.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from memhtml.adapters.clock import FixedClock
from memhtml.adapters.git import PygitService
from memhtml.adapters.journal_files import JournalFiles
from memhtml.contracts.record import Link
from memhtml.store import Store, StoreDeps, WriteInput, link, write
from tests.integration.mcp.mcp_support import (
    OUTSIDE_AUTHOR,
    data,
    git_cli,
    make_store,
    ok,
    refused,
    run,
)

LEAKS = ("pydantic", "validation error", "http://", "https://", "Traceback", "Error executing")
ERROR_TEXT_MAX = 2_000
"""A refusal a model reads stays short whatever it was sent."""


def _head(root: Path) -> str:
    return git_cli(root, "rev-parse", "HEAD").strip()


def _plain(text: str) -> None:
    assert re.match(r"^ERR_[A-Z_]+: ", text), text
    for leak in LEAKS:
        assert leak not in text, (leak, text)


def _store_at(root: Path, when: str = "2026-05-01T09:00:00Z") -> Store:
    git = ok(PygitService.open(root / ".git"))
    clock = FixedClock(datetime.fromisoformat(when.replace("Z", "+00:00")))
    return Store(StoreDeps(git=git, clock=clock, author=OUTSIDE_AUTHOR,
                           worktree=root, journals=JournalFiles(root / ".git")))


def _put(root: Path, title: str, claim: str, links: tuple[Link, ...] = (),
         entities: tuple[str, ...] = (), folder: str | None = None) -> str:
    landed = ok(write(_store_at(root), WriteInput(title=title, claim=claim, links=links,
                                                  entities=entities, directory=folder)))
    assert landed.primary is not None
    return landed.primary


# -- argument names and values ---------------------------------------------------------------

HOSTILE_CALLS: tuple[tuple[str, dict[str, Any], str], ...] = (
    ("memory_write", {"t\u0456tle": "X", "claim": "Y."}, "ERR_UNKNOWN_ARGUMENT"),
    ("memory_write", {"title": "X", "claim": "Y.", "\uff54\uff59\uff50\uff45": "episodic"},
     "ERR_UNKNOWN_ARGUMENT"),
    ("memory_write", {"title": "X", "claim": "Y.", "type\u200b": "episodic"},
     "ERR_UNKNOWN_ARGUMENT"),
    ("memory_write", {"title": "X", "claim": "Y.", "Type": "episodic"}, "ERR_UNKNOWN_ARGUMENT"),
    ("memory_write", {"title": None, "claim": "Y."}, "ERR_INVALID_ARGUMENTS"),
    ("memory_write", {"title": "X", "claim": None}, "ERR_INVALID_ARGUMENTS"),
    ("memory_write", {"title": "X", "claim": "Y.", "tag": None}, "ERR_INVALID_ARGUMENTS"),
    ("memory_write", {"title": "X", "claim": "Y.", "type": None}, "ERR_INVALID_ARGUMENTS"),
    ("memory_write", {"title": "X", "claim": "Y.", "link": [
        {"rel": "supports", "path": "areas/inbox/a.html", "extra": {"deep": [1, {"x": 2}]}}]},
     "ERR_INVALID_ARGUMENTS"),
    ("memory_write", {"title": "X", "claim": "Y.", "link": [{"rel": "supports"}]},
     "ERR_INVALID_ARGUMENTS"),
    ("memory_write", {"title": "X", "claim": "Y.", "link": [None]}, "ERR_INVALID_ARGUMENTS"),
    ("memory_write", {"title": "X", "claim": "Y.", "link": {"rel": "supports", "path": "a"}},
     "ERR_INVALID_ARGUMENTS"),
    ("memory_write", {"title": "X", "claim": "y" * 1_000_000}, "ERR_INVALID_ARGUMENTS"),
    ("memory_write", {"title": "t" * 1_000_000, "claim": "Y."}, "ERR_INVALID_ARGUMENTS"),
    ("memory_write", {"title": "X", "claim": "Y.", "tag": ["t"] * 100_000},
     "ERR_INVALID_ARGUMENTS"),
    ("memory_write", {"title": "X", "claim": "Y.", "link": [
        {"rel": "supports", "path": "p" * 1_000_000}]}, "ERR_INVALID_ARGUMENTS"),
    ("memory_write", {"title": "X", "claim": "Y.", "type": "x" * 1_000_000},
     "ERR_INVALID_ARGUMENTS"),
    ("memory_recent", {"limit": None}, "ERR_INVALID_ARGUMENTS"),
    ("memory_recent", {"limit": 10**30}, "ERR_INVALID_ARGUMENTS"),
    ("memory_context", {"path": None}, "ERR_INVALID_ARGUMENTS"),
    ("memory_context", {"path": "areas/inbox/a.html", "depth": 99}, "ERR_INVALID_ARGUMENTS"),
    ("memory_list", {"dir": None, "limit": 0}, "ERR_INVALID_ARGUMENTS"),
    ("memory_list", {"dir": "d" * 1_000_000}, "ERR_INVALID_ARGUMENTS"),
)


def test_hostile_arguments_are_refused_in_short_plain_words_and_nothing_is_written(
        tmp_path: Path) -> None:
    root = make_store(tmp_path)
    before = _head(root)

    async def scenario(session: ClientSession) -> None:
        for tool, arguments, code in HOSTILE_CALLS:
            text = refused(await session.call_tool(tool, arguments))
            _plain(text)
            assert text.startswith(f"{code}: "), (tool, list(arguments), text[:300])
            assert len(text) <= ERROR_TEXT_MAX, (tool, list(arguments), len(text))

    run(root, scenario)
    assert _head(root) == before


def test_a_lookalike_name_is_never_taken_for_the_real_one(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        text = refused(await session.call_tool(
            "memory_write", {"title": "X", "claim": "Y.", "typ\u0435": "episodic"}))
        assert "Valid arguments:" in text and "type" in text
        ok_write = data(await session.call_tool(
            "memory_write", {"title": "X", "claim": "Y.", "type": "episodic"}))
        read = data(await session.call_tool("memory_read", {"path": ok_write["path"]}))
        assert read["type"] == "episodic"

    run(root, scenario)


def test_an_enormous_unknown_name_is_not_echoed_whole(tmp_path: Path) -> None:
    root = make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        text = refused(await session.call_tool(
            "memory_write", {"title": "X", "claim": "Y.", "n" * 100_000: 1}))
        assert text.startswith("ERR_UNKNOWN_ARGUMENT: ")
        assert len(text) <= ERROR_TEXT_MAX, len(text)

    run(root, scenario)


# -- duplicate claims --------------------------------------------------------------------------


def test_duplicate_detection_holds_for_odd_claims(tmp_path: Path) -> None:
    root = make_store(tmp_path)
    long_claim = "word " * 1_799 + "end."

    async def scenario(session: ClientSession) -> None:
        for claim in ("   \t ", "\n\r\n", "a\x00b", "\x00"):
            text = refused(await session.call_tool("memory_write",
                                                   {"title": "Odd", "claim": claim}))
            _plain(text)
        first = data(await session.call_tool("memory_write",
                                             {"title": "Long", "claim": long_claim}))
        again = refused(await session.call_tool(
            "memory_write", {"title": "Long again", "claim": "  " + long_claim.upper() + "\n"}))
        assert again.startswith("ERR_DUPLICATE_CLAIM: ") and first["path"] in again
        spaced = refused(await session.call_tool(
            "memory_write", {"title": "Tabs", "claim": long_claim.replace(" ", "\t")}))
        assert spaced.startswith("ERR_DUPLICATE_CLAIM: ") and first["path"] in spaced
        forced = data(await session.call_tool("memory_write", {
            "title": "Forced", "claim": long_claim, "allow_duplicate": True}))
        assert forced["path"] != first["path"]
        other = data(await session.call_tool(
            "memory_write", {"title": "Near", "claim": long_claim[:-1] + "!"}))
        assert other["path"] not in (first["path"], forced["path"])

    run(root, scenario)


def test_a_claim_of_only_unicode_spaces_is_refused(tmp_path: Path) -> None:
    root = make_store(tmp_path)
    before = _head(root)

    async def scenario(session: ClientSession) -> None:
        text = refused(await session.call_tool("memory_write",
                                               {"title": "Blank", "claim": "\u00a0\u2003"}))
        _plain(text)

    run(root, scenario)
    assert _head(root) == before


def test_a_claim_in_decomposed_unicode_is_the_same_claim(tmp_path: Path) -> None:
    root = make_store(tmp_path)
    composed = unicodedata.normalize("NFC", "Le café ouvre à neuf heures.")
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed

    async def scenario(session: ClientSession) -> None:
        first = data(await session.call_tool("memory_write",
                                             {"title": "Cafe", "claim": composed}))
        again = refused(await session.call_tool("memory_write",
                                                {"title": "Cafe again", "claim": decomposed}))
        assert again.startswith("ERR_DUPLICATE_CLAIM: ") and first["path"] in again

    run(root, scenario)


# -- memory_recent ---------------------------------------------------------------------------


@pytest.mark.parametrize("since", ["yesterday", "2026-13-45", "last week"])
def test_recent_refuses_a_since_that_is_not_a_date(tmp_path: Path, since: str) -> None:
    root = make_store(tmp_path)
    _put(root, "Alpha", "Alpha holds.")

    async def scenario(session: ClientSession) -> None:
        text = refused(await session.call_tool("memory_recent", {"since": since}))
        _plain(text)

    run(root, scenario)


# -- memory_context ----------------------------------------------------------------------------


def test_context_on_a_cycle_visits_each_memory_once(tmp_path: Path) -> None:
    root = make_store(tmp_path)
    a = _put(root, "Alpha", "Alpha holds.", entities=("topic:ring",))
    b = _put(root, "Beta", "Beta holds.", links=(Link("supports", a),), entities=("topic:ring",))
    c = _put(root, "Gamma", "Gamma holds.", links=(Link("part_of", b),))
    ok(link(_store_at(root), a, "relates_to", c))  # the cycle closes

    async def scenario(session: ClientSession) -> None:
        for start in (a, b, c):
            near = data(await session.call_tool("memory_context", {"path": start, "depth": 3}))
            paths = [n["path"] for n in near["nodes"]]
            assert sorted(paths) == sorted({a, b, c})
            assert near["nodes"][0]["path"] == start and near["nodes"][0]["depth"] == 0
            assert all(n["depth"] <= 1 for n in near["nodes"])
            edges = {(e["source"], e["rel"], e["target"]) for e in near["edges"]}
            assert edges == {(b, "supports", a), (c, "part_of", b), (a, "relates_to", c)}
            assert near["truncated"] is False

    run(root, scenario)


def test_context_at_max_depth_on_a_hub_stays_within_the_limit(tmp_path: Path) -> None:
    root = make_store(tmp_path)
    hub = _put(root, "Hub", "The hub holds.")
    spokes = [_put(root, f"Spoke {i}", f"Spoke number {i} holds.", links=(Link("supports", hub),))
              for i in range(60)]
    leaf = _put(root, "Leaf", "The leaf holds.", links=(Link("part_of", spokes[0]),))

    async def scenario(session: ClientSession) -> None:
        for limit in (1, 7, 50):
            near = data(await session.call_tool(
                "memory_context", {"path": leaf, "depth": 3, "limit": limit}))
            paths = [n["path"] for n in near["nodes"]]
            assert len(paths) == len(set(paths))
            assert paths[0] == leaf
            assert len(paths) - 1 <= limit
            assert near["truncated"] is True
            reached = set(paths)
            assert all(e["source"] in reached and e["target"] in reached for e in near["edges"])
            depths = [n["depth"] for n in near["nodes"]]
            assert depths == sorted(depths)
        whole = data(await session.call_tool("memory_context", {"path": hub, "limit": 50}))
        assert len(whole["nodes"]) == 51 and whole["truncated"] is True

    run(root, scenario)


# -- memory_list -------------------------------------------------------------------------------


def test_list_never_leaves_the_store_nor_follows_a_committed_symlink(tmp_path: Path) -> None:
    root = make_store(tmp_path)
    inside = _put(root, "Alpha", "Alpha holds.", folder="areas/ops/")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.html").write_text("<p>secret</p>\n", encoding="utf-8")
    (root / "areas/linked").symlink_to(outside)
    (root / "areas/ops-link").symlink_to(root / "areas/ops")
    git_cli(root, "add", "areas/linked", "areas/ops-link")
    git_cli(root, "-c", "user.name=P", "-c", "user.email=p@example.org", "commit", "-q", "-m",
            "links")

    async def scenario(session: ClientSession) -> None:
        for folder in ("..", "../", "/..", "../../etc", str(outside), "areas/../..",
                       "areas/linked", "areas/linked/", "areas/ops-link", "\\..\\",
                       "areas/ops/../../.."):
            result = await session.call_tool("memory_list", {"dir": folder})
            if result.is_error:
                _plain(refused(result))
                continue
            listed = data(result)
            assert all(m["path"] == inside for m in listed["memories"]), (folder, listed)
        top = data(await session.call_tool("memory_list", {"dir": "/areas"}))
        shown = [d["path"] for d in top["dirs"]]
        assert "areas/ops/" in shown and "areas/linked/" not in shown
        assert "secret" not in str(top)
        absolute = data(await session.call_tool("memory_list", {"dir": "/areas/ops/"}))
        assert [m["path"] for m in absolute["memories"]] == [inside]

    run(root, scenario)
