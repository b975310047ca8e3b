"""bench/scale: the head and the CLI at 5,000 to 100,000 memories, beside bm25s and tantivy.

    python -m bench.scale                            # 5,000, 20,000, 50,000, 100,000
    python -m bench.scale --sizes 5000,20000 --runs 3
    python -m bench.scale --sizes 5000,20000 --profile 20000   # and cProfile at 20,000

The corpus. A store of N memories holds SciFact's first N abstracts (read from
``../shared/data/scifact``, never copied) and, past its 5,183, generated documents.
Document ``i`` of the generated part is drawn from a ``random.Random`` seeded with
``SEED`` and ``i`` alone, so every size holds the smaller sizes' documents and two runs
hold the same bytes. It takes the sentence count of a SciFact abstract picked at random
and fills it with sentences, each from another random abstract, and the title of yet
another: word frequencies, sentence and document lengths stay SciFact's, while no
generated document repeats a real one. Every document is rendered by
``memhtml.eval.beir.render_doc`` at ``memory_path`` (a hundred directories by digest, as
topics spread a real store), committed through the pygit2 adapter into a fresh repository
with the store marker, and checked out so the commands see a person's clone.

Measured at each size, in one run, on the same texts:

- ``load_head`` (fastest of ``--runs``); ``advance_head`` over a commit of 10 changed
  files and over one of 1,000 (median of ``--runs``; half metadata edits, half claim edits);
- lexical ``search_head`` one query at a time over SciFact's train queries (p50, p95), and
  nDCG@10 on them (generated documents are never relevant: they are distractors);
- bm25s (English stop words and the English Snowball stemmer, PyStemmer, as memhtml's
  lexical index) and tantivy (simple tokenizer, lowercase, English stop words, its
  English stemmer, term frequencies without positions; an OR of the query's terms, top
  10 without a hit count): index build, then the same queries one at a time. Both stem
  because memhtml does: the same token space means the same postings to add up;
- hybrid ``search_head``: lexical plus the vector arm over the deterministic hashing
  embedder (``hashing-v1``, 256 wide), filled for every memory first (the fill is timed
  and printed); the query's embedding is inside the timed search. The cosine product runs
  through numpy's BLAS, whose worker threads, on a machine busier than its cores, cost a
  scheduler wake-up (about 10 ms) a query; ``OPENBLAS_NUM_THREADS=1`` shows the figure
  without them;
- cold ``memhtml search``, ``status`` and ``read`` as whole processes, median of three,
  after one ``status`` has written the snapshot cache as a user's first command would;
  the bytes under ``.git/memhtml`` (the clone's state: snapshots) after them; the peak
  RSS of each cold process (``ru_maxrss`` from ``os.wait4``, taken by a bare interpreter
  that spawns the command: see ``_SPAWN``).

Ratios to bm25s and tantivy are printed beside the raw figures; the figures go to a
log-log plot (``--plot``, default ``docs/scale.png``). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import bm25s
import Stemmer
import tantivy

from bench.common import ROOT, percentile, run, scifact_dir, timed
from bench.head import AT, AUTHOR, ndcg_at_10
from bench.markdown_import import memhtml
from memhtml.adapters.embedders import HashingEmbedder
from memhtml.adapters.git import PygitService
from memhtml.contracts import PathChange
from memhtml.eval.beir import (
    BeirDoc,
    doc_id_of_path,
    memory_path,
    read_corpus,
    read_qrels,
    read_queries,
    render_doc,
    split_claim,
)
from memhtml.format import set_meta
from memhtml.head import (
    HeadVersion,
    SearchHeadInput,
    advance_head,
    empty_vector_cache,
    fill_vectors,
    load_head,
    search_head,
)
from memhtml.head.lexical import STEMMER, document_text
from memhtml.store.layout import MARKER, marker_bytes

SEED = 20261202
SIZES = (5_000, 20_000, 50_000, 100_000)
COLD_RUNS = 3
CHANGED = (10, 1_000)
COLD_QUERY = "cell proliferation"

# Linux carries the peak RSS of the memory a process replaced at exec into its own
# ru_maxrss, and a child spawned by vfork or fork replaces its parent's: measured from
# this process, holding a loaded version and two baselines, every command would report
# this process's peak. A bare interpreter in between spawns the command instead, so the
# figure is the command's own (the floor it can report is that interpreter, about 10 MB).
_SPAWN = """
import json, os, subprocess, sys, time
with open(sys.argv[1], "wb") as err:
    start = time.perf_counter()
    child = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
print(json.dumps({"wall": wall, "rss_mb": usage.ru_maxrss / 1024,
                  "code": os.waitstatus_to_exitcode(status)}))
"""


# --------------------------------------------------------------------------- corpus


def sentences_of(text: str) -> list[str]:
    """A text's sentences, cut where ``render_doc`` cuts the claim from the body."""
    out = []
    rest = text
    while rest:
        first, rest = split_claim(rest)
        out.append(first)
    return out


def corpus(size: int, real: list[BeirDoc]) -> list[BeirDoc]:
    """SciFact's first ``size`` documents, then generated ones up to ``size``."""
    if size <= len(real):
        return real[:size]
    pools = [s for s in (sentences_of(d.text) for d in real) if s]
    titles = [d.title for d in real if d.title]
    made = []
    for i in range(size - len(real)):
        rng = random.Random(f"{SEED}-{i}")
        count = len(rng.choice(pools))
        text = " ".join(rng.choice(rng.choice(pools)) for _ in range(count))
        made.append(BeirDoc(f"gen{i:06d}", rng.choice(titles), text))
    return real + made


def edited(doc: BeirDoc, i: int) -> PathChange:
    """A changed file: odd ones get a new metadata value, even ones a new claim."""
    html = render_doc(doc)
    if i % 2:
        html = set_meta(html, "memhtml-updated", "2026-06-01T00:00:00Z")
    else:
        html = html.replace("<mark>", "<mark>Revised: ", 1)
    return PathChange(memory_path(doc), html.encode())


# --------------------------------------------------------------------------- baselines


@dataclass
class Engine:
    """One engine's query latencies and nDCG@10 over the shared query list."""

    build_s: float = 0.0
    times: list[float] = field(default_factory=list)
    ndcgs: list[float] = field(default_factory=list)

    def p(self, q: float) -> float:
        return percentile(self.times, q) * 1e3

    def ndcg(self) -> float:
        return statistics.mean(self.ndcgs) if self.ndcgs else 0.0


Query = tuple[str, dict[str, int]]


Ranker = Callable[[str], list[str]]
"""One engine, built: a query's top 10 as document paths."""


def memhtml_ranker(version: HeadVersion) -> Ranker:
    return lambda text: [h.path for h in search_head(version, SearchHeadInput(text, limit=10))]


_STEMMER = Stemmer.Stemmer(STEMMER)


def bm25s_ranker(texts: list[str], paths: list[str]) -> tuple[Ranker, float]:
    """bm25s built on ``texts`` (English stop words, the same stemmer), and its build
    seconds."""
    gc.collect()
    start = time.perf_counter()
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER,
                                   show_progress=False), show_progress=False)
    built = time.perf_counter() - start

    def rank(text: str) -> list[str]:
        tokens = bm25s.tokenize([text], stopwords="en", stemmer=_STEMMER, show_progress=False)
        results, _scores = retriever.retrieve(tokens, k=10, show_progress=False)
        return [paths[i] for i in results[0]]

    return rank, built


def tantivy_ranker(texts: list[str], paths: list[str], folder: Path) -> tuple[Ranker, float]:
    """An on-disk tantivy index of the texts (the writer's default threads), queried
    as ORs of their analyzed terms, and its build seconds."""
    analyzer = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
                .filter(tantivy.Filter.lowercase())
                .filter(tantivy.Filter.stopword("english"))
                .filter(tantivy.Filter.stemmer("english")).build())
    schema = (tantivy.SchemaBuilder()
              .add_text_field("text", tokenizer_name="plain", index_option="freq")
              .add_unsigned_field("row", stored=True).build())
    gc.collect()
    folder.mkdir()
    start = time.perf_counter()
    index = tantivy.Index(schema, path=str(folder))
    index.register_tokenizer("plain", analyzer)
    writer = index.writer()
    for row, text in enumerate(texts):
        doc = tantivy.Document()
        doc.add_text("text", text)
        doc.add_unsigned("row", row)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    built = time.perf_counter() - start

    def rank(text: str) -> list[str]:
        terms = dict.fromkeys(analyzer.analyze(text))
        query = tantivy.Query.boolean_query([
            (tantivy.Occur.Should, tantivy.Query.term_query(schema, "text", t,
                                                            index_option="freq"))
            for t in terms])
        found = searcher.search(query, limit=10, count=False)
        return [paths[int(searcher.doc(address)["row"][0])] for _score, address in found.hits]

    return rank, built


def timed_pass(rank: Ranker, queries: list[Query], engine: Engine | None = None) -> Engine:
    """Every query once, each timed alone, with its nDCG@10."""
    engine = engine if engine is not None else Engine()
    for text, relevant in queries:
        start = time.perf_counter()
        found = rank(text)
        engine.times.append(time.perf_counter() - start)
        engine.ndcgs.append(ndcg_at_10([doc_id_of_path(p) for p in found], relevant))
    return engine


def search_hybrid(version: HeadVersion, queries: list[Query]) -> tuple[Engine, float]:
    """Hybrid search over the hashing embedder's vectors, and the seconds the fill took."""
    embedder = HashingEmbedder()
    filled, fill_s = timed(lambda: run(fill_vectors(version, empty_vector_cache(
        embedder.space), embedder)))

    def rank(text: str) -> list[str]:
        query_vector = run(embedder.embed_query(text))
        return [h.path for h in search_head(version, SearchHeadInput(
            text, limit=10, vectors=filled.cache, query_vector=query_vector))]

    return timed_pass(rank, queries), fill_s


# --------------------------------------------------------------------------- profile


def profiled(label: str, fn: Callable[[], object]) -> None:
    """``fn`` under cProfile: the ten entries inside memhtml with most cumulative time."""
    profile = cProfile.Profile()
    profile.enable()
    fn()
    profile.disable()
    print(f"\n--- cProfile: {label} (top 10 cumulative inside memhtml)")
    pstats.Stats(profile, stream=sys.stdout).sort_stats("cumulative").print_stats(
        "src/memhtml/", 10)


# --------------------------------------------------------------------------- one size


@dataclass(frozen=True)
class Process:
    """One whole command: its wall seconds and its own peak resident size."""

    wall: float
    rss_mb: float


def spawned(argv: list[str], env: dict[str, str], work: Path) -> Process:
    err = work / "err.txt"
    out = subprocess.run([sys.executable, "-c", _SPAWN, str(err), *argv], env=env,
                         check=True, capture_output=True, text=True).stdout
    figures = json.loads(out)
    if figures["code"]:
        raise SystemExit(f"{' '.join(argv)} failed: {err.read_text()}")
    return Process(float(figures["wall"]), float(figures["rss_mb"]))


def cold(store: Path, args: list[str], env: dict[str, str], work: Path) -> list[Process]:
    return [spawned(memhtml(store, *args), env, work) for _ in range(COLD_RUNS)]


def state_bytes(store: Path) -> int:
    return sum(p.stat().st_size for p in (store / ".git" / "memhtml").rglob("*") if p.is_file())


def measure_size(size: int, real: list[BeirDoc], queries: list[Query], runs: int,
                 profile: bool) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix=f"memhtml-bench-scale-{size}-"))
    try:
        return _measure_size(size, real, queries, runs, profile, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _measure_size(size: int, real: list[BeirDoc], queries: list[Query], runs: int,
                  profile: bool, work: Path) -> dict[str, float]:
    docs = corpus(size, real)
    store = work / "store"
    git = run(PygitService.init(store))
    changes = [PathChange(memory_path(d), render_doc(d).encode()) for d in docs]
    changes.append(PathChange(MARKER, marker_bytes("main")))
    # An IOResult is eager: the call must happen inside the timed function.
    sha, commit_s = timed(lambda: run(git.commit("refs/heads/main", None, changes,
                                                 f"import {size}", AUTHOR, AT)))
    first, rest = CHANGED[0], CHANGED[0] + CHANGED[1]
    sha10 = run(git.commit("refs/heads/main", sha,
                           [edited(d, i) for i, d in enumerate(docs[:first])],
                           "ten edits", AUTHOR, AT))
    sha1k = run(git.commit("refs/heads/main", sha10,
                           [edited(d, i) for i, d in enumerate(docs[first:rest])],
                           "a thousand edits", AUTHOR, AT))
    figures: dict[str, float] = {"memories": len(docs), "commit_s": commit_s}
    figures |= measure_head(git, (sha, sha10, sha1k), queries, runs, work,
                            f"{size:,}" if profile else None)
    gc.collect()
    figures |= measure_commands(store, memory_path(docs[-1]), work)
    return figures


def measure_head(git: PygitService, shas: tuple[str, str, str], queries: list[Query],
                 runs: int, work: Path, profile: str | None) -> dict[str, float]:
    """load_head, the two advances, and every engine's queries, in this process."""
    sha, sha10, sha1k = shas
    loads = []
    for _ in range(runs):
        gc.collect()
        version, seconds = timed(lambda: run(load_head(git, sha)))
        loads.append(seconds)
    f = {"load_s": min(loads)}
    a10, a1k = [], []
    for _ in range(runs):
        v10, seconds = timed(lambda: run(advance_head(git, version, sha10)))
        a10.append(seconds)
    for _ in range(runs):
        _v1k, seconds = timed(lambda: run(advance_head(git, v10, sha1k)))
        a1k.append(seconds)
    f["advance10_ms"] = statistics.median(a10) * 1e3
    f["advance1k_ms"] = statistics.median(a1k) * 1e3

    ours = timed_pass(memhtml_ranker(version), queries)
    texts = [document_text(r) for r in version.records()]
    paths = [r.path for r in version.records()]
    bm25s_rank, bm25s_build = bm25s_ranker(texts, paths)
    theirs = timed_pass(bm25s_rank, queries, Engine(bm25s_build))
    tantivy_rank, tantivy_build = tantivy_ranker(texts, paths, work / "tantivy")
    tant = timed_pass(tantivy_rank, queries, Engine(tantivy_build))
    hybrid, fill_s = search_hybrid(version, queries)
    for name, engine in (("ours", ours), ("bm25s", theirs), ("tantivy", tant),
                         ("hybrid", hybrid)):
        f[f"{name}_p50_ms"] = engine.p(0.5)
        f[f"{name}_p95_ms"] = engine.p(0.95)
        f[f"{name}_ndcg"] = engine.ndcg()
    f["bm25s_build_s"] = theirs.build_s
    f["tantivy_build_s"] = tant.build_s
    f["fill_s"] = fill_s
    if profile is not None:
        profiled(f"load_head at {profile}", lambda: run(load_head(git, sha)))
        profiled(f"lexical search_head at {profile}, {len(queries)} queries one at a time",
                 partial(lexical_pass, version, [text for text, _relevant in queries]))
    return f


def lexical_pass(version: HeadVersion, texts: list[str]) -> None:
    for text in texts:
        search_head(version, SearchHeadInput(text, limit=10))


def measure_commands(store: Path, read_path: str, work: Path) -> dict[str, float]:
    """Whole commands on a person's clone: the files checked out, an index of them."""
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=store, check=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    f = {"first_status_s": spawned(memhtml(store, "status"), env, work).wall}
    for name, args in (("search", ["search", COLD_QUERY]), ("status", ["status"]),
                       ("read", ["read", read_path, "--tier", "gist"])):
        taken = cold(store, args, env, work)
        f[f"cold_{name}_s"] = statistics.median(m.wall for m in taken)
        f[f"cold_{name}_rss_mb"] = statistics.median(m.rss_mb for m in taken)
    f["cache_mb"] = state_bytes(store) / 1e6
    return f


# --------------------------------------------------------------------------- report


ROWS: tuple[tuple[str, str, str], ...] = (
    ("memories", "memories", "{:,.0f}"),
    ("commit_s", "store commit through the adapter (s)", "{:.1f}"),
    ("load_s", "load_head (s)", "{:.2f}"),
    ("advance10_ms", "advance_head, 10 files (ms)", "{:.1f}"),
    ("advance1k_ms", "advance_head, 1,000 files (ms)", "{:.0f}"),
    ("ours_p50_ms", "lexical search_head p50 (ms)", "{:.2f}"),
    ("ours_p95_ms", "lexical search_head p95 (ms)", "{:.2f}"),
    ("hybrid_p50_ms", "hybrid search_head p50, hashing (ms)", "{:.2f}"),
    ("hybrid_p95_ms", "hybrid search_head p95, hashing (ms)", "{:.2f}"),
    ("fill_s", "hashing vector fill, every memory (s)", "{:.1f}"),
    ("bm25s_build_s", "bm25s index build (s)", "{:.2f}"),
    ("bm25s_p50_ms", "bm25s p50 (ms)", "{:.2f}"),
    ("bm25s_p95_ms", "bm25s p95 (ms)", "{:.2f}"),
    ("tantivy_build_s", "tantivy index build (s)", "{:.2f}"),
    ("tantivy_p50_ms", "tantivy p50 (ms)", "{:.2f}"),
    ("tantivy_p95_ms", "tantivy p95 (ms)", "{:.2f}"),
    ("ours_ndcg", "nDCG@10 lexical search_head", "{:.4f}"),
    ("hybrid_ndcg", "nDCG@10 hybrid search_head", "{:.4f}"),
    ("bm25s_ndcg", "nDCG@10 bm25s", "{:.4f}"),
    ("tantivy_ndcg", "nDCG@10 tantivy", "{:.4f}"),
    ("first_status_s", "first cold status, writes the cache (s)", "{:.2f}"),
    ("cold_search_s", "cold memhtml search, median of 3 (s)", "{:.2f}"),
    ("cold_status_s", "cold memhtml status, median of 3 (s)", "{:.2f}"),
    ("cold_read_s", "cold memhtml read, median of 3 (s)", "{:.2f}"),
    ("cache_mb", "local cache, .git/memhtml (MB)", "{:.1f}"),
    ("cold_search_rss_mb", "peak RSS, cold search (MB)", "{:.0f}"),
    ("cold_status_rss_mb", "peak RSS, cold status (MB)", "{:.0f}"),
    ("cold_read_rss_mb", "peak RSS, cold read (MB)", "{:.0f}"),
)
RATIOS: tuple[tuple[str, str, str], ...] = (
    ("load_s", "bm25s_build_s", "load_head / bm25s build"),
    ("load_s", "tantivy_build_s", "load_head / tantivy build"),
    ("ours_p50_ms", "bm25s_p50_ms", "lexical p50 / bm25s p50"),
    ("ours_p50_ms", "tantivy_p50_ms", "lexical p50 / tantivy p50"),
    ("ours_p95_ms", "bm25s_p95_ms", "lexical p95 / bm25s p95"),
    ("ours_p95_ms", "tantivy_p95_ms", "lexical p95 / tantivy p95"),
    ("hybrid_p50_ms", "bm25s_p50_ms", "hybrid p50 / bm25s p50"),
    ("hybrid_p50_ms", "tantivy_p50_ms", "hybrid p50 / tantivy p50"),
)


def table(results: list[dict[str, float]]) -> None:
    width = 42
    print(f"\n{'':{width}s}" + "".join(f"{r['memories']:>12,.0f}" for r in results))
    for key, label, form in ROWS[1:]:
        print(f"{label:{width}s}" + "".join(f"{form.format(r[key]):>12s}" for r in results))
    for top, bottom, label in RATIOS:
        print(f"{'ratio ' + label:{width}s}"
              + "".join(f"{r[top] / r[bottom]:>11.2f}x" for r in results))


PANELS: tuple[tuple[str, str, tuple[tuple[str, float, str], ...]], ...] = (
    ("Building a version", "seconds", (
        ("load_s", 1, "load_head"), ("advance10_ms", 1e-3, "advance_head, 10 files"),
        ("advance1k_ms", 1e-3, "advance_head, 1,000 files"),
        ("bm25s_build_s", 1, "bm25s index build"), ("tantivy_build_s", 1, "tantivy index build"))),
    ("One query at a time (p95 dashed)", "milliseconds", (
        ("ours_p50_ms", 1, "lexical search_head"), ("ours_p95_ms", 1, "lexical search_head"),
        ("hybrid_p50_ms", 1, "hybrid search_head"), ("bm25s_p50_ms", 1, "bm25s"),
        ("bm25s_p95_ms", 1, "bm25s"), ("tantivy_p50_ms", 1, "tantivy"),
        ("tantivy_p95_ms", 1, "tantivy"))),
    ("Cold commands, whole processes", "seconds", (
        ("cold_search_s", 1, "search"), ("cold_status_s", 1, "status"),
        ("cold_read_s", 1, "read"), ("first_status_s", 1, "first status (writes the cache)"))),
    ("Space", "MB", (
        ("cache_mb", 1, "local cache (.git/memhtml)"),
        ("cold_search_rss_mb", 1, "peak RSS, cold search"))),
)


def plot(results: list[dict[str, float]], out: Path) -> None:
    import matplotlib as mpl

    mpl.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["memories"] for r in results]
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    for ax, (title, unit, series) in zip(axes.flat, PANELS, strict=True):
        colours: dict[str, str] = {}
        for key, scale, label in series:
            p95 = "_p95_" in key
            (line,) = ax.plot(sizes, [r[key] * scale for r in results], marker="o",
                              linestyle="--" if p95 else "-", color=colours.get(label),
                              label=None if p95 and label in colours else label)
            colours.setdefault(label, line.get_color())
        ax.set_title(title, fontsize=10)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("memories")
        ax.set_ylabel(unit)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("memhtml at scale (bench/scale.py)")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        help="comma-separated store sizes")
    parser.add_argument("--runs", type=int, default=3,
                        help="load_head is the fastest and advance_head the median of this many")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "scale.png",
                        help="where the PNG goes ('-' for none)")
    parser.add_argument("--profile", default="",
                        help="comma-separated sizes at which to cProfile one load_head and "
                             "one lexical pass over the queries")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    data = scifact_dir()
    real = list(read_corpus(data / "corpus.jsonl"))
    texts = read_queries(data / "queries-train.jsonl")
    qrels = read_qrels(data / "qrels" / "train.tsv")
    queries = [(texts[q], qrels[q]) for q in sorted(texts) if q in qrels]
    print(f"{len(queries)} SciFact train queries; load average {os.getloadavg()}")
    results = []
    for size in sizes:
        started = time.perf_counter()
        profile = str(size) in args.profile.split(",")
        results.append(measure_size(size, real, queries, args.runs, profile))
        print(f"{size:,} memories measured in {time.perf_counter() - started:.0f} s; "
              f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        # Each size's raw figures as they come, so a long run's early sizes survive it.
        print(json.dumps(results[-1], sort_keys=True), flush=True)
    table(results)
    if str(args.plot) != "-":
        plot(results, args.plot)
        print(f"\nplot: {args.plot}")


if __name__ == "__main__":
    main()
