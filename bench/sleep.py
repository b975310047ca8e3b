"""bench/sleep: the sleep run's frame on SciFact, as ratios of ``load_head``.

SciFact's 5,183 abstracts are committed as memory files into a store (a bare
repository) and published when
``MEMHTML_BENCH_PUBLISHED=1``, so integrity regenerates the site. Measured in the same
run, each the fastest of ``MEMHTML_BENCH_RUNS`` (default 3):

- ``load_head`` of main's tip: the baseline;
- ``sleep run`` (all seventeen phases, with no model and no transcripts), cutting its
  branch and loading the base;
- ``sleep merge`` of a fresh run (both versions loaded, the lost check, the head gate,
  the fast-forward, the ledger);
- ``sleep plan``;
- the process's peak RSS.

Each sleep figure is taken twice: with no snapshot (every version a full parse) and
with this clone's snapshot, which is what a ``memhtml sleep`` command starts from.

Targets (issue 14): run <= 3x ``load_head``, merge <= 1x, plan <= 3x a cold
``memhtml status``, peak RSS <= 1 GB.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.advance import fastest
from bench.common import run, scifact_dir
from memhtml.adapters.clock import FixedClock
from memhtml.adapters.git import PygitService
from memhtml.adapters.memory_state import InMemoryState
from memhtml.adapters.snapshot_files import SnapshotFiles
from memhtml.compose.services import blob_reader
from memhtml.compose.sleep import head_gate
from memhtml.contracts import PathChange, Signature
from memhtml.eval.beir import memory_path, read_corpus, render_doc
from memhtml.head import load_head
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.merge import merge_run
from memhtml.sleep.plan import plan_sleep
from memhtml.sleep.runner import run_sleep
from memhtml.store import Store, StoreDeps, init_store, publish

AUTHOR = Signature("bench", "bench@memhtml.invalid")
AT = datetime(2026, 1, 1, tzinfo=UTC)
PUBLISHED = os.environ.get("MEMHTML_BENCH_PUBLISHED") == "1"
RUNS = int(os.environ.get("MEMHTML_BENCH_RUNS", "3"))


def main() -> None:
    docs = list(read_corpus(scifact_dir() / "corpus.jsonl"))
    root = Path(tempfile.mkdtemp(prefix="memhtml-bench-sleep-"))
    git = run(PygitService.init(root, bare=True))
    clock = FixedClock(AT)
    store = Store(StoreDeps(git=git, clock=clock, author=AUTHOR))
    run(init_store(store.deps))
    tip = run(git.resolve("main"))
    run(git.commit("refs/heads/main", tip,
                   [PathChange(memory_path(d), render_doc(d).encode()) for d in docs],
                   "import SciFact", AUTHOR, AT))
    if PUBLISHED:
        run(publish(store))
    sha = run(git.resolve("main"))
    state = InMemoryState()
    days = iter(range(1, 10_000))
    _, load_s = fastest(lambda: run(load_head(git, sha)))
    print(f"SciFact: {len(docs)} memory files{' (published)' if PUBLISHED else ''}; "
          f"fastest of {RUNS} runs each")
    print(f"load_head                       {load_s:7.2f} s")
    for label, state_dir in (("no snapshot", None), ("with a snapshot", root / "memhtml")):

        def deps(state_dir: Path | None = state_dir) -> SleepDeps:
            # A new day per run, so every run cuts a branch of its own.
            at = AT + timedelta(days=next(days))
            return SleepDeps(git=git, clock=FixedClock(at), author=AUTHOR, state=state,
                             gate=head_gate,
                             snapshots=None if state_dir is None
                             else SnapshotFiles(state_dir, blob_reader(git)))

        report, run_s = fastest(lambda: run(run_sleep(deps())))
        assert report.ok, report
        merge_times: list[float] = []
        for _ in range(RUNS):
            fresh = run(run_sleep(deps()))
            start = run(git.resolve("main"))
            began = time.perf_counter()
            outcome = run(merge_run(deps(), fresh.run_id))
            merge_times.append(time.perf_counter() - began)
            assert outcome.merged, outcome
            # Main back at the base, so the next run is measured on the same store.
            run(git.move_ref("refs/heads/main", fresh.head_sha, start))
        merge_s = min(merge_times)
        _, plan_s = fastest(lambda: run(plan_sleep(deps())))
        for name, took in (("run (frame)", run_s), ("merge", merge_s), ("plan", plan_s)):
            print(f"sleep {name:<12} {label:<15} {took:7.2f} s   x{took / load_s:4.2f} "
                  "of load_head")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS                        {rss:7.0f} MB")

if __name__ == "__main__":
    main()
