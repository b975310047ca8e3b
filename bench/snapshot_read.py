"""Reading one snapshot file: the ``.npy`` records through ``load_npy`` against
``np.load`` (what every cold command pays to open a store), in the same run.

``python -m bench.snapshot_read [--rounds N]`` builds the demo store, lets one
``status`` write its snapshot, then times ``read_snapshot`` with each reader,
alternating, and prints the medians and their ratio."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from returns.unsafe import unsafe_perform_io

import memhtml.contracts.array_records as records
from memhtml.adapters import snapshot_files
from memhtml.adapters.snapshot_files import read_snapshot


def _numpy_load(stream: BinaryIO) -> Any:
    return np.load(stream, allow_pickle=False)


def _use(reader: Callable[[BinaryIO], Any]) -> None:
    for module in (records, snapshot_files):
        setattr(module, "load_npy", reader)  # noqa: B010 - the reader under test


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=200)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "demo"
        for argv in (["demo", "--dir", str(store)], ["--store", str(store), "status"]):
            subprocess.run([sys.executable, "-m", "memhtml", *argv], check=True,
                           capture_output=True)
        snapshot = next((store / ".git" / "memhtml" / "snapshots").iterdir())
        quick = records.load_npy
        times: dict[str, list[float]] = {"load_npy": [], "np.load": []}
        for _ in range(rounds):
            for name, reader in (("load_npy", quick), ("np.load", _numpy_load)):
                _use(reader)
                started = time.perf_counter()
                unsafe_perform_io(read_snapshot(snapshot).unwrap())
                times[name].append(time.perf_counter() - started)
        _use(quick)
        size = snapshot.stat().st_size
    medians = {name: statistics.median(found) * 1000 for name, found in times.items()}
    print(f"snapshot {size:,} bytes, {rounds} rounds each, alternating")
    for name, median in medians.items():
        print(f"  {name:9} median {median:7.2f} ms")
    print(f"  ratio load_npy / np.load: {medians['load_npy'] / medians['np.load']:.2f}")


if __name__ == "__main__":
    main()
