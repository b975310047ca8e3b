"""``memhtml md`` on an agent-memory folder: exact words, honest verify, safe reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memhtml.cli.app import app
from tests.integration.cli.cli_support import call, call_text

MEMORY_INDEX = """# Memory index

- [Deleted thing](topics/gone.md) - kept for the record
- [[feedback_testing|the tests]] run before every merge
"""
FEEDBACK = """---
name: feedback_testing
type: feedback
---

The tests live in src/mod_a/file_b.py and are written in C# for the game engine.
"""
GONE = """# Gone

Some note about a thing that was deleted from the rota long ago.
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / "topics").mkdir(parents=True)
    (root / ".trash").mkdir()
    (root / "drafts").mkdir()
    (root / "MEMORY.md").write_text(MEMORY_INDEX)
    (root / "topics" / "feedback_testing.md").write_text(FEEDBACK)
    (root / "topics" / "gone.md").write_text(GONE)
    (root / ".trash" / "old.md").write_text("an old thing deleted from the rota once")
    (root / "drafts" / "wip.md").write_text("a draft thing not ready for the rota")
    return root


def files_found(capsys: pytest.CaptureFixture[str], root: Path, query: str,
                *extra: str) -> list[str]:
    code, answer = call(capsys, "md", "query", query, "--root", str(root), "--json", *extra)
    assert code == 0, answer
    return [hit["file"] for hit in answer["hits"]]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("thing", "MEMORY.md"),
        ("gone.md", "MEMORY.md"),
        ("feedback_testing", "MEMORY.md"),
        ("testing", "MEMORY.md"),
        ("file_b.py", "topics/feedback_testing.md"),
        ("mod_a", "topics/feedback_testing.md"),
        ("src/mod_a/file_b.py", "topics/feedback_testing.md"),
        ("c#", "topics/feedback_testing.md"),
    ],
)
def test_words_around_markup_are_found(folder: Path, capsys: pytest.CaptureFixture[str],
                                       query: str, expected: str) -> None:
    assert expected in files_found(capsys, folder, query, "-k", "5")


def test_hidden_and_trash_are_excluded_and_exclude_adds_more(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = files_found(capsys, folder, "rota", "-k", "10")
    assert ".trash/old.md" not in found
    assert "drafts/wip.md" in found
    assert "drafts/wip.md" not in files_found(capsys, folder, "rota", "--exclude", "drafts")
    code, answer = call(capsys, "md", "stats", "--root", str(folder), "--json",
                        "--exclude", "drafts", "--exclude", "topics/gone.md")
    assert code == 0
    assert answer["files"] == 2


def test_k_short_and_long(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert len(files_found(capsys, folder, "rota thing", "-k", "1")) == 1
    assert len(files_found(capsys, folder, "rota thing", "--k", "2")) == 2


def test_receipts_give_the_line_where_the_paragraph_starts(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = call_text(capsys, "md", "query", "engine", "--root", str(folder))
    assert code == 0
    assert "at=topics/feedback_testing.md:6 " in out.splitlines()[0]
    code, answer = call(capsys, "md", "query", "engine", "--root", str(folder), "--json")
    assert answer["hits"][0]["line"] == 6


def test_a_byte_order_mark_does_not_hide_frontmatter(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = folder / "topics" / "feedback_testing.md"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    code, answer = call(capsys, "md", "query", "engine", "--root", str(folder), "--json")
    assert code == 0
    assert answer["hits"][0]["fm_name"] == "feedback_testing"
    code, answer = call(capsys, "md", "verify", "--frontmatter-glob", "topics/*.md",
                        "--exclude", "gone.md", "--root", str(folder), "--json")
    assert code == 0, answer


def test_coverage_never_passes_by_substring(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "memory"
    (root / "topics").mkdir(parents=True)
    for name in ("a", "data", "deploy"):
        (root / "topics" / f"{name}.md").write_text(f"the {name} note body")
    # "a" and "data" occur only inside other words and paths: neither is named.
    (root / "INDEX.md").write_text("A database of metadata, see old-topics/a.md.\n"
                                   "[deploy](topics/deploy.md)\n")
    root_args = ("--root", str(root), "--json")
    code, answer = call(capsys, "md", "verify", "--coverage", "topics/*.md:INDEX.md", *root_args)
    assert code == 1
    assert sorted(f["subject"] for f in answer["findings"]) == ["topics/a.md", "topics/data.md"]
    (root / "INDEX.md").write_text("[[a]] and topics/data.md and [x](topics/deploy.md#top)\n")
    code, answer = call(capsys, "md", "verify", "--coverage", "topics/*.md:INDEX.md", *root_args)
    assert (code, answer["findings"]) == (0, [])


def test_report_mode_prints_findings_and_exits_zero(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("md", "verify", "--coverage", "drafts/*.md:MEMORY.md", "--root", str(folder))
    code, out, _ = call_text(capsys, *args)
    assert code == 1
    assert "coverage: drafts/wip.md" in out
    code, out, _ = call_text(capsys, *args, "--report")
    assert code == 0
    assert "coverage: drafts/wip.md" in out
    # A check that cannot run is not a finding: it still fails.
    code, _, _ = call_text(capsys, "md", "verify", "--coverage", "none/*.md:MEMORY.md",
                           "--root", str(folder), "--report")
    assert code != 0


def test_special_files_and_outside_links_are_skipped_and_reported(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(folder / "x.md")
    (folder / "passwd.md").symlink_to("/etc/passwd")
    (folder / "again").symlink_to(folder / "topics", target_is_directory=True)
    code, _, err = call_text(capsys, "md", "stats", "--root", str(folder))
    assert code == 0
    assert "skipped: x.md: a named pipe" in err
    assert "skipped: passwd.md: symbolic link to /etc/passwd, outside the root" in err
    assert "skipped: again: leads to the directory topics, already walked" in err
    code, answer = call(capsys, "md", "stats", "--root", str(folder), "--json")
    assert answer["files"] == 4


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        (("md", "verify"), ("`*.md`", "`notes/*.md`", "`topics/*.md:INDEX.md`")),
        (("md", "query"), ("`*.tmp.md`", "`notes/old/*`")),
    ],
)
def test_help_keeps_its_globs(capsys: pytest.CaptureFixture[str], command: tuple[str, ...],
                              shown: tuple[str, ...]) -> None:
    capsys.readouterr()
    with pytest.raises(SystemExit):
        app([*command, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for glob in shown:
        assert glob.strip("`") in out, glob
