"""The fork pool returns, or raises, what the list comprehension would; it leaves no
child behind, whatever a child or the parent's own share does."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.adapters import fork_pool as pools
from memhtml.adapters.fork_pool import _dealt, fork_pool, usable_cores


def ForkPool(workers: int, min_share: int) -> pools.ForkPool:  # noqa: N802
    """The pool, told it may fork here: the test runner's worker runs a thread of its
    own (pytest-xdist's channel), which holds nothing the work below needs."""
    return pools.ForkPool(workers, min_share, may_fork=lambda: True)


def _children() -> set[int]:
    """This process's live children, as the kernel lists them per thread."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(FileNotFoundError):
            found.update(int(pid) for pid in (task / "children").read_text().split())
    return found


_BEFORE: set[int] = set()


@pytest.fixture(autouse=True)
def _children_before() -> None:
    """The children this test found (a test runner may keep a launcher of its own);
    a pool must leave no others."""
    _BEFORE.clear()
    _BEFORE.update(_children())


def _no_children_left() -> bool:
    return _children() <= _BEFORE


def _square(value: int) -> tuple[int, int, str]:
    return value, value * value, str(value) * (value % 5)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-10**6, 10**6), max_size=40), st.integers(1, 4),
       st.integers(1, 6))
def test_the_pool_returns_what_the_comprehension_does(items: list[int], workers: int,
                                                      min_share: int) -> None:
    pool = ForkPool(workers, min_share)
    assert pool(_square, items) == [_square(x) for x in items]
    assert _no_children_left()


def test_each_child_computes_its_share_in_another_process() -> None:
    parent = os.getpid()
    pids = ForkPool(3, 1)(lambda _: os.getpid(), list(range(30)))
    assert len(set(pids)) == 3
    counts = sorted(pids.count(pid) for pid in set(pids))
    assert pids.count(parent) == counts[0] >= 8 and counts[-1] <= 11
    assert _no_children_left()


def test_few_items_run_in_the_caller() -> None:
    parent = os.getpid()
    assert ForkPool(4, 10)(lambda _: os.getpid(), list(range(19))) == [parent] * 19


def test_a_share_whose_child_dies_is_computed_by_the_parent() -> None:
    parent = os.getpid()

    def fragile(value: int) -> int:
        if os.getpid() != parent and value == 7:
            os.kill(os.getpid(), signal.SIGKILL)
        return value + 1

    assert ForkPool(2, 1)(fragile, list(range(12))) == list(range(1, 13))
    assert _no_children_left()


def test_an_exception_in_a_child_is_raised_as_the_comprehension_raises_it() -> None:
    def picky(value: int) -> int:
        if value == 5:
            raise ValueError("five")
        return value

    with pytest.raises(ValueError, match="five"):
        ForkPool(2, 1)(picky, list(range(8)))
    assert _no_children_left()


def test_an_exception_in_the_parents_share_ends_the_children() -> None:
    parent = os.getpid()

    def slow_in_children(value: int) -> int:
        if os.getpid() != parent:
            signal.pause()  # would wait forever: only a kill ends it
        if value == _dealt(9, 3)[0][0]:  # a position of the parent's own share
            raise KeyError(value)
        return value

    with pytest.raises(KeyError):
        ForkPool(3, 1)(slow_in_children, list(range(9)))
    assert _no_children_left()


def test_results_that_do_not_pickle_are_computed_by_the_parent() -> None:
    parent = os.getpid()
    values = ForkPool(2, 1)(lambda v: (lambda: v) if os.getpid() != parent else v,
                            list(range(4)))
    assert values == [0, 1, 2, 3]  # the parent's own results, recomputed there
    assert _no_children_left()


def test_the_default_pool_uses_the_usable_cores() -> None:
    assert fork_pool().workers == usable_cores() >= 1


@given(st.integers(0, 500), st.integers(1, 5))
def test_every_position_is_dealt_once_and_the_caller_is_dealt_least(count: int,
                                                                    workers: int) -> None:
    shares = _dealt(count, workers)
    assert sorted(p for share in shares for p in share) == list(range(count))
    sizes = [len(share) for share in shares]
    assert sizes[0] == min(sizes) and max(sizes) - min(sizes) <= 1 + count // 10


def test_a_process_running_another_thread_is_not_forked() -> None:
    parent = os.getpid()
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert pools.ForkPool(2, 1)(lambda _: os.getpid(), list(range(8))) == [parent] * 8
    finally:
        stop.set()
        other.join()


def test_a_command_process_forks() -> None:
    """The command's process runs one thread, so its pool forks (a process of its own
    here: the test runner's may run threads)."""
    script = ("import os; from memhtml.adapters.fork_pool import fork_pool; "
              "pids = fork_pool(2)(lambda _: os.getpid(), list(range(200))); "
              "print(len(set(pids)), pids.count(os.getpid()))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    processes, own = done.stdout.split()
    assert processes == "2" and 80 <= int(own) < 100
