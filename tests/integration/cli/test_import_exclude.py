"""``memhtml import markdown --exclude``: the same globs and defaults as ``md --exclude``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.cli.cli_support import call, call_text, git_log


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    files = {
        "keep.md": "The harbour light burns all night.\n",
        "notes/tide.md": "High tide is at six.\n",
        "notes/old/stale.md": "An outdated note.\n",
        "drafts/idea.md": "A half-formed idea.\n",
        "deep/drafts/more.md": "Another draft, deeper down.\n",
        "scratch.tmp.md": "Scratch text.\n",
        ".obsidian/workspace.md": "Editor state.\n",
        ".trash/deleted.md": "Thrown away.\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _imported(answer: dict[str, object]) -> set[str]:
    added = answer["added"]
    assert isinstance(added, list)
    return {entry["file"] for entry in added}


def test_hidden_and_trash_are_left_out_by_default(store: Path, folder: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = call(capsys, "import", "markdown", str(folder), "--store", str(store),
                        "--json")
    assert code == 0, answer
    assert _imported(answer) == {"keep.md", "notes/tide.md", "notes/old/stale.md",
                                 "drafts/idea.md", "deep/drafts/more.md", "scratch.tmp.md"}


def test_excluded_names_and_paths_are_not_imported(store: Path, folder: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = call(capsys, "import", "markdown", str(folder), "--store", str(store),
                        "--exclude", "drafts", "--exclude", "*.tmp.md",
                        "--exclude", "notes/old/*", "--json")
    assert code == 0, answer
    assert _imported(answer) == {"keep.md", "notes/tide.md"}
    assert answer["skipped"] == []


def test_excluding_a_file_imported_before_archives_it(store: Path, folder: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    s = ("--store", str(store), "--json")
    code, first = call(capsys, "import", "markdown", str(folder), *s)
    assert code == 0, first
    code, again = call(capsys, "import", "markdown", str(folder), "--exclude", "drafts", *s)
    assert code == 0, again
    assert {entry["file"] for entry in again["archived"]} == {"drafts/idea.md",
                                                              "deep/drafts/more.md"}
    assert again["added"] == [] and again["changed"] == []


def test_a_malformed_glob_is_refused_before_anything_is_read(
        store: Path, folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = git_log(store)
    code, answer = call(capsys, "import", "markdown", str(folder), "--store", str(store),
                        "--exclude", "notes/[old", "--json")
    assert code != 0
    assert answer["ok"] is False
    assert "notes/[old" in answer["error"]
    assert git_log(store) == before


def _help(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    """A command's help with the box drawing and the line wrapping taken out."""
    _, out, _ = call_text(capsys, *command, "--help")
    return " ".join(out.replace("│", " ").split())


def test_the_help_keeps_its_globs(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys, "import", "markdown")
    assert "--exclude" in text
    for words in ("(`notes/old/*`)", "`*.tmp.md`", "(`drafts`,",
                  "Hidden directories and `.trash` are always left out"):
        assert words in text, words
    assert "Hidden directories and `.trash` are always left out" in _help(capsys, "md", "query")
