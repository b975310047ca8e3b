"""bench/mcp: memory_search through the MCP server, measured from the client's side.

The first 5,000 SciFact abstracts are written as memory files and committed in one
commit to a bare repository. The server runs as its own process
(``python -m memhtml.mcp --store DIR``) and is driven over stdio by the SDK's
``ClientSession``, exactly as an MCP client would. After a warm-up, each of the first
200 SciFact train queries is sent once, one at a time, and the round trip is timed
with ``perf_counter`` around ``call_tool``.

Baselines measured in the same run: an MCP ``ping`` round trip (the transport and
event-loop floor, no store involved) and the store's ``search`` door called
in-process on the same repository (the work the tool does, with no protocol).

Target: memory_search p50 <= 20 ms on a warm server.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from returns.pipeline import is_successful

from bench.common import percentile, scifact_dir
from memhtml.adapters.git import PygitService
from memhtml.compose import Settings, open_services, value_of
from memhtml.contracts import PathChange, Signature
from memhtml.eval.beir import memory_path, read_corpus, read_queries, render_doc
from memhtml.store import search
from memhtml.store.layout import MARKER, marker_bytes

MEMORIES = 5_000
QUERIES = 200
WARMUP = 20
TARGET_MS = 20.0
AUTHOR = Signature("bench", "bench@memhtml.invalid")
AT = datetime(2026, 1, 1, tzinfo=UTC)


def build_store(root: Path) -> int:
    """Commit ``MEMORIES`` SciFact abstracts to a bare repository at ``root``."""
    docs = list(read_corpus(scifact_dir() / "corpus.jsonl"))[:MEMORIES]
    git = value_of(PygitService.init(root, bare=True))
    changes = [PathChange(memory_path(d), render_doc(d).encode()) for d in docs]
    # The marker makes the repository a store the commands will open.
    changes.append(PathChange(MARKER, marker_bytes("main")))
    committed = git.commit("refs/heads/main", None, changes, "import SciFact", AUTHOR, AT)
    assert is_successful(committed), committed
    return len(docs)


def in_process(root: Path, queries: list[str]) -> list[float]:
    """The search door on the same store, no protocol: the tool's own work."""
    store = value_of(open_services(Settings(store=root))).store()
    store.head()
    for query in queries[:WARMUP]:
        search(store, query, limit=10)
    times = []
    for query in queries:
        start = time.perf_counter()
        found = search(store, query, limit=10)
        times.append(time.perf_counter() - start)
        assert is_successful(found)
    return times


async def over_mcp(root: Path, queries: list[str]) -> tuple[float, list[float], list[float]]:
    """Seconds to the first answer (cold start), ping round trips, search round trips."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memhtml.mcp", "--store", str(root)])
    start = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        status = await session.call_tool("memory_status", {})
        cold = time.perf_counter() - start
        assert not status.is_error, status
        assert status.structured_content is not None
        assert status.structured_content["memories"] == MEMORIES, status.structured_content
        for query in queries[:WARMUP]:
            await session.call_tool("memory_search", {"query": query, "limit": 10})
        pings = []
        for _ in range(QUERIES):
            start = time.perf_counter()
            await session.send_ping()
            pings.append(time.perf_counter() - start)
        searches = []
        for query in queries:
            start = time.perf_counter()
            result = await session.call_tool("memory_search", {"query": query, "limit": 10})
            searches.append(time.perf_counter() - start)
            assert not result.is_error, result
    return cold, pings, searches


def main() -> None:
    queries_by_id = read_queries(scifact_dir() / "queries-train.jsonl")
    queries = [queries_by_id[q] for q in sorted(queries_by_id, key=int)][:QUERIES]
    root = Path(tempfile.mkdtemp(prefix="memhtml-bench-mcp-"))
    start = time.perf_counter()
    count = build_store(root)
    built = time.perf_counter() - start
    cold, pings, searches = asyncio.run(over_mcp(root, queries))
    direct = in_process(root, queries)

    ms = 1000.0
    search_p50 = percentile(searches, 0.5) * ms
    ping_p50 = percentile(pings, 0.5) * ms
    direct_p50 = percentile(direct, 0.5) * ms
    print(f"store: {count} SciFact memories in one commit (built in {built:.1f} s); "
          f"{len(queries)} train queries, {WARMUP} warm-up calls first")
    print(f"server start to first answer (spawn, handshake, head load)  {cold:6.2f} s")
    print(f"MCP ping round trip p50 (transport floor)             {ping_p50:7.3f} ms")
    print(f"store search door in-process p50 (no protocol)        {direct_p50:7.3f} ms")
    print(f"memory_search over stdio p50                          {search_p50:7.3f} ms   "
          f"x{search_p50 / ping_p50:4.1f} of ping, x{search_p50 / direct_p50:4.1f} of "
          f"in-process; target <= {TARGET_MS:.0f} ms: "
          f"{'met' if search_p50 <= TARGET_MS else 'MISSED'}")
    print(f"memory_search over stdio p95                          "
          f"{percentile(searches, 0.95) * ms:7.3f} ms")


if __name__ == "__main__":
    main()
