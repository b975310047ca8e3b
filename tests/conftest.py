"""Shared test configuration: hypothesis profiles.

CI runs the derandomized profile so a red build is reproducible from its log;
``HYPOTHESIS_PROFILE=dev`` explores new examples locally.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", deadline=None, max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

EMBEDDER_ENV = "MEMHTML_EMBEDDER"
TEMP_ENV = "MEMHTML_TEST_TMP"
RAM = Path("/dev/shm")
RAM_FREE_AT_LEAST = 6 * 1024**3
"""The room a memory-backed file system must have before the suite's temporary
directories go there: a whole run held at most 415 MB there (docs/benchmarks.md,
"The suite's own time"), a failing test's folder is kept, and a container's default
``/dev/shm`` (64 MB) is far below this, so there the suite stays on disk."""
_PREFIX = "mhp-"
"""Short, so a test's paths are no longer in memory than under pytest's own
``/tmp/pytest-of-USER/pytest-N``: a Unix socket's path has a limit of about 107 bytes,
and the warm-answer socket (``<git-dir>/memhtml/warm.sock``) must fit."""
_RAM_KEY = pytest.StashKey[Path]()
_FAILED_KEY = pytest.StashKey[bool]()


def _ram_base() -> Path | None:
    """A new directory on ``/dev/shm`` for this run's temporary directories, or None
    (``MEMHTML_TEST_TMP=disk``, no such file system, or too little room).

    Every test builds git repositories, and a test store's thousand small files cost
    about 1 ms each to create or delete on this machine's disk against 0.1 ms in
    memory: the kill suite's fresh copy of its store took 1.0-1.7 s on disk and 0.12 s
    in memory. Nothing a test checks depends on the disk (a kill is a process ending,
    which the page cache survives alike; no test cuts power). Directories of earlier
    runs whose process has ended are removed first: in memory they outlive nothing."""
    if os.environ.get(TEMP_ENV, "ram") == "disk":
        return None
    try:
        room = shutil.disk_usage(RAM)
        if not RAM.is_dir() or room.free < RAM_FREE_AT_LEAST:
            return None
        for old in RAM.glob(f"{_PREFIX}*"):
            with contextlib.suppress(OSError, ValueError):
                owner = int((old / "pid").read_text(encoding="ascii"))
                if old.stat().st_uid == os.getuid() and not _alive(owner):
                    shutil.rmtree(old, ignore_errors=True)
        made = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=RAM))
        (made / "pid").write_text(str(os.getpid()), encoding="ascii")
    except OSError:
        return None
    return made


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The run's temporary directories in memory when the machine has room there
    (``_ram_base``), unless ``--basetemp`` names a place; xdist's workers are handed
    their place by the controller, under the one chosen here."""
    if config.option.basetemp or hasattr(config, "workerinput"):
        return
    base = _ram_base()
    if base is not None:
        config.option.basetemp = str(base / "t")
        config.stash[_RAM_KEY] = base


def pytest_unconfigure(config: pytest.Config) -> None:
    """The in-memory directories go when the run ends, unless a test failed: its
    directory is kept for a look (the next run removes it)."""
    base = config.stash.get(_RAM_KEY, None)
    if base is not None and not config.stash.get(_FAILED_KEY, False):
        shutil.rmtree(base, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus != 0:
        session.config.stash[_FAILED_KEY] = True



def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (``just test``): one worker more than the cores this process may use,
    unless ``PYTEST_XDIST_AUTO_NUM_WORKERS`` says (None: xdist's own rule reads it).
    Much of the suite waits rather than computes (MCP and git servers, the team's timed
    load, the real model's server, Chromium, timers), so two workers on two cores left
    about 150 core-seconds of a run idle; a third fills them. On the 2-core machine, the
    same commit (6ee117d): 425.7 s with three workers against 481.7 s and 485.4 s with
    two (docs/benchmarks.md, "The suite's own time")."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    usable = getattr(os, "sched_getaffinity", None)  # not on macOS
    cores = len(usable(0)) if usable is not None else os.cpu_count() or 1
    return cores + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``first`` (the real-model night, the crash, kill and hostile-clone
    suites: the longest in the durations) run before the rest, in their own order:
    under xdist's work stealing a long test collected late keeps one worker busy
    after the other has finished, and the light tests then fill both workers to the
    end instead."""
    items.sort(key=lambda item: item.get_closest_marker("first") is None)


@pytest.fixture(autouse=True, scope="session")
def _no_user_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test reads the developer's own ``~/.config/memhtml/config.toml``: settings
    that name endpoints come from there, and a test must not depend on (or reach) them.
    Session-scoped (hypothesis refuses function-scoped fixtures); subprocesses inherit
    the variable."""
    previous = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("xdg-config"))
    yield
    if previous is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = previous


@pytest.fixture(autouse=True, scope="session")
def _no_user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test writes the markdown index cache into the developer's ``~/.cache``."""
    previous = os.environ.get("MEMHTML_CACHE_DIR")
    os.environ["MEMHTML_CACHE_DIR"] = str(tmp_path_factory.mktemp("memhtml-cache"))
    yield
    if previous is None:
        os.environ.pop("MEMHTML_CACHE_DIR", None)
    else:
        os.environ["MEMHTML_CACHE_DIR"] = previous


@pytest.fixture(autouse=True, scope="session")
def _lexical_unless_asked() -> Iterator[None]:
    """Searches and writes run lexical (``MEMHTML_EMBEDDER=none``, which wins over a
    store's recorded embedder) unless a test asks otherwise: ``memhtml init`` records
    the offline model in every new store, and loading it in each of the suite's
    thousands of command processes would cost minutes while testing nothing new.
    The default path (a new store searching hybrid from its first write) has tests
    of its own, which clear the variable (``default_embedder``)."""
    previous = os.environ.get(EMBEDDER_ENV)
    os.environ[EMBEDDER_ENV] = "none"
    yield
    if previous is None:
        os.environ.pop(EMBEDDER_ENV, None)
    else:
        os.environ[EMBEDDER_ENV] = previous


@pytest.fixture
def default_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """This test sees what a person sees: no ``MEMHTML_EMBEDDER``, so the store's
    recorded embedder (``local`` in a new store) is the one used."""
    monkeypatch.delenv(EMBEDDER_ENV, raising=False)
