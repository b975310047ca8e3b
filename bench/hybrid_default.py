"""bench/hybrid_default: what hybrid by default costs a write and a search at 5,000 memories.

The first 5,000 SciFact abstracts are committed as memory files to a store whose
``.memhtml/config.toml`` records ``embedder = "local"``, checked out as a person's is,
and the vector cache is filled once with ``memhtml embed`` (every passage and every
memory's own vector, as a store kept hybrid has them). The filled cache is kept under
``--cache`` (default ``/tmp/memhtml-bench-hybrid-vectors``) and copied in on later
runs: its keys are content digests, so it is only ever reused for the same texts.

Then, in the same run, each side against the other:

- **cold write**: a fresh ``memhtml write`` process, alternating the store as recorded
  (hybrid: the write embeds its memory in the same command) with
  ``MEMHTML_EMBEDDER=none`` (lexical: the write as it was). Wall and CPU (user +
  system) of each process; the median of ``--runs`` each.
- **MCP**: one server per side (``python -m memhtml.mcp``) driven by the official
  client over stdio: ``memory_search`` over 200 train queries after 20 warm-up calls,
  then ``memory_write`` of ``--writes`` new memories; p50 and p90 round trips.

Targets (issue: hybrid by default): cold write with embedding <= 0.6 s; MCP
``memory_write`` p50 <= 60 ms and ``memory_search`` p50 <= 20 ms, with hybrid on.
Figures are printed, never asserted. The sources are byte-compiled first, as an
installed memhtml's are: with ``PYTHONDONTWRITEBYTECODE`` set (some machines set it) and
nothing compiled, every cold process would compile about 120 modules, some 0.3 s of
each cold write.

    python -m bench.hybrid_default               # build (or reuse) the cache, measure
    python -m bench.hybrid_default --runs 5 --writes 30
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.common import ROOT, compiled, percentile, scifact_dir
from bench.mcp import AT, AUTHOR
from memhtml.adapters.git import PygitService
from memhtml.compose import value_of
from memhtml.contracts import PathChange
from memhtml.eval.beir import memory_path, read_corpus, read_queries, render_doc
from memhtml.store.layout import MARKER, marker_bytes

MEMORIES = 5_000
QUERIES = 200
WARMUP = 20
RUNS = 9
WRITES = 50
CACHE = Path(tempfile.gettempdir()) / "memhtml-bench-hybrid-vectors"
CONFIG = ".memhtml/config.toml"


def env_for(embedder: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMHTML_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    if embedder is not None:
        env["MEMHTML_EMBEDDER"] = embedder
    return env


def build_store(root: Path) -> None:
    """The first MEMORIES abstracts and a config recording the offline model, one
    commit, checked out."""
    docs = list(read_corpus(scifact_dir() / "corpus.jsonl"))[:MEMORIES]
    git = value_of(PygitService.init(root))
    changes = [PathChange(memory_path(d), render_doc(d).encode()) for d in docs]
    changes.append(PathChange(MARKER, marker_bytes("main")))
    changes.append(PathChange(CONFIG, b'embedder = "local"\n'))
    value_of(git.commit("refs/heads/main", None, changes, "import SciFact", AUTHOR, AT))
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=root, check=True)


def memhtml(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memhtml", *args, "--store", str(root)],
                          env=env, capture_output=True, text=True, check=False)


def fill_cache(root: Path, cache: Path) -> None:
    """The store's vectors: copied from ``cache`` when a run left them there, else
    embedded now (and kept there for the next run)."""
    vectors = root / ".git" / "memhtml" / "vectors"
    if cache.is_dir():
        shutil.copytree(cache, vectors, dirs_exist_ok=True)
    start = time.perf_counter()
    done = memhtml(root, env_for(None), "embed", "--json")
    if done.returncode != 0:
        raise SystemExit(f"memhtml embed failed: {done.stderr}")
    print(f"vector cache: memhtml embed {time.perf_counter() - start:.1f} s "
          f"({'reused ' + str(cache) if cache.is_dir() else 'filled from scratch'})")
    if not cache.is_dir():
        shutil.copytree(vectors, cache)


def timed_process(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall and CPU seconds of one child process, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def cold_writes(root: Path, runs: int) -> dict[str, list[tuple[float, float]]]:
    sides = {"hybrid (recorded local)": None, "lexical (MEMHTML_EMBEDDER=none)": "none"}
    out: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    for n in range(runs):
        for name, embedder in sides.items():
            argv = [sys.executable, "-m", "memhtml", "write", "--title", f"Cold write {name[:6]} "
                    f"{n}", "--claim", f"Cold write number {n} on the {name[:6]} side of the "
                    "bench.", "--store", str(root)]
            wall, cpu, code = timed_process(argv, env_for(embedder))
            if code != 0:
                raise SystemExit(f"write failed on {name}")
            out[name].append((wall, cpu))
    return out


async def over_mcp(root: Path, embedder: str | None, queries: list[str], writes: int,
                   tag: str) -> tuple[list[float], list[float], str]:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "memhtml.mcp", "--store", str(root)],
                                   env=env_for(embedder))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for query in queries[:WARMUP]:
            await session.call_tool("memory_search", {"query": query, "limit": 10})
        searches = []
        mode = ""
        for query in queries:
            start = time.perf_counter()
            result = await session.call_tool("memory_search", {"query": query, "limit": 10})
            searches.append(time.perf_counter() - start)
            assert not result.is_error, result
            assert result.structured_content is not None
            mode = str(result.structured_content["mode"])
        wrote = []
        for n in range(writes):
            start = time.perf_counter()
            result = await session.call_tool("memory_write", {
                "title": f"MCP write {tag} {n}",
                "claim": f"MCP write number {n} on the {tag} side of the bench."})
            wrote.append(time.perf_counter() - start)
            assert not result.is_error, result
    return searches, wrote, mode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--writes", type=int, default=WRITES)
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args()
    print(f"load average at the start {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    # An installed memhtml has its bytecode written (pip compiles it): so do the sources
    # here, or with PYTHONDONTWRITEBYTECODE set every cold process would compile them.
    compiled(ROOT)
    queries_by_id = read_queries(scifact_dir() / "queries-train.jsonl")
    queries = [queries_by_id[q] for q in sorted(queries_by_id, key=int)][:QUERIES]
    with tempfile.TemporaryDirectory(prefix="memhtml-bench-hybrid-") as work:
        root = Path(work) / "store"
        build_store(root)
        fill_cache(root, args.cache)
        status = memhtml(root, env_for(None), "status")
        print(next(line for line in status.stdout.splitlines() if line.startswith("vectors")))
        for name, samples in cold_writes(root, args.runs).items():
            walls = [w for w, _ in samples]
            cpus = [c for _, c in samples]
            print(f"cold write, {name:32s} wall median {statistics.median(walls):.3f} s "
                  f"(min {min(walls):.3f}), CPU median {statistics.median(cpus):.3f} s")
        ms = 1000.0
        for tag, embedder in (("hybrid", None), ("lexical", "none")):
            searches, wrote, mode = asyncio.run(
                over_mcp(root, embedder, queries, args.writes, tag))
            print(f"MCP, {tag:8s} server: memory_search ({mode}) p50 "
                  f"{percentile(searches, 0.5) * ms:6.2f} ms, p90 "
                  f"{percentile(searches, 0.9) * ms:6.2f} ms; memory_write p50 "
                  f"{percentile(wrote, 0.5) * ms:6.2f} ms, p90 "
                  f"{percentile(wrote, 0.9) * ms:6.2f} ms")
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
