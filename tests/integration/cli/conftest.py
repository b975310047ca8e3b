"""Fixtures for the CLI tests: a fresh store made by ``memhtml init``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.cli.cli_support import call


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's own MEMHTML_* settings must not leak into what a test sees.
    import os

    for name in list(os.environ):
        if name.startswith("MEMHTML_"):
            monkeypatch.delenv(name)


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "store"
    code, answer = call(capsys, "init", str(root), "--json")
    assert code == 0, answer
    return root
