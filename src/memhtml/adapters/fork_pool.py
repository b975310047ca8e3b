"""A pure function over many items on every core this process may use, by ``fork``.

``ForkPool`` is the ``contracts.services.FanOut`` the CLI hands the markdown import:
its per-note work (converting a note, rendering its file and reading that file back
through the format's check) is pure, and one core does it at a few hundred notes a
second. The items are dealt by position, in turn, to one share a worker (the caller's
a little smaller, ``CALLER_WEIGHT``); the calling process works through its share
itself while each other share runs in a child forked from it, so the function and its
items reach the child as the parent's own memory (nothing is pickled on the way in,
closures included), and each child writes its results, pickled, into an anonymous
file the parent made before forking and reads back once the child has exited: values
this process's own code computed, never anything read from a working tree.

A share whose child does not finish cleanly (an exception, a signal, results that do
not read back) is computed again by the parent, so what a call returns, or raises, is
what ``[fn(x) for x in items]`` would: the pool changes where the work runs, never
its result. A child ends with ``os._exit``: it runs no ``atexit`` hook, flushes none of
the parent's buffered output and closes nothing the parent holds. When the parent's
own share raises (an interrupt, a bug), the children are killed and reaped first.

A process running other threads is never forked: its work runs in the caller (the
CLI's import runs one thread). Few items run in the caller too: a fork, the children's
page faults and the pickling cost more than they save below ``min_share`` items a
worker (measured in docs/benchmarks.md, "Markdown import at scale").
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")

MIN_SHARE = 48
"""Fewest items a worker is given: below twice this, a call runs in the caller. Whole
imports timed in pairs, one process against two: no faster forked at 25 and 50 notes,
faster from 100 up (docs/benchmarks.md)."""
CALLER_WEIGHT = 0.92
"""The caller's share beside a child's: it also reads back every child's results
(unpickling a child's 1,500 imported notes took it 0.3 s of the 3.5 s each side
worked), so it is dealt that much less."""


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _scratch() -> IO[bytes]:
    """An anonymous file for one child's results: in memory where the system offers
    that (``memfd_create``), else an unlinked temporary file."""
    try:
        return os.fdopen(os.memfd_create("memhtml-fork-pool", os.MFD_CLOEXEC), "w+b")
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return tempfile.TemporaryFile()


def _child(fn: Callable[[T], R], share: Sequence[T], out: IO[bytes]) -> None:
    """The forked child's whole life: compute, write, leave without cleaning up."""
    code = 1
    try:
        # The child lives for one share and exits: collecting its garbage only
        # writes to pages it shares with the parent.
        gc.disable()
        results = [fn(item) for item in share]
        pickle.dump(results, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()
        code = 0
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _collect(pid: int, out: IO[bytes]) -> list[object] | None:
    """A child's results once it has exited, or None when it did not finish cleanly."""
    _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    try:
        out.seek(0)
        loaded = pickle.load(out)
    except Exception:
        return None
    return loaded if isinstance(loaded, list) else None


def _single_threaded() -> bool:
    """Whether this process runs one thread, native ones counted (Linux lists them
    under ``/proc/self/task``): a fork copies only the calling thread, so a lock
    another thread held at that moment (a runtime's pool, a logging handler) would
    stay held in the child for good, and its parent would wait on it for good."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:  # pragma: no cover - not Linux
        return threading.active_count() == 1


@dataclass(frozen=True, slots=True)
class ForkPool:
    """``workers`` processes at most (the caller among them); a worker is given at
    least ``min_share`` items."""

    workers: int
    min_share: int = MIN_SHARE
    may_fork: Callable[[], bool] = _single_threaded
    """Whether this process may be forked now: by default, while it runs one thread
    (a test runner whose own thread holds nothing the work needs says so itself)."""

    def __call__(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        count = min(self.workers, len(items) // max(1, self.min_share))
        if count < 2 or not self.may_fork():
            return [fn(item) for item in items]
        positions = _dealt(len(items), count)
        shares = [[items[i] for i in share] for share in positions]
        # Each child not yet reaped, by its share's position.
        running: dict[int, tuple[int, IO[bytes]]] = {}
        try:
            for k in range(1, count):
                out = _scratch()
                try:
                    pid = os.fork()
                except OSError:  # no process to be had: the parent takes the share
                    out.close()
                    continue
                if pid == 0:  # pragma: no cover - runs in the child, which never returns
                    _child(fn, shares[k], out)
                running[k] = (pid, out)
            results: list[list[R]] = [[fn(item) for item in shares[0]]]
            for k in range(1, count):
                got: list[object] | None = None
                if k in running:
                    pid, out = running[k]
                    got = _collect(pid, out)
                    del running[k]
                    out.close()
                results.append(cast("list[R]", got) if got is not None
                               and len(got) == len(shares[k])
                               else [fn(item) for item in shares[k]])
        finally:
            for pid, out in running.values():
                _end(pid)
                out.close()
        ordered: list[R | None] = [None] * len(items)
        for share, share_results in zip(positions, results, strict=True):
            for position, result in zip(share, share_results, strict=True):
                ordered[position] = result
        return cast("list[R]", ordered)


def _dealt(count: int, workers: int) -> list[list[int]]:
    """Positions ``0 .. count-1`` dealt in turn to ``workers`` shares, the caller's
    (the first) dealt ``CALLER_WEIGHT`` as many: each position goes to the share
    whose count after taking it, over its weight, is least (the first on a tie)."""
    weights = [CALLER_WEIGHT, *([1.0] * (workers - 1))]
    shares: list[list[int]] = [[] for _ in range(workers)]
    for position in range(count):
        k = min(range(workers), key=lambda w: ((len(shares[w]) + 1) / weights[w], w))
        shares[k].append(position)
    return shares


def _end(pid: int) -> None:
    """Kill a child that may still run, and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def fork_pool(workers: int | None = None) -> ForkPool:
    """A pool over this process's usable cores (or ``workers``)."""
    return ForkPool(workers if workers is not None else usable_cores())


__all__ = ["CALLER_WEIGHT", "MIN_SHARE", "ForkPool", "fork_pool", "usable_cores"]
