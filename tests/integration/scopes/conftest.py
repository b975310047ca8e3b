"""Fixtures for the scope tests: a person's own store and a team store, both made by
``memhtml init``, and the person's config file naming the team store as a scope."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.cli.cli_support import call


@dataclass(frozen=True)
class Stores:
    own: Path
    team: Path
    config: Path
    """The person's ``memhtml/config.toml`` under ``XDG_CONFIG_HOME``."""

    def scopes(self, table: str) -> None:
        """The person's config file holding ``table`` (TOML) and nothing else."""
        self.config.write_text(table, encoding="utf-8")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("MEMHTML_") and name not in ("MEMHTML_CACHE_DIR", "MEMHTML_EMBEDDER"):
            monkeypatch.delenv(name)


@pytest.fixture
def stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
           capsys: pytest.CaptureFixture[str]) -> Stores:
    xdg = tmp_path / "xdg"
    (xdg / "memhtml").mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    own, team = tmp_path / "own", tmp_path / "team"
    for root in (own, team):
        code, answer = call(capsys, "init", str(root), "--json")
        assert code == 0, answer
    made = Stores(own, team, xdg / "memhtml" / "config.toml")
    made.scopes(f'[scopes]\nteam = "{team}"\n')
    return made


def write(capsys: pytest.CaptureFixture[str], store: Path, title: str, claim: str,
          *extra: str) -> str:
    """A memory written through the CLI; its path."""
    code, answer = call(capsys, "write", "--title", title, "--claim", claim,
                        "--store", str(store), "--json", *extra)
    assert code == 0, answer
    return str(answer["new"][0])
