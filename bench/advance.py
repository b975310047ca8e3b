"""bench/advance: advancing and overlaying the head over many meta-only edits, on SciFact.

SciFact's 5,183 abstracts are written as memory files and committed, as in
``bench.head``. A second commit changes every file's metadata only (its confidence:
the title, claim and body stay as they were). Measured in the same run, each the
fastest of three: ``load_head`` of the first commit; ``advance_head`` from it to the
second; ``with_overlay`` of N meta-only ``Put``s in one call; and the same N applied
one op per ``with_overlay`` call, as ``store.plan.Plan.apply`` does, for N = 200, 800
and every file.

Targets: the advance and both overlays of every file <= 1.5x ``load_head``.
``MEMHTML_BENCH_RUNS`` sets the number of runs each figure is the fastest of.
"""

from __future__ import annotations

import gc
import os
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TypeVar

from bench.common import run, scifact_dir
from memhtml.adapters.git import PygitService
from memhtml.contracts import PathChange, Signature
from memhtml.contracts.ops import OverlayOp, Put
from memhtml.eval.beir import memory_path, read_corpus, render_doc
from memhtml.format import set_meta
from memhtml.head import HeadVersion, IndexedView, advance_head, load_head, with_overlay

T = TypeVar("T")
AUTHOR = Signature("bench", "bench@memhtml.invalid")
AT = datetime(2026, 1, 1, tzinfo=UTC)
RUNS = int(os.environ.get("MEMHTML_BENCH_RUNS", "3"))
SIZES = (200, 800)


def fastest(fn: Callable[[], T], runs: int = RUNS) -> tuple[T, float]:
    """``fn``'s last value and its fastest wall-clock time over ``runs`` calls."""
    best = float("inf")
    value: T | None = None
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    assert value is not None
    return value, best


def overlay_once(base: HeadVersion, ops: list[OverlayOp]) -> IndexedView:
    return with_overlay(base, ops).unwrap()


def overlay_one_by_one(base: HeadVersion, ops: list[OverlayOp]) -> IndexedView:
    view: IndexedView = base
    for op in ops:
        view = with_overlay(view, [op]).unwrap()
    return view


def main() -> None:
    docs = list(read_corpus(scifact_dir() / "corpus.jsonl"))
    tmp = tempfile.mkdtemp(prefix="memhtml-bench-advance-")
    git = run(PygitService.init(Path(tmp)))
    files = {memory_path(d): render_doc(d) for d in docs}
    sha = run(git.commit("refs/heads/main", None,
                         [PathChange(p, h.encode()) for p, h in files.items()],
                         "import SciFact", AUTHOR, AT))
    edited = {p: set_meta(h, "memhtml-confidence", "0.8") for p, h in files.items()}
    sha_meta = run(git.commit("refs/heads/main", sha,
                              [PathChange(p, h.encode()) for p, h in edited.items()],
                              "every file's confidence", AUTHOR, AT))

    version, load_s = fastest(lambda: run(load_head(git, sha)))
    advanced, advance_s = fastest(lambda: run(advance_head(git, version, sha_meta)))
    loaded_meta = run(load_head(git, sha_meta))
    assert advanced.indexes.records == loaded_meta.indexes.records
    kept = advanced.indexes.lexical is version.indexes.lexical
    shared = "shared with the parent" if kept else "changed"

    puts: list[OverlayOp] = [Put(p, h) for p, h in sorted(edited.items())]
    print(f"SciFact: {len(docs)} memory files; fastest of {RUNS} runs each")
    print(f"load_head                                   {load_s:7.2f} s")
    print(f"advance_head, every file's meta changed     {advance_s:7.2f} s   "
          f"x{advance_s / load_s:4.2f} of load_head (lexical index {shared})")
    for n in (*SIZES, len(puts)):
        ops = puts[:n]
        once, once_s = fastest(partial(overlay_once, version, ops))
        _, each_s = fastest(partial(overlay_one_by_one, version, ops))
        if n == len(puts):
            assert once.indexes == loaded_meta.indexes
        print(f"with_overlay, {n:5d} meta Puts, one call     {once_s:7.2f} s   "
              f"x{once_s / load_s:4.2f} of load_head; {1e3 * once_s / n:5.2f} ms an edit")
        print(f"with_overlay, {n:5d} meta Puts, op by op     {each_s:7.2f} s   "
              f"x{each_s / load_s:4.2f} of load_head; {1e3 * each_s / n:5.2f} ms an edit")


if __name__ == "__main__":
    main()
