"""Each contract test runs once per implementation: the pygit2 adapter and its double."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contract.git_backends import Backend, make_backend

KINDS = ["pygit", "memory"]


@pytest.fixture(params=KINDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """A bare repository, as the store keeps one."""
    return make_backend(request.param, tmp_path / "store.git", bare=True)


@pytest.fixture(params=KINDS)
def checkout(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """A repository with a working tree, hence an index."""
    return make_backend(request.param, tmp_path / "checkout", bare=False)
