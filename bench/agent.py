"""bench/agent: the agent doors' recall rule, and brief and recall as cold processes.

    MEMHTML_SCIFACT=... python -m bench.agent --calibrate     # the recall rule's grid
    MEMHTML_SCIFACT=... python -m bench.agent --latency       # 5,000 and 100,000 memories

``--calibrate`` scores recall's two thresholds (coverage, evidence: ``agent.recall``)
over a grid on three sets, each query split by a digest into *dev* (where the
defaults are chosen) and *held-out*:

- SciFact's train queries against its 5,183 abstracts: the share of queries whose
  recall holds a judged-relevant abstract;
- the demo store (``memhtml demo``) and ``tests/golden/recall/demo_prompts.json``:
  prompts a developer on that team might type, each with the memories that would
  help; the share whose recall holds one of them;
- off-topic prompts (the same file's, coding chores with nothing to do with either
  store) against both stores: how many recall anything at all.

``--latency`` times ``memhtml recall`` and ``memhtml brief`` as fresh processes (the
hooks' way: one process a prompt) on ``bench.scale``'s stores, lexical
(``MEMHTML_EMBEDDER=none``), after a ``memhtml status`` wrote the snapshot a person's
store has; p50 and p90 over the runs, and the token counts of what they printed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import ROOT, percentile, scifact_dir
from memhtml.agent.recall import recall
from memhtml.agent.tokens import count_tokens
from memhtml.eval.beir import (
    doc_id_of_path,
    memory_path,
    query_split,
    read_corpus,
    read_qrels,
    read_queries,
    render_doc,
)
from memhtml.head import HeadVersion, record_from, version_from_records

PROMPTS = ROOT / "tests" / "golden" / "recall" / "demo_prompts.json"
COVERAGES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.01)
EVIDENCES = (0.8, 1.0, 1.2, 1.5, 1.7, 2.0, 99.0)
MEMHTML = [sys.executable, "-m", "memhtml"]


def half_of(text: str) -> str:
    return "dev" if hashlib.sha256(text.encode()).digest()[0] % 2 == 0 else "held-out"


def scifact_version() -> tuple[HeadVersion, dict[str, str], dict[str, dict[str, int]]]:
    root = scifact_dir()
    docs = list(read_corpus(root / "corpus.jsonl"))
    records = [record_from(render_doc(d), memory_path(d)).unwrap() for d in docs]
    return (version_from_records(records, "0" * 40), read_queries(root / "queries-train.jsonl"),
            read_qrels(root / "qrels" / "train.tsv"))


def demo_version(work: Path) -> HeadVersion:
    store = work / "demo"
    env = {**os.environ, "MEMHTML_EMBEDDER": "none"}
    subprocess.run([*MEMHTML, "demo", "--dir", str(store)], env=env, check=True,
                   capture_output=True)
    records = []
    for path in sorted(store.rglob("*.html")):
        relative = path.relative_to(store).as_posix()
        if relative.startswith(("memhtml-site/", ".")) or path.name == "index.html":
            continue
        found = record_from(path.read_text("utf-8"), relative).value_or(None)
        if found is not None and found.status == "active" and not found.archived:
            records.append(found)
    return version_from_records(records, "0" * 40)


def stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".html")


Candidate = tuple[str, float, float, float]
"""A BM25 candidate of a prompt: path, coverage, evidence, BM25 score."""


def candidates(view: HeadVersion, text: str) -> list[Candidate]:
    """What ``recall`` judges for ``text``: each of BM25's best with its two figures,
    read once so the grid is a filter over them (the same rule and order)."""
    from memhtml.agent.recall import (
        CANDIDATES,
        coverage,
        evidence,
        singleton_weight,
        term_weights,
    )
    from memhtml.head import SearchHeadInput, search_head
    from memhtml.head.lexical import document_text, index_terms

    weights = term_weights(view, text)
    if not weights:
        return []
    unit = singleton_weight(view)
    found: list[Candidate] = []
    for hit in search_head(view, SearchHeadInput(text, limit=CANDIDATES)):
        record = view.get(hit.path)
        if record is None:
            continue
        held = set(index_terms(document_text(record)))
        lexical = next((r.score for r in hit.ranks if r.arm == "lexical"), 0.0)
        found.append((hit.path, coverage(weights, held), evidence(weights, held, unit),
                      lexical))
    return found


def kept(found: list[Candidate], cov: float, ev: float, limit: int = 5) -> list[str]:
    """``recall``'s answer from the candidates: the rule, its order, its limit."""
    passing = [c for c in found if c[1] >= cov or c[2] >= ev]
    return [c[0] for c in passing[:limit]]


def calibrate() -> None:
    prompts = json.loads(PROMPTS.read_text("utf-8"))
    version, queries, qrels = scifact_version()
    with tempfile.TemporaryDirectory() as scratch:
        demo = demo_version(Path(scratch))
    sci = [(query_split(qid), set(relevant), candidates(version, queries[qid]))
           for qid, relevant in qrels.items()]
    dem = [(half_of(text), set(wanted), candidates(demo, text))
           for text, wanted in prompts["on_topic"]]
    off = [(candidates(version, t), candidates(demo, t)) for t in prompts["off_topic"]]
    print(f"scifact {len(sci)} queries; demo {len(dem)} on-topic and {len(off)} off-topic "
          "prompts")
    print("coverage evidence | scifact dev held | demo dev held | off-topic any (scifact, demo)")
    for cov in COVERAGES:
        for ev in EVIDENCES:
            def rate(rows: Sequence[tuple[str, set[str], list[Candidate]]], half: str,
                     named: bool, cov: float = cov, ev: float = ev) -> str:
                chosen = [r for r in rows if r[0] == half]
                good = sum(any((stem(p) if named else doc_id_of_path(p)) in r[1]
                               for p in kept(r[2], cov, ev)) for r in chosen)
                return f"{good / len(chosen):.3f}" if chosen else "-"

            off_sci = sum(bool(kept(a, cov, ev)) for a, _ in off)
            off_demo = sum(bool(kept(b, cov, ev)) for _, b in off)
            print(f"{cov:4.2f} {ev:5.2f} | {rate(sci, 'dev', False)} "
                  f"{rate(sci, 'held-out', False)} | {rate(dem, 'dev', True)} "
                  f"{rate(dem, 'held-out', True)} | {off_sci} {off_demo}", flush=True)


def share(pair: Sequence[int]) -> str:
    return f"{pair[0] / pair[1]:.3f}" if pair[1] else "-"


def _timed(argv: list[str], env: dict[str, str], runs: int, prompts: dict[str, Any],
           name: str) -> tuple[list[float], list[int]]:
    samples: list[float] = []
    tokens: list[int] = []
    for i in range(runs):
        extra = ([prompts["on_topic"][i % len(prompts["on_topic"])][0]]
                 if name == "recall" else [])
        start = time.perf_counter()
        done = subprocess.run([*MEMHTML, *argv, *extra], env=env, check=True,
                              capture_output=True, text=True)
        samples.append((time.perf_counter() - start) * 1000)
        tokens.append(count_tokens(done.stdout))
    return samples, tokens


def latency(sizes: Sequence[int], runs: int) -> None:
    """Each command in a fresh process: cold (``MEMHTML_WARM=0``: imports, opening the
    store, the snapshot), then warm (a ``memhtml mcp`` of the store running, and
    ``MEMHTML_WARM=only`` so a sample the server did not answer fails the run)."""
    from bench.web import build

    prompts = json.loads(PROMPTS.read_text("utf-8"))
    env = {**os.environ, "MEMHTML_EMBEDDER": "none"}
    for size in sizes:
        work = Path(tempfile.mkdtemp(prefix=f"agent-{size}-"))
        try:
            store, _ = build(size, work)
            subprocess.run([*MEMHTML, "status", "--store", str(store)], env=env, check=True,
                           capture_output=True)
            server = subprocess.Popen([*MEMHTML, "mcp", "--store", str(store)], env=env,
                                      stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
            sock = store / ".git" / "memhtml" / "warm.sock"
            while not sock.is_socket():
                time.sleep(0.05)
            try:
                for mode in ("0", "only"):
                    for name in ("brief", "recall"):
                        samples, tokens = _timed([name, "--store", str(store)],
                                                 {**env, "MEMHTML_WARM": mode}, runs,
                                                 prompts, name)
                        print(f"{size:>7} {'cold' if mode == '0' else 'warm'} {name:<6} "
                              f"p50 {percentile(samples, 0.5):7.1f} ms  "
                              f"p90 {percentile(samples, 0.9):7.1f} ms  tokens mean "
                              f"{statistics.mean(tokens):6.1f} max {max(tokens)}", flush=True)
            finally:
                assert server.stdin is not None
                server.stdin.close()
                server.wait(timeout=120)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def context() -> None:
    """What each way of using memhtml puts into an agent's context, on the demo store:
    the MCP server's tool definitions (sent with every turn), the brief (once a
    session), recall's answer (each prompt: the on-topic prompts and the off-topic
    ones of ``PROMPTS``). Words-and-marks tokens (``agent.tokens``) and characters."""
    import asyncio

    from memhtml.agent.brief import brief
    from memhtml.compose import open_services
    from memhtml.compose.settings import Settings
    from memhtml.mcp.server import build_server

    prompts = json.loads(PROMPTS.read_text("utf-8"))
    with tempfile.TemporaryDirectory() as scratch:
        demo = demo_version(Path(scratch))
        os.environ["MEMHTML_EMBEDDER"] = "none"
        services = open_services(Settings(store=Path(scratch) / "demo")).unwrap()
        tools = asyncio.run(build_server(unsafe(services)).list_tools())
        memory_tool(unsafe(services), demo)
    text = json.dumps([{"name": t.name, "description": t.description,
                        "input_schema": t.input_schema} for t in tools])
    print(f"MCP tool definitions ({len(tools)} tools), every turn: {count_tokens(text)} "
          f"tokens, {len(text)} characters")
    briefed = brief(demo, "2026-12-07T09:00:00Z", {})
    print(f"brief, once a session: {briefed.tokens} tokens, {len(briefed.text)} characters")
    for name, texts in (("on-topic", [t for t, _ in prompts["on_topic"]]),
                        ("off-topic", prompts["off_topic"])):
        answers = [recall(demo, t) for t in texts]
        tokens = [a.tokens for a in answers]
        print(f"recall, each {name} prompt ({len(texts)}): mean {statistics.mean(tokens):.0f} "
              f"tokens, max {max(tokens)}, empty for {sum(1 for a in answers if not a.text)}")


def memory_tool(services: Any, demo: HeadVersion) -> None:
    """What the memory tool's answers put into context on the demo store: the model
    views ``/memories`` first (the tool's own instructions tell it to), then the files
    it opens. The tool's definition is one line on the client's side; the model's
    provider expands it, at a cost not visible here."""
    from memhtml.memory_tool import MemhtmlMemoryTool

    tool = MemhtmlMemoryTool(services=services)
    try:
        root = str(tool.call({"command": "view", "path": "/memories"}))
        files = [str(tool.call({"command": "view", "path": "/memories/" + p.removesuffix(
            ".html") + ".md"})) for p in sorted(demo.paths()) if not p.startswith("archive/")]
    finally:
        tool.close()
    sizes = [count_tokens(text) for text in files]
    print(f"memory tool: view /memories {count_tokens(root)} tokens ({len(root)} characters);"
          f" a file's view: mean {statistics.mean(sizes):.0f} tokens, max {max(sizes)} "
          f"({len(files)} files)")


def unsafe(value: object) -> Any:
    from returns.unsafe import unsafe_perform_io

    return unsafe_perform_io(value)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--latency", action="store_true")
    parser.add_argument("--context", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="*", default=[5_000, 100_000])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    if args.calibrate:
        calibrate()
    if args.context:
        context()
    if args.latency:
        latency(args.sizes, args.runs)


if __name__ == "__main__":
    main()
