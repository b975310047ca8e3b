"""Shared test configuration: hypothesis profiles.

CI runs the derandomized profile so a red build is reproducible from its log;
``HYPOTHESIS_PROFILE=dev`` explores new examples locally.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

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
