"""Helpers shared by the benchmarks: data location, timing, and reporting."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from returns.io import IOResult

from memhtml.compose import value_of

T = TypeVar("T")
E = TypeVar("E")

ROOT = Path(__file__).resolve().parent.parent
SCIFACT = Path(os.environ.get("MEMHTML_SCIFACT", ROOT.parent / "shared" / "data" / "scifact"))


def compiled(tree: Path) -> None:
    """Byte-compile a checkout's sources, so a command process started from them reads
    bytecode as an installed memhtml does (with PYTHONDONTWRITEBYTECODE set, nothing
    else would write it, and every start would compile every module it imports)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "src")], check=True,
                   stdout=subprocess.DEVNULL)


def scifact_dir() -> Path:
    """The SciFact data directory, or exit with a clear message when it is missing."""
    if not (SCIFACT / "corpus.jsonl").exists():
        raise SystemExit(f"SciFact not found at {SCIFACT}; set MEMHTML_SCIFACT to its directory")
    return SCIFACT


def best_of(runs: int, fn: Callable[[], object]) -> float:
    """The fastest of ``runs`` wall-clock timings of ``fn``, in seconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def percentile(samples: list[float], q: float) -> float:
    """The q-quantile (0..1) of samples."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def median(samples: list[float]) -> float:
    return statistics.median(samples) if samples else 0.0


def run(io: IOResult[T, E]) -> T:
    """A service call's value in a benchmark; its typed error, raised, otherwise."""
    return value_of(io)


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn``'s value and its wall-clock seconds."""
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start
