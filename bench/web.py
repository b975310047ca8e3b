"""bench/web: ``memhtml serve``'s pages and search at 5,000 and 100,000 memories.

    python -m bench.web                          # 5,000 and 100,000
    python -m bench.web --sizes 5000 --requests 100

The store of N memories is ``bench.scale``'s corpus (SciFact's first abstracts, then
generated ones), committed with the store marker through the pygit2 adapter and
checked out as a person's clone. ``memhtml serve --port 0`` runs on it as its own
process (lexical: ``MEMHTML_EMBEDDER=none``, so the figure is the app's own and not
the model's); the bench signs in with the start URL as a browser would and then asks,
over loopback with ``http.client`` (one connection a request, as a page load opens):

- the first request after start (the head loaded cold, or from the snapshot a
  first ``memhtml status`` wrote, as a person's store has it);
- the home page, a folder page, a memory page, each ``--requests`` times;
- the search page rendered on the server (``/search?q=``) and the as-you-type call
  (``POST /api/tool/memory_search``) over SciFact's train queries.

p50 and p90 of each, in ms, from request sent to the last byte read. Targets (issue:
the browser app): first page and search results <= 200 ms p50 at 5,000 memories and
<= 500 ms at 100,000. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from bench.common import ROOT, percentile, run, scifact_dir
from bench.head import AT, AUTHOR
from bench.markdown_import import memhtml
from bench.scale import corpus
from memhtml.adapters.git import PygitService
from memhtml.contracts import PathChange
from memhtml.eval.beir import memory_path, read_corpus, read_queries, render_doc
from memhtml.store.layout import MARKER, marker_bytes
from memhtml.web.guard import Guard

SIZES = (5_000, 100_000)
REQUESTS = 50
QUERIES = 200
_START = re.compile(r"open http://(127\.\d+\.\d+\.\d+):(\d+)/\?token=(\S+)")


def build(size: int, work: Path) -> tuple[Path, list[str]]:
    real = read_corpus(scifact_dir() / "corpus.jsonl")
    docs = corpus(size, list(real))
    store = work / "store"
    git = run(PygitService.init(store))
    changes = [PathChange(memory_path(d), render_doc(d).encode()) for d in docs]
    changes.append(PathChange(MARKER, marker_bytes("main")))
    run(git.commit("refs/heads/main", None, changes, f"import {size}", AUTHOR, AT))
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=store, check=True)
    return store, [memory_path(d) for d in docs[:REQUESTS]]


class Client:
    def __init__(self, address: str, port: int, token: str) -> None:
        guard = Guard(port, token, address)
        self.address, self.port = address, port
        self.headers = {"Cookie": f"{guard.cookie}={token}", "Host": f"{address}:{port}",
                        "Origin": f"http://{address}:{port}", "X-Memhtml-Csrf": guard.csrf}

    def timed(self, method: str, path: str, body: bytes | None = None) -> float:
        start = time.perf_counter()
        connection = http.client.HTTPConnection(self.address, self.port, timeout=120)
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        connection.close()
        took = (time.perf_counter() - start) * 1000
        if response.status != 200:
            raise RuntimeError(f"{method} {path}: {response.status}")
        return took


def row(name: str, samples: list[float]) -> None:
    print(f"  {name:42s} p50 {percentile(samples, 0.5):8.1f} ms   "
          f"p90 {percentile(samples, 0.9):8.1f} ms   (n={len(samples)})")


def measure(size: int, requests: int, queries: list[str], work: Path) -> None:
    began = time.perf_counter()
    store, paths = build(size, work)
    print(f"\n{size:,} memories (store built in {time.perf_counter() - began:.0f} s)")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "MEMHTML_EMBEDDER": "none"}
    subprocess.run(memhtml(store, "status"), env=env, check=True, stdout=subprocess.DEVNULL)
    log = work / "serve.log"
    with log.open("wb") as err:
        server = subprocess.Popen([sys.executable, "-m", "memhtml", "serve", "--port", "0",
                                   "--store", str(store)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=err)
    try:
        found = None
        while found is None:
            found = _START.search(log.read_text(errors="replace"))
            if server.poll() is not None:
                raise RuntimeError(log.read_text(errors="replace"))
            time.sleep(0.02)
        client = Client(found.group(1), int(found.group(2)), found.group(3))
        row("first page after start (home)", [client.timed("GET", "/")])
        row("home page", [client.timed("GET", "/") for _ in range(requests)])
        folder = paths[0].rsplit("/", 1)[0] + "/"
        row(f"folder page ({folder})", [client.timed("GET", "/browse/" + quote(folder))
                                        for _ in range(requests)])
        row("memory page", [client.timed("GET", "/memory/" + quote(p, safe="/"))
                            for p in paths[:requests]])
        row("search page, server-rendered", [client.timed("GET", "/search?q=" + quote(q))
                                             for q in queries])
        row("as-you-type search (memory_search)", [client.timed(
            "POST", "/api/tool/memory_search", json.dumps({"query": q}).encode())
            for q in queries])
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    parser.add_argument("--requests", type=int, default=REQUESTS)
    parser.add_argument("--queries", type=int, default=QUERIES)
    args = parser.parse_args()
    queries = list(read_queries(scifact_dir() / "queries-train.jsonl").values())[: args.queries]
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for size in (int(s) for s in args.sizes.split(",")):
        work = Path(tempfile.mkdtemp(prefix=f"memhtml-bench-web-{size}-"))
        try:
            measure(size, args.requests, queries, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
