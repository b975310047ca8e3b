"""``memhtml mcp --http``: the real server process on a loopback port, over a real store,
driven by the official client's streamable-HTTP transport and by plain HTTP requests.

What is checked: the tools and their refusals are the stdio server's; a write is
read and found; a request without the bearer token, or with a wrong one, is answered
401 and commits nothing, even on a live session; Host and Origin that name another
server are refused, and all three checks hold for the SDK's session-less revision
too; several clients writing at once each land every write exactly once, one commit
each; a stop during writes loses no acknowledged one; the token file is the owner's
alone and gone after a stop; SIGTERM and SIGINT end the process cleanly; addresses
and tokens that cannot be used are refused before anything is served.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import io
import json
import os
import re
import signal
import socket
import stat
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.integration import warm_cli
from tests.integration.cli.cli_support import call
from tests.integration.mcp.mcp_support import (
    SCENARIO_TIMEOUT_S,
    data,
    git_cli,
    make_store,
    refused,
    served,
    server_environment,
)
from tests.integration.sync.sync_support import git as sync_git

README = Path(__file__).resolve().parents[3] / "README.md"
TOKEN = "test-token-" + "x" * 40
"""A fixed token for the shared server (``MEMHTML_MCP_TOKEN``)."""
CLIENTS = 4
WRITES_EACH = 10
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
_START = re.compile(r" at (http://(\S+)/mcp); bearer token (?:in (\S+)|from MEMHTML_MCP_TOKEN)")
ACCEPT = "application/json, text/event-stream"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "plain", "version": "1"}}}


@dataclass(frozen=True)
class HttpServer:
    """A running ``memhtml mcp --http``: its endpoint, authority, token and store."""

    url: str
    authority: str
    token: str
    store: Path
    log: Path
    process: subprocess.Popen[bytes]
    token_file: Path | None


def start_http(root: Path, env: dict[str, str] | None = None,
               address: str = "127.0.0.1:0") -> HttpServer:
    """``python -m memhtml.mcp --store ROOT --http ADDRESS`` as its own process (forked
    warm, as the stdio tests start theirs); its endpoint read from the line it prints."""
    environment = {**server_environment(), **(env or {})}
    command, args = warm_cli.launcher("memhtml.mcp", "--store", str(root), "--http", address,
                                      env=environment)
    log = root.parent / "http-server.log"
    with log.open("wb") as err:
        process = subprocess.Popen([command, *args], cwd=root.parent, env=environment,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=err)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        found = _START.search(log.read_text(errors="replace"))
        if found:
            url, authority, file = found.groups()
            token_file = None if file is None else Path(file)
            token = (environment["MEMHTML_MCP_TOKEN"] if token_file is None
                     else token_file.read_text(encoding="ascii").strip())
            return HttpServer(url, authority, token, root, log, process, token_file)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    process.wait()
    raise AssertionError(f"memhtml mcp --http did not start: {log.read_text(errors='replace')}")


def stop(server: HttpServer, number: int = signal.SIGTERM) -> int:
    """Signal the server and wait for it to exit; its exit code."""
    server.process.send_signal(number)
    try:
        return server.process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:  # pragma: no cover - a hung stop is the failure
        server.process.kill()
        server.process.wait()
        raise


@contextmanager
def running(root: Path, env: dict[str, str] | None = None) -> Iterator[HttpServer]:
    server = start_http(root, env)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            stop(server)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One server for the module's checks, its token fixed by ``MEMHTML_MCP_TOKEN``."""
    root = make_store(tmp_path_factory.mktemp("http"))
    with running(root, {"MEMHTML_MCP_TOKEN": TOKEN}) as server:
        yield server


@asynccontextmanager
async def session_at(server: HttpServer, token: str | None = None
                     ) -> AsyncIterator[ClientSession]:
    """A client session over streamable HTTP, sending ``token`` (the server's own by
    default) as the bearer token."""
    headers = {"Authorization": f"Bearer {server.token if token is None else token}"}
    async with create_mcp_http_client(headers=headers) as client, \
            streamable_http_client(server.url, http_client=client) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def run_async(main: Any) -> Any:
    try:
        return asyncio.run(asyncio.wait_for(main, SCENARIO_TIMEOUT_S))
    except BaseExceptionGroup as group:
        raise _first_leaf(group) from None


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: str


def post(server: HttpServer, message: dict[str, Any], headers: dict[str, str]) -> Answer:
    """One plain HTTP POST of ``message`` to the endpoint with exactly ``headers`` (and
    Host, unless they name one), read to its end."""
    host, port = server.authority.rsplit(":", 1)
    connection = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=30)
    try:
        body = json.dumps(message).encode()
        connection.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
        sent = {"Host": server.authority, "Content-Type": "application/json", "Accept": ACCEPT,
                "Content-Length": str(len(body)), **headers}
        for name, value in sent.items():
            for one in value.split("\n"):
                connection.putheader(name, one)
        connection.endheaders(body)
        response = connection.getresponse()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()},
                      response.read().decode("utf-8", "replace"))
    finally:
        connection.close()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def tip(root: Path) -> str:
    return git_cli(root, "rev-parse", "HEAD").strip()


def write_call(claim: str, call_id: int = 3) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": {
        "name": "memory_write", "arguments": {"title": claim, "claim": claim}}}


def plain_session(server: HttpServer) -> str:
    """A session opened by plain requests with the right token: its id."""
    opened = post(server, INITIALIZE, bearer(server.token))
    assert opened.status == 200, opened
    session = opened.headers["mcp-session-id"]
    done = post(server, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {**bearer(server.token), "Mcp-Session-Id": session,
                 "Mcp-Protocol-Version": "2025-06-18"})
    assert done.status == 202, done
    return session


def test_the_tools_and_refusals_are_the_stdio_servers(shared: HttpServer, tmp_path: Path
                                                      ) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_write", {"title": "t", "claim": "c", "memory_type": "semantic"}),
        ("memory_read", {"path": "areas/inbox/x.html", "tier": "everything"}),
        ("memory_read", {"path": "areas/inbox/nothing-here.html"}),
        ("memory_forget", {"path": "x.html"}),
    ]

    async def listing(session: ClientSession) -> tuple[list[dict[str, Any]], list[str]]:
        tools = (await session.list_tools()).tools
        texts = [refused(await session.call_tool(name, args)) for name, args in calls]
        return [tool.model_dump(mode="json") for tool in tools], texts

    async def both() -> tuple[Any, Any]:
        async with session_at(shared) as over_http:
            on_http = await listing(over_http)
        async with served(make_store(tmp_path)) as over_stdio:
            on_stdio = await listing(over_stdio)
        return on_http, on_stdio

    (http_tools, http_refusals), (stdio_tools, stdio_refusals) = run_async(both())
    assert len(http_tools) == 16
    assert http_tools == stdio_tools
    assert http_refusals == stdio_refusals
    assert [text.split(":", 1)[0] for text in http_refusals] == [
        "ERR_UNKNOWN_ARGUMENT", "ERR_INVALID_ARGUMENTS", "ERR_NOT_FOUND", "ERR_UNKNOWN_TOOL"]


def test_a_write_is_read_and_found(shared: HttpServer) -> None:
    claim = "The staging database restarts every Sunday at three."

    async def scenario() -> None:
        async with session_at(shared) as session:
            wrote = data(await session.call_tool(
                "memory_write", {"title": "Staging restarts", "claim": claim, "tag": ["ops"]}))
            path = wrote["path"]
            read = data(await session.call_tool("memory_read", {"path": path, "tier": "gist"}))
            assert read["text"] == claim
            hits = data(await session.call_tool("memory_search", {"query": "staging sunday"}))
            assert [hit["path"] for hit in hits["hits"]] == [path]
            assert wrote["commit"] == tip(shared.store)

    run_async(scenario())
    assert claim in git_cli(shared.store, "show", "HEAD")


@pytest.mark.parametrize("headers", [
    {},
    bearer("wrong-" + TOKEN[6:]),
    bearer(TOKEN + "x"),
    bearer(TOKEN[:-1]),
    {"Authorization": f"Basic {TOKEN}"},
    {"Authorization": TOKEN},
    {"Authorization": "Bearer"},
    {"Authorization": f"Bearer {TOKEN}\nBearer {TOKEN}"},
], ids=["none", "wrong", "longer", "shorter", "basic", "no-scheme", "empty", "twice"])
def test_without_the_token_nothing_is_touched(shared: HttpServer, headers: dict[str, str]
                                              ) -> None:
    session = plain_session(shared)
    before = tip(shared.store)
    on_session = {"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
    claim = f"Refused write {sorted(headers.items())!r}"

    answer = post(shared, write_call(claim), {**headers, **on_session})
    fresh = post(shared, INITIALIZE, headers)

    for refusal in (answer, fresh):
        assert refusal.status == 401, refusal
        assert refusal.headers["www-authenticate"] == 'Bearer realm="memhtml"'
        assert "mcp-session-id" not in refusal.headers
        assert TOKEN not in refusal.body
    assert tip(shared.store) == before
    # The same request with the token writes: the token alone was missing.
    landed = post(shared, write_call(claim), {**bearer(TOKEN), **on_session})
    assert landed.status == 200, landed
    assert tip(shared.store) != before
    assert TOKEN not in shared.log.read_text(errors="replace")


@pytest.mark.parametrize(("headers", "status"), [
    ({"Host": "evil.example"}, 421),
    ({"Host": "evil.example:{port}"}, 421),
    ({"Host": "127.0.0.2:{port}"}, 421),
    ({"Origin": "http://evil.example"}, 403),
    ({"Origin": "http://127.0.0.1:1"}, 403),
    ({"Host": "localhost:{port}", "Origin": "http://localhost:{port}"}, 200),
    ({"Origin": "http://127.0.0.1:{port}"}, 200),
], ids=["host", "host-port", "host-other-loopback", "origin", "origin-port",
        "localhost", "own-origin"])
def test_host_and_origin_must_name_this_server(shared: HttpServer, headers: dict[str, str],
                                               status: int) -> None:
    port = shared.authority.rsplit(":", 1)[1]
    named = {name: value.format(port=port) for name, value in headers.items()}
    before = tip(shared.store)
    answer = post(shared, INITIALIZE, {**bearer(TOKEN), **named})
    assert answer.status == status, answer
    assert ("mcp-session-id" in answer.headers) == (status == 200)
    assert tip(shared.store) == before


def test_only_the_address_given_is_bound(shared: HttpServer) -> None:
    """127.0.0.2 is loopback too on Linux: a server bound to every address would
    answer there."""
    port = int(shared.authority.rsplit(":", 1)[1])
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(("127.0.0.2", port))


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here")
def test_ipv6_loopback_is_served(tmp_path: Path) -> None:
    root = make_store(tmp_path)
    server = start_http(root, {"MEMHTML_MCP_TOKEN": TOKEN}, address="[::1]:0")
    try:
        assert server.authority.startswith("[::1]:")

        async def scenario() -> list[str]:
            async with session_at(server) as session:
                return [tool.name for tool in (await session.list_tools()).tools]

        assert "memory_search" in run_async(scenario())
        port = server.authority.rsplit(":", 1)[1]
        assert post(server, INITIALIZE, {**bearer(TOKEN), "Host": f"localhost:{port}"}
                    ).status == 200
        assert post(server, INITIALIZE, {**bearer(TOKEN), "Host": f"127.0.0.1:{port}"}
                    ).status == 421
    finally:
        assert stop(server) == 0


MODERN = "2026-07-28"
"""A protocol revision of the session-less era: each POST stands alone, no session."""


@pytest.mark.parametrize(("headers", "status"), [
    ({}, 401),
    ({**bearer(TOKEN), "Host": "evil.example"}, 421),
    ({**bearer(TOKEN), "Origin": "http://evil.example"}, 403),
], ids=["no-token", "host", "origin"])
def test_a_sessionless_call_passes_the_same_checks(shared: HttpServer, headers: dict[str, str],
                                                   status: int) -> None:
    """The SDK also serves the newer session-less revision, where one POST is a whole
    call: the token, Host and Origin hold there too, and the same call with them lands."""
    claim = f"A session-less write with {sorted(headers)} lands only when allowed."
    call = write_call(claim)
    call["params"]["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                               "io.modelcontextprotocol/clientCapabilities": {}}
    era = {"Mcp-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
           "Mcp-Name": "memory_write"}
    before = tip(shared.store)
    refusal = post(shared, call, {**era, **headers})
    assert refusal.status == status, refusal
    assert tip(shared.store) == before
    landed = post(shared, call, {**era, **bearer(TOKEN)})
    assert landed.status == 200, landed
    assert tip(shared.store) != before


def test_concurrent_clients_each_land_every_write_once(shared: HttpServer) -> None:
    before = tip(shared.store)

    def claim(client: int, n: int) -> str:
        return f"Concurrent client {client} wrote fact number {n} of its batch."

    async def client(number: int) -> list[dict[str, Any]]:
        async with session_at(shared) as session:
            results = await asyncio.gather(*(
                session.call_tool("memory_write", {"title": f"Client {number} fact {n}",
                                                   "claim": claim(number, n)})
                for n in range(WRITES_EACH)))
            return [data(result) for result in results]

    async def everyone() -> list[list[dict[str, Any]]]:
        return list(await asyncio.gather(*(client(c) for c in range(CLIENTS))))

    wrote = [w for each in run_async(everyone()) for w in each]

    total = CLIENTS * WRITES_EACH
    commits = git_cli(shared.store, "rev-list", f"{before}..HEAD").split()
    assert len(commits) == total
    assert sorted(w["commit"] for w in wrote) == sorted(commits)
    paths = [w["path"] for w in wrote]
    assert len(set(paths)) == total
    for commit in commits:
        changed = git_cli(shared.store, "diff-tree", "--no-commit-id", "--name-only", "-r",
                          commit).split()
        assert len([p for p in changed if p.endswith(".html")]) == 1, (commit, changed)
    tree = git_cli(shared.store, "ls-tree", "-r", "--name-only", "HEAD").split()
    everything = "\n".join(git_cli(shared.store, "show", f"HEAD:{path}")
                           for path in tree if path.endswith(".html"))
    for c in range(CLIENTS):
        for n in range(WRITES_EACH):
            assert everything.count(f"<mark>{claim(c, n)}</mark>") == 1, (c, n)


def test_a_stop_during_writes_loses_no_acknowledged_write(tmp_path: Path) -> None:
    """SIGTERM while writes are in flight: every write whose commit the server sent
    back is in the history afterwards, and the process still exits cleanly. (Which
    writes are acknowledged depends on timing; the law holds for any outcome.)"""
    root = make_store(tmp_path)
    server = start_http(root, {"MEMHTML_MCP_TOKEN": TOKEN})
    before = tip(root)
    acknowledged: list[str] = []

    async def writer(number: int, first: asyncio.Event) -> None:
        with contextlib.suppress(Exception):
            async with session_at(server) as session:
                for n in range(WRITES_EACH):
                    result = await session.call_tool("memory_write", {
                        "title": f"Stopping {number} {n}",
                        "claim": f"Writer {number} wrote fact {n} while the server stopped."})
                    acknowledged.append(data(result)["commit"])
                    first.set()

    async def scenario() -> None:
        first = asyncio.Event()
        tasks = [asyncio.create_task(writer(c, first)) for c in range(2)]
        await first.wait()
        server.process.send_signal(signal.SIGTERM)
        await asyncio.gather(*tasks, return_exceptions=True)

    try:
        run_async(scenario())
        code = server.process.wait(timeout=STOP_TIMEOUT_S)
    finally:
        if server.process.poll() is None:  # pragma: no cover - a hung stop is the failure
            server.process.kill()
            server.process.wait()
    assert code == 0, server.log.read_text(errors="replace")
    commits = set(git_cli(root, "rev-list", f"{before}..HEAD").split())
    assert acknowledged and set(acknowledged) <= commits
    git_cli(root, "fsck", "--no-progress")


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT], ids=["term", "int"])
def test_a_made_token_is_the_owners_alone_and_a_signal_stops_cleanly(
        tmp_path: Path, number: int) -> None:
    root = make_store(tmp_path)
    env = {"MEMHTML_MCP_TOKEN": ""}
    with running(root, env) as server:
        assert server.token_file is not None
        assert server.token_file.parent == root / ".git" / "memhtml"
        assert stat.S_IMODE(os.stat(server.token_file).st_mode) == 0o600
        assert len(server.token) >= 32

        async def scenario() -> str:
            async with session_at(server) as session:
                wrote = data(await session.call_tool(
                    "memory_write", {"title": "Stop", "claim": "The server stops cleanly."}))
                return str(wrote["commit"])

        commit = run_async(scenario())
        assert tip(root) == commit
        assert "'memory_write'" in readme_client(server)
        assert post(server, INITIALIZE, bearer(TOKEN)).status == 401
        code = stop(server, number)
        log = server.log.read_text(errors="replace")
        assert code == 0, log
        assert not server.token_file.exists()
        assert server.token not in log
        assert "Traceback" not in log


def test_a_stop_pushes_the_write_still_waiting(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """With ``sync_remote`` and a push delay longer than the run, a write is still
    waiting when SIGTERM comes: the stop pushes it (uvicorn would have re-raised the
    signal and ended the process before that)."""
    remote = tmp_path / "remote.git"
    pygit2.init_repository(str(remote), bare=True, initial_head="main")
    root = tmp_path / "store"
    assert call(capsys, "init", str(root), "--json")[0] == 0
    sync_git(root, "remote", "add", "origin", str(remote))
    assert call(capsys, "sync", "--store", str(root), "--json")[0] == 0
    env = {"MEMHTML_MCP_TOKEN": TOKEN, "MEMHTML_SYNC_REMOTE": "origin",
           "MEMHTML_SYNC_SECONDS": "3600"}
    with running(root, env) as server:

        async def scenario() -> str:
            async with session_at(server) as session:
                wrote = data(await session.call_tool("memory_write", {
                    "title": "Pushed at stop", "claim": "A stop pushes what waits."}))
                return str(wrote["commit"])

        commit = run_async(scenario())
        assert sync_git(remote, "rev-parse", "main").strip() != commit
        assert stop(server) == 0, server.log.read_text(errors="replace")
    assert sync_git(remote, "rev-parse", "main").strip() == commit


def readme_client(server: HttpServer) -> str:
    """What the README's client example prints, run as written against ``server``."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### MCP over HTTP"):]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None
    assert server.token_file is not None
    code = (found.group(1).replace("http://127.0.0.1:8765/mcp", server.url)
            .replace("/path/to/store/.git/memhtml/mcp-http-8765.token", str(server.token_file)))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {})
    return printed.getvalue()


@pytest.mark.parametrize(("argv", "env", "says"), [
    (["--http", "192.0.2.7:8765"], {}, "192.0.2.7 is not a loopback address"),
    (["--http", "0.0.0.0:8765", "--allow-remote"], {}, "listens on every interface"),
    (["--allow-remote"], {}, "--allow-remote goes with --http"),
    (["--http", "127.0.0.1:0"], {"MEMHTML_MCP_TOKEN": "short-secret"}, "at least 32"),
], ids=["remote", "wildcard", "alone", "short"])
def test_what_cannot_be_served_is_refused_at_start(tmp_path: Path, argv: list[str],
                                                   env: dict[str, str], says: str) -> None:
    """Through the command as a person runs it (every shape of address and token is
    in tests/unit/mcpserver): exit 2, the reason, the value of a token never shown,
    no token file written, nothing committed."""
    root = make_store(tmp_path)
    before = tip(root)
    done = warm_cli.memhtml("mcp", "--store", str(root), *argv,
                            env={**server_environment(), **env})
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert says in done.stderr, done.stderr
    for value in env.values():
        assert value not in done.stderr
    assert not list((root / ".git" / "memhtml").glob("mcp-http-*"))
    assert tip(root) == before
