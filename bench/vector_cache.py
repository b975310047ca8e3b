"""bench/vector_cache: what the vector cache's save and load cost at a store's size.

A set of N rows (a 5,000-memory store holds about 17,000: each memory's content hash
and its passages, 384-wide float32) is saved, then measured through the port
(``VectorFiles``), in a worker process per tree so that each side runs its own code
whole (``cache_from`` included):

- ``save +1`` / ``save +8``: a save adding 1 row (a content hash) or 8 (a content
  hash and a passage group of 7), sixteen in a row, each on a fresh handle (a
  command) and, for a tree whose handle keeps what it read, on one handle that has
  loaded the set (a long-lived process);
- ``cold load``: a fresh handle's load; ``warm load``: a load on a handle that read
  the set before (unchanged, and after another handle added a segment);
- ``cache_from``: building the cache value over the N rows of a read-only matrix
  (what a loaded set is).

Both trees run alternately, ``--rounds`` times; each round ends with the two trees'
``cache_from`` timed in turn in this process. The baseline is a tree extracted by
``git archive <commit> src | tar -x -C DIR``, given as ``--baseline DIR/src``.

``--policies`` measures this tree's compaction instead: a long run of small saves
under several ``Compaction`` settings (amortized and worst save, rows written per
row added, segments at the end and the cold load they cost), and the cold load of a
set split into 1 to 32 segments.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 384
MODEL = "bench-model"
SAVES = 16
LOADS = 9


def keys_for(rows: int) -> list[str]:
    """``rows`` keys as a store holds them: per memory its content hash and a passage
    group of 1 to 4 rows (2.5 on average); the last group is whole."""
    keys: list[str] = []
    memory = 0
    while len(keys) < rows:
        digest = hashlib.sha256(str(memory).encode()).hexdigest()
        keys.append(f"sha256:{digest}")
        group = f"P1-{digest[:40]}"
        size = min(1 + memory % 4, rows - len(keys))
        keys.extend(f"{group}.{i}" for i in range(size))
        memory += 1
    return keys


def new_rows(tag: str, count: int) -> list[str]:
    digest = hashlib.sha256(tag.encode()).hexdigest()
    keys = [f"sha256:{digest}"]
    keys.extend(f"P1-{digest[:40]}.{i}" for i in range(count - 1))
    return keys


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def summary(samples: list[float]) -> dict[str, float]:
    return {"median": statistics.median(samples), "mean": statistics.fmean(samples),
            "max": max(samples)}


# --------------------------------------------------------------------------- worker


def worker(size: int, folder: Path) -> dict[str, Any]:
    """Run in the tree under test (``memhtml`` as that tree has it)."""
    from returns.pipeline import is_successful

    from memhtml.adapters.vector_cache import VectorFiles
    from memhtml.contracts.services import VectorSpace
    from memhtml.contracts.vectors import VectorCache, cache_from

    space = VectorSpace(MODEL, WIDTH)
    rng = np.random.default_rng(size)

    def cache_of(keys: list[str]) -> VectorCache:
        matrix = rng.standard_normal((len(keys), WIDTH)).astype(np.float32)
        return cache_from(space, dict(zip(keys, matrix, strict=True)))

    def ok(io: object) -> None:
        assert is_successful(io), io  # type: ignore[arg-type]

    root = folder / "vectors"
    ok(VectorFiles(root).save(cache_of(keys_for(size))))
    warm_kind = hasattr(VectorFiles(root), "compact")
    out: dict[str, Any] = {"rows": size, "warm": warm_kind}
    out["cold load"] = summary([timed(lambda: ok(VectorFiles(root).load(space)))
                                for _ in range(LOADS)])
    saves = 0

    def save_rows(handle: Any, count: int) -> float:
        nonlocal saves
        saves += 1
        cache = cache_of(new_rows(f"{size}-{saves}", count))
        return timed(lambda: ok(handle.save(cache)))

    for count in (1, 8):
        out[f"save +{count}, fresh handle"] = summary(
            [save_rows(VectorFiles(root), count) for _ in range(SAVES)])
    if warm_kind:
        handle = VectorFiles(root)
        ok(handle.load(space))
        out["warm load, unchanged"] = summary([timed(lambda: ok(handle.load(space)))
                                               for _ in range(LOADS)])
        for count in (1, 8):
            out[f"save +{count}, warm handle"] = summary(
                [save_rows(handle, count) for _ in range(SAVES)])
        other = VectorFiles(root)
        grown = []
        for _ in range(LOADS):
            save_rows(other, 8)
            grown.append(timed(lambda: ok(handle.load(space))))
        out["warm load, another handle added 8"] = summary(grown)
        out["cold load after the saves"] = summary(
            [timed(lambda: ok(VectorFiles(root).load(space))) for _ in range(LOADS)])
        manifest = json.loads((root / space.key / "manifest.json").read_text())
        out["parts after the saves"] = len(manifest["parts"])
    # The rows of one read-only matrix, as a loaded set holds them.
    matrix = rng.standard_normal((size, WIDTH)).astype(np.float32)
    matrix.setflags(write=False)
    rows = dict(zip(keys_for(size), matrix, strict=True))
    out["cache_from"] = summary([timed(lambda: cache_from(space, rows)) for _ in range(LOADS)])
    return out


def run_worker(tree: Path, size: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{ROOT}"}
        done = subprocess.run(
            [sys.executable, "-m", "bench.vector_cache", "--worker", str(size), scratch],
            env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"worker for {tree} failed:\n{done.stderr}")
        result: dict[str, Any] = json.loads(done.stdout)
        return result


# --------------------------------------------------------------------------- policies


def policies(size: int, added: int, batch: int) -> None:
    from returns.pipeline import is_successful

    from memhtml.adapters import vector_files
    from memhtml.adapters.vector_cache import VectorFiles
    from memhtml.adapters.vector_layout import Compaction
    from memhtml.contracts.services import VectorSpace
    from memhtml.contracts.vectors import cache_from

    space = VectorSpace(MODEL, WIDTH)
    rng = np.random.default_rng(size)
    base = keys_for(size)
    base_cache = cache_from(space, dict(zip(
        base, rng.standard_normal((size, WIDTH)).astype(np.float32), strict=True)))
    written = [0]
    real = vector_files._write_part

    def counting(folder: Path, space_: VectorSpace, generation: str, rows: Any) -> Any:
        written[0] += len(rows)
        return real(folder, space_, generation, rows)

    vector_files._write_part = counting  # type: ignore[assignment]
    settings = [Compaction(0.25, 1.0, 24), Compaction(0.5, 1.0, 24), Compaction(1.0, 1.0, 24),
                Compaction(0.5, 2.0, 24), Compaction(0.5, 0.5, 24), Compaction(0.5, 1.0, 8)]
    print(f"{size:,} rows, then {added:,} added {batch} per save "
          f"({added // batch:,} saves on one handle)")
    print(f"{'compaction':34s} {'mean':>7s} {'p50':>7s} {'p99':>7s} {'max':>7s} "
          f"{'written/added':>14s} {'parts':>6s} {'max parts':>9s} {'cold load':>9s}")
    for policy in settings:
        run_policy(policy, base_cache, added, batch, written)
    vector_files._write_part = real
    print("\ncold load (ms) of one base and s segments of 8 rows, each set loaded in turn "
          "(15 rounds)")
    counts = (0, 8, 16, 24, 32)
    with tempfile.TemporaryDirectory() as scratch:
        roots = {}
        for segments in counts:
            roots[segments] = Path(scratch) / str(segments)
            handle = VectorFiles(roots[segments], Compaction(1e9, 0.0, 1_000))
            assert is_successful(handle.save(base_cache))
            for step in range(segments):
                keys = new_rows(f"s{step}", 8)
                handle.save(cache_from(space, dict(zip(keys, rng.standard_normal(
                    (8, WIDTH)).astype(np.float32), strict=True))))
        loads: dict[int, list[float]] = {segments: [] for segments in counts}
        for _ in range(15):
            for segments in counts:
                start = time.perf_counter()
                assert is_successful(VectorFiles(roots[segments]).load(space))
                loads[segments].append((time.perf_counter() - start) * 1000)
        for segments in counts:
            extra = [a - b for a, b in zip(loads[segments], loads[0], strict=True)]
            print(f"  {segments:2d} segments: median {statistics.median(loads[segments]):6.1f}, "
                  f"min {min(loads[segments]):6.1f}, median over none "
                  f"{statistics.median(extra):+6.2f}")


def run_policy(policy: Any, base_cache: Any, added: int, batch: int,
               written: list[int]) -> None:
    from returns.pipeline import is_successful

    from memhtml.adapters.vector_cache import VectorFiles
    from memhtml.contracts.vectors import cache_from

    space = base_cache.space
    rng = np.random.default_rng(batch)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        handle = VectorFiles(root, policy)
        assert is_successful(handle.save(base_cache))
        written[0] = 0
        samples = []
        most = 1
        folder = root / space.key
        for step in range(added // batch):
            keys = new_rows(f"p{step}", batch)
            cache = cache_from(space, dict(zip(keys, rng.standard_normal(
                (batch, WIDTH)).astype(np.float32), strict=True)))
            start = time.perf_counter()
            assert is_successful(handle.save(cache))
            samples.append((time.perf_counter() - start) * 1000)
            manifest = json.loads((folder / "manifest.json").read_text())
            most = max(most, len(manifest["parts"]))
        loads = [timed(lambda: VectorFiles(root).load(space)) for _ in range(5)]
    ordered = sorted(samples)
    print(f"{policy!s:34.34s} {statistics.fmean(samples):6.2f}  "
          f"{statistics.median(samples):6.2f}  "
          f"{ordered[int(0.99 * len(ordered))]:6.2f}  {max(samples):6.1f}  "
          f"{written[0] / added:13.2f}  {len(manifest['parts']):5d}  {most:8d}  "
          f"{statistics.median(loads):8.1f}")


def cache_from_side_by_side(baseline: Path, sizes: list[int]) -> None:
    """The baseline's ``cache_from`` (its module loaded under another name) and this
    tree's, timed in turn in this process over the rows of one read-only matrix."""
    import importlib.util

    from memhtml.contracts.services import VectorSpace
    from memhtml.contracts.vectors import cache_from

    spec = importlib.util.spec_from_file_location(
        "baseline_vectors", baseline / "memhtml" / "contracts" / "vectors.py")
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = old  # its dataclasses look their module up
    spec.loader.exec_module(old)
    space = VectorSpace(MODEL, WIDTH)
    print("\ncache_from over N rows of a read-only matrix, the two in turn (15 rounds, ms)")
    for size in sizes:
        matrix = np.random.default_rng(size).standard_normal((size, WIDTH)).astype(np.float32)
        matrix.setflags(write=False)
        rows = dict(zip(keys_for(size), matrix, strict=True))
        before: list[float] = []
        after: list[float] = []
        for _ in range(15):
            for cache_from_of, samples in ((old.cache_from, before), (cache_from, after)):
                start = time.perf_counter()
                cache_from_of(space, rows)
                samples.append((time.perf_counter() - start) * 1000)
        ratios = sorted(b / a for b, a in zip(before, after, strict=True))
        print(f"  {size:,} rows: baseline median {statistics.median(before):6.1f}, "
              f"this tree {statistics.median(after):6.1f}, baseline / this tree "
              f"{statistics.median(ratios):.2f}x (min {ratios[0]:.2f}x)")


# --------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="the baseline tree's src folder")
    parser.add_argument("--sizes", type=int, nargs="+", default=[17_000, 60_000])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--policies", action="store_true")
    parser.add_argument("--added", type=int, default=17_000)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("scratch", nargs="?", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.scratch)))
        return
    if args.policies:
        print(f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, "
              f"load average {os.getloadavg()[0]:.2f}")
        for size in args.sizes:
            policies(size, args.added, args.batch)
        return
    trees = [("this tree", ROOT / "src")]
    if args.baseline is not None:
        trees.insert(0, ("baseline", args.baseline))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    print(f"this tree at {commit}, {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, "
          f"load average {os.getloadavg()[0]:.2f}")
    for round_ in range(1, args.rounds + 1):
        for size in args.sizes:
            results = {name: run_worker(tree, size) for name, tree in trees}
            print(f"\nround {round_}, {size:,} rows (ms: median / mean / max)")
            measures = list(dict.fromkeys(m for r in results.values() for m in r
                                          if isinstance(r[m], dict)))
            print(f"{'':38s}" + "".join(f"{name:>26s}" for name, _ in trees))
            for measure in measures:
                cells = []
                for name, _ in trees:
                    found = results[name].get(measure)
                    cells.append(f"{found['median']:7.2f} / {found['mean']:7.2f} / "
                                 f"{found['max']:6.1f}" if found else f"{'-':>24s}")
                print(f"{measure:38s}" + "".join(f"{cell:>26s}" for cell in cells))
            parts = results["this tree"].get("parts after the saves")
            print(f"(this tree: {parts} parts after the saves)")
        if args.baseline is not None:
            cache_from_side_by_side(args.baseline, args.sizes)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
