"""A process that saves into or loads from one vector cache, for
``test_vector_concurrency``: ``python -m tests.integration.embedders.vector_worker``.

``save ROOT TAG COUNT KEEP``: COUNT saves of one batch each (two content hashes and a
passage group of three), on one kept handle (KEEP=1) or a fresh one per save.
``load ROOT STOP``: loads until the file STOP exists (or a minute has passed),
alternating a fresh handle and a kept one, and prints what it saw as JSON: every load
must succeed without a note, hold only whole batches with the vectors their keys
give, and never lose a key.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.vector_cache import VectorFiles
from memhtml.adapters.vector_layout import Compaction
from memhtml.contracts.services import VectorSpace
from memhtml.contracts.vectors import LoadedVectors, cache_from

SPACE = VectorSpace("concurrent-model", 8)
FOLDING = Compaction(fold_ratio=1.0, merge_ratio=1.0, max_segments=3)
"""Folds often, so saves remove parts while the loader reads."""


def batch_keys(tag: str, step: int) -> list[str]:
    digest = hashlib.sha256(f"{tag}-{step}".encode()).hexdigest()
    return [f"sha256:{tag}-{step}-a", f"sha256:{tag}-{step}-b",
            *(f"P1-{digest[:40]}.{i}" for i in range(3))]


def vector_of(key: str) -> np.ndarray:
    seed = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)
    return np.random.default_rng(seed).standard_normal(SPACE.dimension).astype(np.float32)


def save(root: Path, tag: str, count: int, keep: bool) -> None:
    kept = VectorFiles(root, FOLDING)
    for step in range(count):
        handle = kept if keep else VectorFiles(root, FOLDING)
        cache = cache_from(SPACE, {key: vector_of(key) for key in batch_keys(tag, step)})
        result = handle.save(cache)
        if not is_successful(result):
            raise SystemExit(f"save {tag} {step} failed: {result}")


def check(found: LoadedVectors, before: set[str], problems: list[str]) -> set[str]:
    keys = set(found.cache.vectors)
    if found.note is not None:
        problems.append(f"a note: {found.note}")
    if not before <= keys:
        problems.append(f"lost {sorted(before - keys)[:3]}")
    batches = {tuple(key.removeprefix("sha256:").split("-")[:2]) for key in keys
               if key.startswith("sha256:")}
    whole = {key for tag, step in batches for key in batch_keys(tag, int(step))}
    if keys != whole:
        problems.append(f"a partial batch: {sorted(keys ^ whole)[:3]}")
    for key, vector in found.cache.vectors.items():
        if vector.tobytes() != vector_of(key).tobytes():
            problems.append(f"the vector of {key} is not its own")
            break
    return keys


def load(root: Path, stop: Path) -> None:
    kept = VectorFiles(root)
    seen: dict[str, set[str]] = {"fresh": set(), "kept": set()}
    problems: list[str] = []
    loads = 0
    largest = 0
    deadline = time.monotonic() + 60
    while True:
        last = stop.exists() or time.monotonic() > deadline
        for kind in ("fresh", "kept"):
            result = (VectorFiles(root) if kind == "fresh" else kept).load(SPACE)
            loads += 1
            if not is_successful(result):
                problems.append(f"a failed load: {result}")
                continue
            seen[kind] = check(unsafe_perform_io(result.unwrap()), seen[kind], problems)
            largest = max(largest, len(seen[kind]))
        if last:
            break
    print(json.dumps({"loads": loads, "largest": largest, "problems": problems[:10]}))


def main(argv: list[str]) -> None:
    if argv[0] == "save":
        save(Path(argv[1]), argv[2], int(argv[3]), argv[4] == "1")
    else:
        load(Path(argv[1]), Path(argv[2]))


if __name__ == "__main__":
    main(sys.argv[1:])
