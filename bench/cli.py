"""bench/cli: cold command latency on a 5,000-memory store with a snapshot.

Target: a cold command (a new process) answers in <= 0.5 s once a snapshot of the
parsed records exists under .memhtml/. Baselines in the same run: the bare Python
interpreter start, and `git log -1` on the same repository.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import run, scifact_dir
from bench.head import AT, AUTHOR
from memhtml.adapters.git import PygitService
from memhtml.contracts import PathChange
from memhtml.eval.beir import memory_path, read_corpus, render_doc

RUNS = 9


def wall(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="memhtml-bench-cli-"))
    git = run(PygitService.init(root))
    docs = list(read_corpus(scifact_dir() / "corpus.jsonl"))
    changes = [PathChange(memory_path(d), render_doc(d).encode()) for d in docs]
    run(git.commit("refs/heads/main", None, changes, "import SciFact", AUTHOR, AT))
    memhtml = [sys.executable, "-m", "memhtml"]
    first = wall([*memhtml, "status", "--store", str(root)])
    rows = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "git log -1": ["git", "-C", str(root), "log", "-1", "--format=%H"],
        "memhtml status": [*memhtml, "status", "--store", str(root)],
        "memhtml search": [*memhtml, "search", "cell proliferation", "--store", str(root)],
        "memhtml read --tier gist": [*memhtml, "read", memory_path(docs[0]), "--tier", "gist",
                                     "--store", str(root)],
    }
    print(f"store: {len(docs)} memories at {root}; first status (load + snapshot) {first:.2f} s")
    for name, argv in rows.items():
        times = [wall(argv) for _ in range(RUNS)]
        print(f"{name:26s} median {statistics.median(times):.3f} s  min {min(times):.3f} s")


if __name__ == "__main__":
    main()
