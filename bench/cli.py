"""bench/cli: cold command latency on a 5,000-memory store with a snapshot.

Target: a cold command (a new process) answers in <= 0.5 s once a snapshot of the
parsed version exists under the git directory (``<git-dir>/memhtml/snapshots``).

One run measures this working tree and a baseline commit side by side: the baseline
is checked out with ``git worktree add`` into a temporary folder (removed afterwards;
this tree's checkout, index and branch are not touched) and run as
``PYTHONPATH=<worktree>/src python -m memhtml`` on its own copy of the store. The
runs of the two alternate, so a change in machine load falls on both. Reference
rows: the bare interpreter start and ``git log -1`` on the same repository.

    python -m bench.cli                      # baseline: the last pickle snapshot
    python -m bench.cli --baseline HEAD~3    # any commit
    python -m bench.cli --baseline none      # this tree only
    python -m bench.cli --tree ../other      # measure another checkout instead

"This tree" is the checkout as it stands, uncommitted work included; to measure one
change alone, check it out elsewhere and pass ``--tree``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from bench.common import ROOT, compiled, run, scifact_dir
from bench.head import AT, AUTHOR
from memhtml.adapters.git import PygitService
from memhtml.contracts import PathChange
from memhtml.eval.beir import memory_path, read_corpus, render_doc
from memhtml.store.layout import MARKER, marker_bytes

RUNS = 9
T = TypeVar("T")
FIRST_RUNS = 3
SNAPSHOT_MODULE = "src/memhtml/store/snapshot.py"
"""Where the snapshot files' code lived when the pickles were replaced (it is the
snapshot port now, its files in ``adapters/snapshot_files.py``)."""

_ALONE = textwrap.dedent("""
    import sys, tempfile, time
    from pathlib import Path
    from returns.unsafe import unsafe_perform_io
    try:  # the snapshot files moved into the adapters once the snapshot was a port
        from memhtml.adapters.snapshot_files import read_snapshot, save_snapshot, snapshot_files
    except ImportError:
        from memhtml.store.snapshot import read_snapshot, save_snapshot, snapshot_files
    [path] = snapshot_files(Path(sys.argv[1]))[:1]
    read_snapshot(path)  # the first call also imports what the load needs
    loads, saves = [], []
    for _ in range(int(sys.argv[2])):
        start = time.perf_counter()
        loaded = read_snapshot(path)
        loads.append(time.perf_counter() - start)
    version = unsafe_perform_io(loaded.unwrap()).version()
    for _ in range(3):
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            unsafe_perform_io(save_snapshot(Path(folder), version).unwrap())
            saves.append(time.perf_counter() - start)
    print(" ".join(map(str, loads)), "|", " ".join(map(str, saves)))
""")


@dataclass(frozen=True)
class Side:
    """One code base under test: its name, its interpreter environment, its store."""

    name: str
    env: dict[str, str]
    store: Path

    def memhtml(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "memhtml", *args, "--store", str(self.store)]

    @property
    def state(self) -> Path:
        """Where memhtml keeps this clone's state: under the git directory."""
        git_dir = self.store / ".git"
        return (git_dir if git_dir.is_dir() else self.store) / "memhtml"


def wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=env)
    return time.perf_counter() - start


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def auto_baseline() -> str:
    """HEAD while its snapshots are still pickles, else the commit before the one that
    replaced them: the comparison this benchmark was written for."""
    if "import pickle" in git("show", f"HEAD:{SNAPSHOT_MODULE}"):
        return git("rev-parse", "HEAD")
    removed = git("log", "-1", "--format=%H", "-G", "^import pickle", "HEAD", "--",
                  SNAPSHOT_MODULE)
    return git("rev-parse", f"{removed}^")


@contextmanager
def worktree(rev: str) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="memhtml-base-"))
    folder.rmdir()
    git("worktree", "add", "--detach", str(folder), rev)
    try:
        compiled(folder)
        yield folder
    finally:
        git("worktree", "remove", "--force", str(folder))


def make_store(root: Path) -> int:
    git_service = run(PygitService.init(root))
    docs = list(read_corpus(scifact_dir() / "corpus.jsonl"))
    changes = [PathChange(memory_path(d), render_doc(d).encode()) for d in docs]
    # The marker makes the repository a store the commands will open.
    changes.append(PathChange(MARKER, marker_bytes("main")))
    run(git_service.commit("refs/heads/main", None, changes, "import SciFact", AUTHOR, AT))
    # A person's checkout holds the files and an index of them: without them every
    # memory would count as an uncommitted deletion.
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=root, check=True)
    return len(docs)


def first_load(side: Side) -> float:
    """A status with no snapshot: the full parse plus the snapshot write."""
    shutil.rmtree(side.state / "snapshots", ignore_errors=True)
    return wall(side.memhtml("status"), side.env)


def snapshot_bytes(side: Side) -> int:
    folder = side.state / "snapshots"
    return sum(p.stat().st_size for p in folder.iterdir() if not p.name.startswith("."))


def alone(side: Side) -> list[tuple[str, float]]:
    """``read_snapshot`` and ``save_snapshot`` timed in one process (after a first
    read that also imports what a load needs), tagged "load" and "save"."""
    out = subprocess.run([sys.executable, "-c", _ALONE, str(side.state), str(RUNS)],
                         check=True, capture_output=True, text=True, env=side.env).stdout
    loads, saves = out.split("|")
    return [("load", float(x)) for x in loads.split()] + [("save", float(x))
                                                         for x in saves.split()]


def alternating(sides: list[Side], measure: Callable[[Side], list[T]], rounds: int
                ) -> list[list[T]]:
    """``rounds`` rounds of ``measure`` on each side in turn, so a change in machine
    load falls on every side alike."""
    times: list[list[T]] = [[] for _ in sides]
    for _ in range(rounds):
        for i, side in enumerate(sides):
            times[i].extend(measure(side))
    return times


def has_command(side: Side, argv: list[str]) -> bool:
    """Whether ``side``'s memhtml knows the command ``argv`` runs (its help answers)."""
    name = argv[3:argv.index("--store")]
    asked = [*argv[:3], *name[:1], "--help"]
    return subprocess.run(asked, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          env=side.env, check=False).returncode == 0


def timing(command: Callable[[Side], list[str]]) -> Callable[[Side], list[float]]:
    return lambda side: [wall(command(side), side.env)]


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default="auto",
                        help="a commit to compare with, 'auto' or 'none'")
    parser.add_argument("--commands-only", action="store_true",
                        help="time only the whole commands (a baseline from before the "
                             "state moved under the git directory has no snapshot to time)")
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="the checkout to measure (default: this one, with whatever "
                             "is uncommitted in it)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memhtml-bench-cli-"))
    count = make_store(work / "new")
    compiled(args.tree)
    env = {**os.environ, "PYTHONPATH": str(args.tree.resolve() / "src")}
    sides = [Side("this tree" if args.tree == ROOT else str(args.tree), env, work / "new")]
    with baseline_tree(args.baseline) as base:
        if base is not None:
            rev, folder = base
            shutil.copytree(work / "new", work / "base")
            sides.append(Side(f"baseline {rev[:10]}",
                              {**os.environ, "PYTHONPATH": str(folder / "src")}, work / "base"))
        report(sides, count, work, snapshots=not args.commands_only)
    shutil.rmtree(work, ignore_errors=True)


@contextmanager
def baseline_tree(baseline: str) -> Iterator[tuple[str, Path] | None]:
    if baseline == "none":
        yield None
        return
    rev = auto_baseline() if baseline == "auto" else git("rev-parse", baseline)
    with worktree(rev) as folder:
        yield rev, folder


def report(sides: list[Side], count: int, work: Path, snapshots: bool = True) -> None:
    for side in sides:
        where = subprocess.run([sys.executable, "-c", "import memhtml; print(memhtml.__file__)"],
                               check=True, capture_output=True, text=True, env=side.env)
        print(f"{side.name}: memhtml from {Path(where.stdout.strip()).parent.parent}")
    print(f"store: {count} memories (SciFact) under {work}; load average {loadavg()}")
    firsts = alternating(sides, lambda side: [first_load(side)], FIRST_RUNS) \
        if snapshots else []
    solo = alternating(sides, alone, 3) if snapshots else []
    for side, first, timed in zip(sides, firsts, solo, strict=False):
        loads = [t for kind, t in timed if kind == "load"]
        saves = [t for kind, t in timed if kind == "save"]
        print(f"{side.name:24s} first status (full load + snapshot write) median "
              f"{statistics.median(first):.2f} s of {FIRST_RUNS}; snapshot "
              f"{snapshot_bytes(side) / 1e6:.1f} MB")
        print(f"{'':24s} read_snapshot alone median {statistics.median(loads) * 1e3:.0f} ms, "
              f"min {min(loads) * 1e3:.0f} ms of {len(loads)}; save_snapshot alone median "
              f"{statistics.median(saves) * 1e3:.0f} ms of {len(saves)}")
    if not snapshots:
        # Warm each side once: the first command of a store writes its snapshot.
        for side in sides:
            wall(side.memhtml("status"), side.env)
    main_side = sides[0]
    fixed = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "git log -1": ["git", "-C", str(main_side.store), "log", "-1", "--format=%H"],
    }
    for name, argv in fixed.items():
        times = [wall(argv, main_side.env) for _ in range(RUNS)]
        print(f"{name:26s} median {statistics.median(times):.3f} s  min {min(times):.3f} s")
    gist = memory_path(next(read_corpus(scifact_dir() / "corpus.jsonl")))
    commands: dict[str, Callable[[Side], list[str]]] = {
        "memhtml status": lambda side: side.memhtml("status"),
        "memhtml search": lambda side: side.memhtml("search", "cell proliferation"),
        "memhtml read --tier gist": lambda side: side.memhtml("read", gist, "--tier", "gist"),
    }
    written = iter(range(1_000_000))

    def new_memory(side: Side) -> list[str]:
        # A write per run, each a new memory with a claim of its own (a claim the store
        # holds is refused): the store grows by RUNS on each side, and the figure is the
        # issue's write latency, door to commit to checkout, beside the baseline.
        n = next(written)
        return side.memhtml("write", "--title", f"Bench write {n}", "--claim",
                            f"Write number {n} measured from a new process on a large store.")

    commands["memhtml write"] = new_memory
    # A command a baseline may not have yet is timed on the sides that have it.
    commands["memhtml list resources/"] = lambda side: side.memhtml("list", "resources/")
    for name, command in commands.items():
        having = [side for side in sides if has_command(side, command(side))]
        if having != sides:
            print(f"{name:26s} not in {', '.join(s.name for s in sides if s not in having)}")
        sides_now = having
        measured = alternating(sides_now, timing(command), RUNS)
        for side, times in zip(sides_now, measured, strict=True):
            print(f"{name:26s} {side.name:22s} median {statistics.median(times):.3f} s  "
                  f"min {min(times):.3f} s")
    print(f"load average at the end {loadavg()}")


if __name__ == "__main__":
    main()
