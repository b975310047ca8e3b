"""The server searches the way the CLI does: hybrid whenever the store is configured
for it and the vector cache covers every memory (a search embeds a few missing ones on
the spot), lexical (with the reason) otherwise.

Both edges take the composition root's services, so the embedder and the vector
cache the CLI uses are the server's too. Checked through the official client over
stdio against the CLI's own ``search --json`` on the same store.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import ClientSession

from memhtml.cli.app import app
from memhtml.compose.vectors import TOP_UP_PASSAGES
from memhtml.store import WriteInput, write
from tests.integration.mcp.mcp_support import data, make_store, ok, outside_store, run

FACTS = (
    ("Deploy window", "Deploys to the checkout service happen on Tuesday mornings."),
    ("Kettle", "The office kettle is descaled every Monday."),
    ("Rollback", "A failed checkout deploy is rolled back within ten minutes."),
)
QUERY = "checkout deploy"


def _configured(tmp_path: Path, more: int = 0) -> Path:
    """A store of FACTS (and ``more`` memories after them) configured for the hashing
    embedder, with no vectors yet."""
    root = make_store(tmp_path)
    store = outside_store(root)
    for title, claim in FACTS:
        ok(write(store, WriteInput(title=title, claim=claim)))
    for n in range(more):
        ok(write(store, WriteInput(title=f"Note {n}", claim=f"Filler note number {n}.")))
    (root / ".memhtml" / "config.toml").write_text('embedder = "hashing"\n', encoding="utf-8")
    return root


def _cli_search(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    code = app(["search", QUERY, "--store", str(root), "--json"], result_action="return_value")
    assert code == 0
    payload: dict[str, object] = json.loads(capsys.readouterr().out)
    return payload


def test_hybrid_through_the_server_matches_the_cli(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str],
                                                   default_embedder: None) -> None:
    root = _configured(tmp_path)
    # No vectors yet: the search embeds the store's three memories on the spot (a
    # gap this small is filled before ranking) and is hybrid already.
    before = _cli_search(root, capsys)
    assert before["mode"] == "hybrid"
    code = app(["embed", "--store", str(root), "--json"], result_action="return_value")
    assert code == 0
    cli = _cli_search(root, capsys)
    assert cli["mode"] == "hybrid"
    cli_hits = cli["hits"]
    assert isinstance(cli_hits, list)

    async def scenario(session: ClientSession) -> None:
        found = data(await session.call_tool("memory_search", {"query": QUERY}))
        assert found["mode"] == "hybrid"
        assert found["note"] is None
        assert [h["path"] for h in found["hits"]] == [h["path"] for h in cli_hits]
        assert any("vector" in h["arms"] for h in found["hits"])
        # each hit carries every ranking arm's own rank and score
        assert any({r["arm"] for r in h["ranks"]} == {"lexical", "vector"}
                   for h in found["hits"])

    run(root, scenario)


def test_a_store_without_vectors_is_searched_lexically_and_says_why(
        tmp_path: Path, default_embedder: None) -> None:
    # More memories than a search embeds on the spot (TOP_UP_PASSAGES): the gap is
    # a back-fill, left to memhtml embed.
    root = _configured(tmp_path, more=TOP_UP_PASSAGES)

    async def scenario(session: ClientSession) -> None:
        found = data(await session.call_tool("memory_search", {"query": QUERY}))
        assert found["mode"] == "lexical"
        assert "memhtml embed" in found["note"]
        assert all(h["arms"] == ["lexical"] for h in found["hits"])
        assert found["hits"], "the lexical arm still answers"

    run(root, scenario)


def test_a_write_through_the_server_is_embedded_in_the_same_call(
        tmp_path: Path, default_embedder: None) -> None:
    root = _configured(tmp_path)
    assert app(["embed", "--store", str(root), "--json"], result_action="return_value") == 0

    async def scenario(session: ClientSession) -> None:
        wrote = await session.call_tool("memory_write", {
            "title": "Freeze", "claim": "No checkout deploys during the December freeze."})
        assert not wrote.is_error, wrote
        texts = [c.text for c in wrote.content if hasattr(c, "text")]
        assert not any("vectors" in t for t in texts[1:]), texts
        status = data(await session.call_tool("memory_status", {}))
        vectors = status["vectors"]
        assert (vectors["have"], vectors["total"]) == (4, 4)
        assert vectors["passages_have"] == vectors["passages_total"]
        found = data(await session.call_tool("memory_search", {"query": "december freeze"}))
        assert found["mode"] == "hybrid" and found["note"] is None
        assert found["hits"][0]["path"].endswith("freeze.html")

    run(root, scenario)
