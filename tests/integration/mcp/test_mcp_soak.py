"""A long session stays bounded: the server's resident set after a few hundred mixed
calls (every tool, a third of them writes) is within a bound of where it stood after
the warm-up.

The short form of ``python -m bench.mcp_soak`` (which makes 10,000 calls on 4,000
SciFact memories; its figures are in docs/benchmarks.md): the same seeded mix, the
same server process driven by the official client over stdio, on a small generated
store. The calls the mix makes are the ones that grew the server before: every write
leaves a mark that each later call looks up (pygit2 kept every name it was asked
about), a thread per call gave glibc a heap per thread, and the cyclic collector was
off in the server, so a reference cycle a call made stayed. Together they grew this
run by 26 MB (about 40 KB a call, more as the marks pile up); it now grows by about
3 MB. The bound sits between the two, well under the 50 MB the full run is held to.

RSS is read from ``/proc``, so the test runs on Linux only.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from bench.mcp_soak import (
    MIX,
    SEED,
    Soak,
    checkout_store,
    generated_docs,
    generated_queries,
    run_soak,
)

MEMORIES = 300
WARMUP = 150
CALLS = 600
BOUND_MB = 12.0
"""Growth allowed over ``CALLS`` calls after the warm-up: what is left is the new
memories themselves and the allocator's slack, a few MB."""

COMMITTING = ("memory_write", "memory_correct", "memory_archive", "memory_link",
              "memory_label", "task_add", "task_status")
"""The tools whose every call is a commit, and so a write mark later calls look up."""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads the resident set from /proc")


def test_a_long_session_of_mixed_calls_stays_bounded(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    docs = generated_docs(MEMORIES)
    checkout_store(root, docs)
    mix = Soak(queries=generated_queries(50), paths=[path for path, _ in docs],
               rng=random.Random(SEED))

    readings = run_soak(root, mix, CALLS, WARMUP, every=CALLS // 3)

    assert set(mix.counts) == {name for name, _ in MIX}, mix.counts
    assert mix.refused == {}, mix.refused
    commits = sum(mix.counts[name] for name in COMMITTING)
    assert commits > CALLS // 4, mix.counts
    start, end = readings[0].rss_kb, readings[-1].rss_kb
    growth = (end - start) / 1024
    print(f"RSS after warm-up {start / 1024:.1f} MB, after {CALLS} calls {end / 1024:.1f} MB")
    assert growth < BOUND_MB, [(r.calls, r.rss_kb) for r in readings]
