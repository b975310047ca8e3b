"""The access log on real stores: what a read door appends, through the CLI, the MCP
server and the composition root, and that the log never costs a read its answer."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from mcp import ClientSession

from memhtml.adapters.memory_git import InMemoryGit
from memhtml.adapters.memory_state import InMemoryState
from memhtml.adapters.state_db import SqliteStatePlane
from memhtml.compose import Settings, init_repository, open_services, value_of
from memhtml.contracts.errors import StateFailure, StateUnusable
from memhtml.contracts.services import CounterKey
from memhtml.store import Store, StoreDeps, WriteInput, init_store, read, related, search, write
from tests.integration.cli.cli_support import call, call_text
from tests.integration.mcp import mcp_support
from tests.integration.store.store_support import AUTHOR, CLOCK, err, ok

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's own MEMHTML_* settings must not leak into what a test sees.
    for name in list(os.environ):
        if name.startswith("MEMHTML_") and name != "MEMHTML_EMBEDDER":
            monkeypatch.delenv(name)


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "store"
    code, answer = call(capsys, "init", str(root), "--json")
    assert code == 0, answer
    return root


def state_db(root: Path) -> Path:
    return root / ".git" / "memhtml" / "state.db"


def accesses(root: Path) -> dict[str, int]:
    plane = SqliteStatePlane(state_db(root))
    counts = ok(plane.access_counts(EPOCH))
    plane.close()
    return {path: count.count for path, count in counts.items()}


def add(capsys: pytest.CaptureFixture[str], root: Path, title: str, claim: str) -> str:
    code, answer = call(capsys, "write", "--title", title, "--claim", claim,
                        "--store", str(root), "--json")
    assert code == 0, answer
    return str(answer["path"])


def test_the_plane_is_wired_under_the_git_directory(tmp_path: Path, store: Path) -> None:
    services = value_of(open_services(Settings(store=store)))
    assert isinstance(services.state, SqliteStatePlane)
    assert services.state.path == state_db(store)
    assert services.store_deps().state is services.state
    bare = tmp_path / "bare.git"
    value_of(init_repository(bare, bare=True))
    bare_services = value_of(open_services(Settings(store=bare), require_store=False))
    assert isinstance(bare_services.state, SqliteStatePlane)
    assert bare_services.state.path == bare / "memhtml" / "state.db"


def test_commands_that_read_no_memory_never_open_the_database(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    path = add(capsys, store, "Deploy day", "Deploys go out on Tuesdays.")
    s = ("--store", str(store), "--json")
    for command in (("status",), ("search", "deploys"), ("related", path), ("log", path)):
        code, _ = call(capsys, *command, *s)
        assert code == 0, command
    assert not state_db(store).exists()


def test_a_read_of_the_tip_logs_one_access_of_its_tree_path(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    path = add(capsys, store, "Deploy day", "Deploys go out on Tuesdays.")
    other = add(capsys, store, "Freeze", "Nothing ships on Fridays.")
    s = ("--store", str(store), "--json")
    for tier in ("gist", "all"):
        code, answer = call(capsys, "read", path, "--tier", tier, *s)
        assert code == 0, answer
    assert accesses(store) == {path: 2}
    # At an older commit the path may name another memory: not a use of this one.
    code, log = call(capsys, "log", path, *s)
    code, _ = call(capsys, "read", path, "--at", log["commits"][0]["commit"], *s)
    assert code == 0
    # A read that finds nothing accessed nothing; search and related are not reads.
    code, _ = call(capsys, "read", "areas/inbox/missing.html", *s)
    assert code != 0
    for command in (("search", "fridays"), ("related", other)):
        call(capsys, *command, *s)
    assert accesses(store) == {path: 2}


def test_a_broken_state_database_never_fails_or_marks_a_read(
    store: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    path = add(capsys, store, "Deploy day", "Deploys go out on Tuesdays.")
    broken = state_db(store)
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_bytes(b"not a database\n" * 100)
    before = broken.read_bytes()
    code, out, err_text = call_text(capsys, "read", path, "--tier", "gist", "--store",
                                    str(store))
    assert (code, out.strip(), err_text) == (0, "Deploys go out on Tuesdays.", "")
    assert broken.read_bytes() == before
    services = value_of(open_services(Settings(store=store)))
    assert services.state is not None
    assert isinstance(err(services.state.detections(CounterKey("edge", "a|b"))),
                      StateUnusable)


def _memory_store(state: InMemoryState | None) -> Store:
    deps = StoreDeps(git=InMemoryGit(bare=True), clock=CLOCK, author=AUTHOR, state=state)
    ok(init_store(deps))
    return Store(deps)


def test_the_read_door_stamps_the_access_with_the_stores_clock() -> None:
    state = InMemoryState()
    store = _memory_store(state)
    landed = ok(write(store, WriteInput(title="Deploy day", claim="Deploys go out on "
                                        "Tuesdays.")))
    assert landed.primary is not None
    assert ok(read(store, landed.primary, "gist")) == "Deploys go out on Tuesdays."
    ok(search(store, "deploys"))
    ok(related(store, landed.primary))
    assert state.accesses == ((landed.primary, CLOCK.now(), "read"),)


def test_a_failing_plane_or_none_leaves_the_read_as_it_was() -> None:
    for state in (InMemoryState(failing=StateFailure("state.db", "append_access", "disk")),
                  None):
        store = _memory_store(state)
        landed = ok(write(store, WriteInput(title="Deploy day", claim="Deploys go out on "
                                            "Tuesdays.")))
        assert landed.primary is not None
        assert ok(read(store, landed.primary, "gist")) == "Deploys go out on Tuesdays."


def test_the_mcp_read_tool_logs_its_reads(tmp_path: Path) -> None:
    root = mcp_support.make_store(tmp_path)

    async def scenario(session: ClientSession) -> None:
        wrote = mcp_support.data(await session.call_tool("memory_write", {
            "title": "Deploy day", "claim": "Deploys go out on Tuesdays."}))
        for tier in ("gist", "summary", "all"):
            mcp_support.data(await session.call_tool(
                "memory_read", {"path": wrote["path"], "tier": tier}))
        mcp_support.data(await session.call_tool("memory_search", {"query": "deploys"}))
        mcp_support.data(await session.call_tool("memory_related",
                                                 {"path": wrote["path"]}))

    mcp_support.run(root, scenario)
    assert accesses(root) == {"areas/inbox/deploy-day.html": 3}
