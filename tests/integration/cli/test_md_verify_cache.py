"""``md verify`` reads and writes the index cache as the other md commands do, and
``--no-cache`` leaves it alone, for every md command alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from memhtml.adapters.mdcache import CACHE_FILE
from memhtml.compose.mdcache import index_cache_dir
from tests.integration.cli.cli_support import call, call_text


@pytest.fixture
def notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMHTML_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("---\nname: alpha\n---\n\nSee [[beta]] and [[gone]].\n",
                               encoding="utf-8")
    (root / "b.md").write_text("---\nname: beta\n---\n\nThe second note.\n",
                               encoding="utf-8")
    return root


def test_verify_no_cache_neither_writes_nor_changes_the_answer(
        notes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("md", "verify", "--wikilinks", "--root", str(notes), "--json")
    cached = index_cache_dir(notes) / CACHE_FILE
    code, uncached = call(capsys, *args, "--no-cache")
    assert code == 1
    assert [f["subject"] for f in uncached["findings"]] == ["gone"]
    assert not cached.exists()
    code, first = call(capsys, *args)
    assert code == 1 and first == uncached
    assert cached.is_file()
    written = cached.stat().st_mtime_ns
    code, again = call(capsys, *args, "--no-cache")
    assert again == uncached
    assert cached.stat().st_mtime_ns == written


def _md_commands() -> list[str]:
    from memhtml.cli.md_cmds import md_app

    return [name for name in md_app if not name.startswith("-")]


@pytest.mark.parametrize("command", _md_commands())
def test_every_md_command_takes_no_cache(command: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = call_text(capsys, "md", command, "--help")
    assert "--no-cache" in out
