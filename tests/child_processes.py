"""Child processes for the tests that race several processes on one store.

Those tests used the ``spawn`` start method rather than ``fork`` (a fork of a pytest
worker, which runs threads, may copy a lock another thread held), and each spawned
child started an interpreter and imported the test module again: pytest, hypothesis
and memhtml, about half a second of a core per child, most of the children's time (a profile of the
store, CLI and sleep tests: 1,483 of about 1,950 samples in spawned children were
imports; the three tests that use this, alone: 4 s of the machine's CPU against 14 s).
``forkserver`` keeps the safety and drops the cost: one server per worker, started as a
fresh interpreter that imports ``PRELOAD`` once, forks each child from its single
thread. The children run the same code on the same store; only their start differs.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.context import ForkServerContext
from typing import Final

PRELOAD: Final = ("pytest", "hypothesis", "returns.io", "pygit2", "memhtml.store",
                  "memhtml.sleep.runner", "memhtml.sleep.merge", "memhtml.compose.sleep",
                  "memhtml.compose.services", "memhtml.adapters.git",
                  "memhtml.adapters.memory_state", "memhtml.adapters.state_db",
                  "memhtml.adapters.snapshot_files")
"""What the children's targets need (the modules their tests import), loaded once by
the server. A name that does not import is skipped by ``multiprocessing``; the child
then imports it itself, slower but the same."""


def child_context() -> ForkServerContext:
    """The ``forkserver`` context, its server preloading ``PRELOAD`` (the list is
    read when the server starts, once per process)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))
    return context
