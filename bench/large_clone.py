"""bench/large_clone: the first command in a fresh clone of a large store, and after it.

    python -m bench.large_clone                         # 100,000 memories, baseline main
    python -m bench.large_clone --size 20000 --rounds 3
    python -m bench.large_clone --origin /tmp/lc100k    # build the store once, reuse it
    python -m bench.large_clone --baseline-tree ../main # another checkout's src/

Target (the issue): the first command in a fresh clone of a 100,000-memory store
builds its snapshot in <= 15 s (it took 72 s), later cold commands stay under 1 s.

The store is ``bench.scale``'s corpus (SciFact's abstracts, then generated ones with a
fixed seed), committed through the pygit2 adapter with the store marker, into
``--origin`` (built once when the folder holds no repository, reused after). Each
round, for each side in turn (this tree, then the baseline: so a change in machine
load falls on both), the origin is cloned afresh with ``git clone`` (a real clone: its
own checkout, no snapshot, no state), and then, as whole processes
(``PYTHONPATH=<side>/src python -m memhtml``), timed:

- the first ``memhtml status`` (no snapshot: every file parsed, the snapshot written),
  with its CPU seconds (its own and its forked workers', from ``os.wait4``) beside
  the wall seconds: on a shared machine the wall clock says how busy the others were;
- then ``status``, ``search`` and ``read --tier gist``, each ``--runs`` times, cold
  (a new process each), on the snapshot the first command wrote.

The baseline is ``--baseline-tree`` (a checkout whose ``src/`` is run), else
``--baseline REV`` exported with ``git archive`` into a temporary folder (default
``main``); ``--baseline none`` measures this tree alone. Figures are printed, with the
ratio of this tree to the baseline per round; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.common import ROOT, compiled, run, scifact_dir
from bench.head import AT, AUTHOR
from bench.scale import COLD_QUERY, corpus
from memhtml.adapters.git import PygitService
from memhtml.contracts import PathChange
from memhtml.eval.beir import memory_path, read_corpus, render_doc
from memhtml.store.layout import MARKER, marker_bytes

SIZE = 100_000
RUNS = 3
ROUNDS = 1

# A bare interpreter spawns the command and reports what ``os.wait4`` says of it: the
# wall seconds, the CPU seconds of the command and of the workers it forked and reaped,
# and its peak resident size.
_SPAWN = """
import json, os, subprocess, sys, time
with open(sys.argv[1], "wb") as err:
    start = time.perf_counter()
    child = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                  "rss_mb": usage.ru_maxrss / 1024,
                  "code": os.waitstatus_to_exitcode(status)}))
"""


@dataclass(frozen=True)
class Process:
    wall: float
    cpu: float
    rss_mb: float


@dataclass(frozen=True)
class Side:
    name: str
    src: Path


def spawned(argv: list[str], env: dict[str, str], work: Path) -> Process:
    err = work / "err.txt"
    out = subprocess.run([sys.executable, "-c", _SPAWN, str(err), *argv], env=env,
                         check=True, capture_output=True, text=True).stdout
    figures = json.loads(out)
    if figures["code"]:
        raise SystemExit(f"{' '.join(argv)} failed: {err.read_text()}")
    return Process(float(figures["wall"]), float(figures["cpu"]), float(figures["rss_mb"]))


def memhtml(store: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "memhtml", *args, "--store", str(store)]


def build_origin(origin: Path, size: int) -> str:
    """The store of ``size`` memories at ``origin`` (built unless already there), and
    the path of its last memory (what ``read`` asks for)."""
    docs = corpus(size, list(read_corpus(scifact_dir() / "corpus.jsonl")))
    last = memory_path(docs[-1])
    if (origin / ".git").exists():
        return last
    start = time.perf_counter()
    git = run(PygitService.init(origin))
    changes = [PathChange(memory_path(d), render_doc(d).encode()) for d in docs]
    changes.append(PathChange(MARKER, marker_bytes("main")))
    run(git.commit("refs/heads/main", None, changes, f"import {size}", AUTHOR, AT))
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=origin, check=True)
    print(f"built {size:,} memories at {origin} in {time.perf_counter() - start:.0f} s",
          flush=True)
    return last


@contextmanager
def exported(rev: str) -> Iterator[Path]:
    """``rev``'s tree exported into a temporary folder (this checkout untouched)."""
    folder = Path(tempfile.mkdtemp(prefix="memhtml-bench-baseline-"))
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def one_round(side: Side, origin: Path, read_path: str, runs: int, work: Path,
              round_no: int) -> dict[str, list[Process]]:
    # Each clone is kept until the run ends: deleting 100,000 files took this
    # machine's disk minutes, which would have stood between the rounds.
    clone = work / f"clone-{round_no}-{side.name.replace(' ', '-')}"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    env = {**os.environ, "PYTHONPATH": str(side.src)}
    taken: dict[str, list[Process]] = {"first status": [spawned(memhtml(clone, "status"),
                                                                env, work)]}
    for name, args in (("status", ["status"]), ("search", ["search", COLD_QUERY]),
                       ("read", ["read", read_path, "--tier", "gist"])):
        taken[name] = [spawned(memhtml(clone, *args), env, work) for _ in range(runs)]
    return taken


def report(round_no: int, results: dict[str, dict[str, list[Process]]]) -> None:
    names = list(results)
    print(f"\nround {round_no} ({time.strftime('%H:%M:%S')}, load average "
          f"{os.getloadavg()[0]:.1f})")
    for what in results[names[0]]:
        cells = []
        for name in names:
            got = results[name][what]
            wall = statistics.median(p.wall for p in got)
            cpu = statistics.median(p.cpu for p in got)
            rss = statistics.median(p.rss_mb for p in got)
            cells.append(f"{name}: {wall:.2f} s (cpu {cpu:.2f} s, {rss:.0f} MB)")
        line = f"  {what:14s} " + " | ".join(cells)
        if len(names) == 2:
            ours, base = (statistics.median(p.wall for p in results[n][what]) for n in names)
            line += f" | ratio {ours / base:.2f}"
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=SIZE)
    parser.add_argument("--origin", type=Path, default=None,
                        help="where the store is built once and reused (default: a "
                             "temporary folder, removed afterwards)")
    parser.add_argument("--runs", type=int, default=RUNS, help="cold runs of each command")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="the checkout whose src/ is measured (default: this one)")
    parser.add_argument("--baseline", default="main",
                        help="a revision of this repository to compare with, or none")
    parser.add_argument("--baseline-tree", type=Path, default=None,
                        help="another checkout whose src/ is the baseline")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memhtml-bench-large-clone-"))
    origin = args.origin or work / "origin"
    try:
        read_path = build_origin(origin, args.size)
        with _baseline(args) as base:
            sides = [Side("this tree", args.tree.resolve() / "src")]
            if base is not None:
                sides.append(Side("baseline", base / "src"))
            for side in sides:  # compiled once, so no timed process compiles the sources
                compiled(side.src.parent)
            named = args.baseline_tree or ("" if base is None else subprocess.run(
                ["git", "-C", str(ROOT), "rev-parse", "--short", args.baseline],
                check=True, capture_output=True, text=True).stdout.strip())
            print(f"{args.size:,} memories; this tree {sides[0].src}"
                  + (f", baseline {sides[1].src} ({named})" if base is not None else ""),
                  flush=True)
            for round_no in range(1, args.rounds + 1):
                results = {side.name: one_round(side, origin, read_path, args.runs, work,
                                                round_no)
                           for side in sides}
                report(round_no, results)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@contextmanager
def _baseline(args: argparse.Namespace) -> Iterator[Path | None]:
    if args.baseline_tree is not None:
        yield args.baseline_tree.resolve()
    elif args.baseline == "none":
        yield None
    else:
        with exported(args.baseline) as folder:
            yield folder


if __name__ == "__main__":
    main()
