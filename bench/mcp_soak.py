"""bench/mcp_soak: the MCP server's memory over a long session of mixed calls.

    python -m bench.mcp_soak                       # 10,000 calls on 4,000 memories
    python -m bench.mcp_soak --calls 2000 --memories 1000 --every 250
    python -m bench.mcp_soak --http-clients 4      # over HTTP, 4 sessions at once

A server that an agent's host keeps running for days must not grow with the calls it
answers. The store is a checkout holding SciFact's first ``--memories`` abstracts (read
from ``../shared/data/scifact``, never copied), committed with the store marker and
checked out as a person's clone. The server runs as its own process
(``python -m memhtml.mcp --store DIR``) and is driven over stdio by the SDK's
``ClientSession``, as a host would, with a fixed, seeded mix of every tool
(``MIX``): searches, reads at each tier, status, listings, neighbourhoods, and
writes, labels, links, corrections, archives and tasks, each write one commit in the
checkout (and so one write mark watched by every later call).

The server's resident set (``VmRSS`` of ``/proc/<pid>/status``) is read after a
warm-up of ``WARMUP`` calls (the head parsed, the lexical index built, the imports
done, the allocator's arenas in use) and then every ``--every`` calls. What is
printed: the figures at each step, and the growth from the warm-up to the end, with
its bound (``BOUND_MB``). The integration test ``test_mcp_soak`` runs the same mix,
shorter, on a small store, and asserts the bound.

With ``--http-clients N`` the server is ``memhtml mcp --http`` instead, a shared one:
N sessions over the SDK's streamable-HTTP client, each round of calls one per session
at the same time, through the server's one store gate. The mix is still drawn from
one seeded generator, but which of a round's calls lands first varies, so a call can
find a path another just archived (counted as refused).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult

from memhtml.adapters.git import PygitService
from memhtml.compose import value_of
from memhtml.contracts import PathChange, Signature
from memhtml.eval.beir import BeirDoc, memory_path, read_corpus, read_queries, render_doc
from memhtml.store.layout import MARKER, marker_bytes

MEMORIES = 4_000
CALLS = 10_000
WARMUP = 300
EVERY = 1_000
BOUND_MB = 50.0
SEED = 20260529
HTTP_TOKEN = "bench-soak-" + "t" * 32
"""The bearer token the HTTP server is started with (``--http-clients``)."""
AUTHOR = Signature("bench", "bench@memhtml.invalid")
AT = datetime(2026, 1, 1, tzinfo=UTC)

MIX: tuple[tuple[str, int], ...] = (
    ("memory_search", 30),
    ("memory_read", 20),
    ("memory_related", 4),
    ("memory_context", 4),
    ("memory_list", 4),
    ("memory_recent", 4),
    ("memory_status", 3),
    ("task_list", 3),
    ("memory_write", 12),
    ("memory_label", 6),
    ("memory_link", 4),
    ("memory_correct", 2),
    ("memory_archive", 1),
    ("task_add", 2),
    ("task_status", 1),
)
"""Tool names and their weights: reads outnumber writes about three to one, as in an
agent's session (search before answering, read a hit, write what was learned)."""


def checkout_store(root: Path, docs: list[tuple[str, bytes]]) -> None:
    """A person's clone at ``root`` holding ``docs`` (path, file bytes) in one commit:
    the repository, the commit with the store marker, and the files checked out."""
    git = value_of(PygitService.init(root))
    changes = [PathChange(path, content) for path, content in docs]
    changes.append(PathChange(MARKER, marker_bytes("main")))
    value_of(git.commit("refs/heads/main", None, changes, "import memories", AUTHOR, AT))
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=root, check=True)


def scifact_docs(data: Path, count: int) -> list[tuple[str, bytes]]:
    return [(memory_path(d), render_doc(d).encode())
            for d in list(read_corpus(data / "corpus.jsonl"))[:count]]


WORDS = ("kettle printer deploy staging release rollback invoice budget meeting office "
         "garden coffee sensor battery network latency cache index schema migration "
         "backup restore server client token session ticket review audit policy badge "
         "laptop monitor cable router firewall certificate domain mailbox calendar").split()


def generated_docs(count: int, seed: int = SEED) -> list[tuple[str, bytes]]:
    """``count`` memories of sentences drawn from ``WORDS`` (seeded): a store for the
    short form of the soak, which runs where SciFact is not."""
    rng = random.Random(seed)

    def sentence() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize() + "."

    docs = [BeirDoc(f"g{i}", " ".join(rng.sample(WORDS, 3)).title(),
                    " ".join(sentence() for _ in range(rng.randint(2, 5))))
            for i in range(count)]
    return [(memory_path(d), render_doc(d).encode()) for d in docs]


def generated_queries(count: int, seed: int = SEED) -> list[str]:
    rng = random.Random(seed + 1)
    return [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(count)]


def server_environment() -> dict[str, str]:
    """The SDK's default environment for the server, and this process's
    ``PYTHONPATH``: the server imports the same memhtml as the client side does (a
    source tree on the path, not only the installed one)."""
    env = get_default_environment()
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def rss_kb(pid: int) -> int:
    """The resident set of process ``pid`` in KiB, as the kernel counts it (C
    allocations included, which ``tracemalloc`` never sees)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def server_pid(marker: str) -> int:
    """The one child of this process whose command line holds ``marker``: the server
    ``stdio_client`` spawned (the SDK does not hand its process out)."""
    found = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for child in (task / "children").read_text().split():
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
            if marker.encode() in cmdline:
                found.append(int(child))
    if len(found) != 1:
        raise RuntimeError(f"expected one server process, found {found}")
    return found[0]


@dataclass
class Soak:
    """The seeded mix: which tool next, with arguments drawn from what the store holds
    (the paths it started with, and those the session wrote)."""

    queries: list[str]
    paths: list[str]
    rng: random.Random
    tasks: list[str] = field(default_factory=list)
    written: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    only: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names, weights = zip(*[(n, w) for n, w in MIX if not self.only or n in self.only],
                             strict=True)
        self._names = list(names)
        self._weights = list(weights)

    def _path(self) -> str:
        return self.rng.choice(self.paths)

    def next_call(self) -> tuple[str, dict[str, Any]]:
        name = self.rng.choices(self._names, self._weights)[0]
        rng = self.rng
        n = self.written
        args: dict[str, Any]
        match name:
            case "memory_search":
                args = {"query": rng.choice(self.queries), "limit": 10}
            case "memory_read":
                args = {"path": self._path(),
                        "tier": rng.choice(["gist", "summary", "details", "all"])}
            case "memory_related" | "memory_context":
                args = {"path": self._path()}
            case "memory_list":
                args = {"dir": rng.choice(["", "resources/", "resources/beir/",
                                           self._path().rpartition("/")[0] + "/"])}
            case "memory_recent":
                args = {"limit": 10}
            case "memory_status" | "task_list":
                args = {}
            case "memory_write":
                args = {"title": f"soak note {n}", "claim": f"Soak fact number {n} holds "
                        f"for {rng.choice(self.queries)[:60]}",
                        "entity": [f"topic:t{n % 37}"], "tag": ["soak"]}
            case "memory_label":
                args = {"path": self._path(), "entity": f"topic:l{rng.randrange(50)}"}
            case "memory_link":
                source, target = rng.sample(self.paths, 2)
                args = {"path": source, "rel": "relates_to", "target": target}
            case "memory_correct":
                args = {"path": self._path(), "title": f"soak correction {n}",
                        "claim": f"Corrected fact {n}."}
            case "memory_archive":
                args = {"path": self._path()}
            case "task_add":
                args = {"title": f"soak task {n}", "claim": f"Do thing {n}."}
            case "task_status":
                if not self.tasks:
                    return "task_list", {}
                args = {"path": rng.choice(self.tasks),
                        "status": rng.choice(["doing", "blocked", "done"])}
            case _:
                raise AssertionError(name)
        return name, args

    def answered(self, name: str, args: dict[str, Any], result: CallToolResult) -> None:
        """Keep the paths the session creates and retires, so later calls name live
        memories; a refusal (a path archived by an earlier call) is counted."""
        self.counts[name] = self.counts.get(name, 0) + 1
        if result.is_error:
            self.refused[name] = self.refused.get(name, 0) + 1
            return
        data = result.structured_content or {}
        if name in ("memory_write", "memory_correct", "task_add"):
            self.written += 1
            path = data.get("path")
            if isinstance(path, str) and path:
                (self.tasks if name == "task_add" else self.paths).append(path)
        if name in ("memory_correct", "memory_archive") and args["path"] in self.paths:
            self.paths.remove(args["path"])
        if name == "task_status" and args["status"] == "done":
            self.tasks.remove(args["path"])


@dataclass(frozen=True)
class Reading:
    calls: int
    rss_kb: int
    seconds: float


@asynccontextmanager
async def _stdio_sessions(root: Path) -> AsyncIterator[tuple[list[ClientSession], int]]:
    """One session with ``python -m memhtml.mcp --store ROOT`` over stdio, and its pid."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memhtml.mcp", "--store", str(root)],
        cwd=str(root.parent), env=server_environment())
    with (root.parent / "server.log").open("w", encoding="utf-8") as log:
        async with stdio_client(params, errlog=log) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield [session], server_pid(str(root))


@asynccontextmanager
async def _http_sessions(root: Path, clients: int
                         ) -> AsyncIterator[tuple[list[ClientSession], int]]:
    """``clients`` sessions with one ``python -m memhtml.mcp --store ROOT --http`` on a
    free loopback port (the SDK's streamable-HTTP client), and the server's pid; the
    server is stopped with SIGTERM at the end."""
    log_path = root.parent / "server.log"
    env = {**server_environment(), "MEMHTML_MCP_TOKEN": HTTP_TOKEN}
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "memhtml.mcp", "--store", str(root), "--http", "127.0.0.1:0"],
            cwd=root.parent, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=log)
    try:
        url = _served_url(log_path, process)
        headers = {"Authorization": f"Bearer {HTTP_TOKEN}"}
        async with AsyncExitStack() as stack:
            sessions = []
            for _ in range(clients):
                http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
                read, write = await stack.enter_async_context(
                    streamable_http_client(url, http_client=http))
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                sessions.append(session)
            yield sessions, process.pid
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def _served_url(log: Path, process: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = re.search(r" at (http://\S+/mcp);", log.read_text(errors="replace"))
        if found:
            return found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError(f"the HTTP server did not start: {log.read_text(errors='replace')}")


async def soak(root: Path, soak_mix: Soak, calls: int, warmup: int, every: int,
               report: Callable[[Reading], None] = lambda _: None,
               http_clients: int = 0) -> list[Reading]:
    """Serve ``root``, make ``warmup`` calls of the mix, then ``calls`` more, reading
    the server's RSS after the warm-up and every ``every`` calls (and at the end).
    With ``http_clients``, over HTTP: that many sessions, each round of calls one per
    session at once (``every`` then counts in rounds' worth of calls)."""
    readings: list[Reading] = []
    opened = _http_sessions(root, http_clients) if http_clients else _stdio_sessions(root)
    async with opened as (sessions, pid):
        start = time.perf_counter()

        async def one(session: ClientSession) -> None:
            name, args = soak_mix.next_call()
            result = await session.call_tool(name, args)
            soak_mix.answered(name, args, result)

        for _ in range(warmup):
            await one(sessions[0])
        readings.append(Reading(0, rss_kb(pid), time.perf_counter() - start))
        report(readings[-1])
        done = 0
        while done < calls:
            batch = sessions[:calls - done]
            await asyncio.gather(*(one(session) for session in batch))
            before, done = done, done + len(batch)
            if done // every > before // every or done == calls:
                readings.append(Reading(done, rss_kb(pid), time.perf_counter() - start))
                report(readings[-1])
    return readings


def run_soak(root: Path, soak_mix: Soak, calls: int, warmup: int, every: int,
             report: Callable[[Reading], None] = lambda _: None,
             http_clients: int = 0) -> list[Reading]:
    return asyncio.run(soak(root, soak_mix, calls, warmup, every, report, http_clients))


def _print(reading: Reading) -> None:
    print(f"  after {reading.calls:6d} calls  RSS {reading.rss_kb / 1024:8.1f} MB  "
          f"({reading.seconds:6.1f} s)", flush=True)


def main() -> None:
    from bench.common import scifact_dir

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=MEMORIES)
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--warmup", type=int, default=WARMUP)
    parser.add_argument("--every", type=int, default=EVERY)
    parser.add_argument("--only", default="",
                        help="comma-separated tool names: a mix of these alone")
    parser.add_argument("--http-clients", type=int, default=0,
                        help="serve over HTTP (memhtml mcp --http) to this many sessions "
                             "calling at once, instead of one over stdio")
    options = parser.parse_args()
    data = scifact_dir()
    work = Path(tempfile.mkdtemp(prefix="memhtml-bench-soak-"))
    root = work / "store"
    root.mkdir()
    docs = scifact_docs(data, options.memories)
    checkout_store(root, docs)
    queries = sorted(read_queries(data / "queries-train.jsonl").values())
    only = tuple(options.only.split(",")) if options.only else ()
    mix = Soak(queries=queries, paths=[p for p, _ in docs], rng=random.Random(SEED),
               only=only)
    print(f"store: {len(docs)} SciFact memories, a checkout at {root}; "
          f"{options.warmup} warm-up calls, then {options.calls} mixed calls")
    if options.http_clients:
        print(f"over HTTP: {options.http_clients} sessions, one call each at once")
    readings = run_soak(root, mix, options.calls, options.warmup, options.every, _print,
                        options.http_clients)
    growth = (readings[-1].rss_kb - readings[0].rss_kb) / 1024
    print("calls by tool: " + ", ".join(f"{k} {v}" for k, v in sorted(mix.counts.items())))
    print("refused by tool: " + (", ".join(f"{k} {v}" for k, v in sorted(mix.refused.items()))
                                 or "none"))
    print(f"RSS growth after warm-up over {options.calls} calls: {growth:.1f} MB "
          f"(bound {BOUND_MB:.0f} MB: {'met' if growth < BOUND_MB else 'MISSED'})")
    # What the store itself grew by: a fresh server on the store the session left,
    # after the same warm-up. The long-lived server's excess over it is what serving
    # kept; the fresh server's excess over the first is the data the calls added.
    fresh_mix = Soak(queries=queries, paths=list(mix.paths), rng=random.Random(SEED + 1),
                     tasks=list(mix.tasks), written=mix.written, only=only)
    fresh = run_soak(root, fresh_mix, 0, options.warmup, 1, lambda _: None,
                     options.http_clients)[0].rss_kb / 1024
    end = readings[-1].rss_kb / 1024
    print(f"a fresh server on the store it left, after {options.warmup} warm-up calls: "
          f"{fresh:.1f} MB (the store's own growth {fresh - readings[0].rss_kb / 1024:+.1f} MB; "
          f"the long-lived server {end - fresh:+.1f} MB beside it)")


if __name__ == "__main__":
    main()
