"""Fixtures for the CLI tests: a fresh store made by ``memhtml init``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.cli.cli_support import call


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's own MEMHTML_* settings must not leak into what a test sees. The
    # cache directory and the embedder stay: tests/conftest.py points the one at a
    # temporary folder (without it the md commands would write, and prune, the user's
    # own cache) and sets the other to none (lexical, unless a test asks).
    import os

    for name in list(os.environ):
        if name.startswith("MEMHTML_") and name not in ("MEMHTML_CACHE_DIR", "MEMHTML_EMBEDDER"):
            monkeypatch.delenv(name)


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "store"
    code, answer = call(capsys, "init", str(root), "--json")
    assert code == 0, answer
    return root
