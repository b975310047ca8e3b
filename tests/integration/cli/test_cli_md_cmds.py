"""``memhtml md`` on a small markdown directory, and ``memhtml import markdown``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.cli.cli_support import call, call_text, git_log

DEPLOY = """---
name: deploy-window
description: Deploys to checkout-api happen on Tuesdays.
type: project
---

Never deploy on a Friday; see [[oncall]] and [[missing-note]].
"""
ONCALL = """# On-call rotation

Priya runs the on-call rotation and approves paging rule changes.

The rotation changes every Monday at 11:00.
"""
INDEX = "Index of memories: [deploy](deploy.md) and [gone](gone.md), oncall too.\n"


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    (root / "deploy.md").write_text(DEPLOY, encoding="utf-8")
    (root / "sub" / "oncall.md").write_text(ONCALL, encoding="utf-8")
    (root / "index.md").write_text(INDEX, encoding="utf-8")
    return root


def test_md_query(notes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = call(capsys, "md", "query", "deploy friday", "--root", str(notes), "--json")
    assert code == 0
    assert answer["hits"][0]["file"] == "deploy.md"
    assert answer["hits"][0]["fm_name"] == "deploy-window"
    code, out, _ = call_text(capsys, "md", "query", "rotation monday", "--root", str(notes),
                             "--channel", "bm25", "--channel", "trigram")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("score=")
    assert "at=sub/oncall.md:" in first


def test_md_stats_prints_the_schema_version(notes: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from memhtml.mdindex import SCHEMA_VERSION

    code, out, _ = call_text(capsys, "md", "stats", "--root", str(notes))
    assert code == 0
    assert SCHEMA_VERSION in out
    code, answer = call(capsys, "md", "stats", "--root", str(notes), "--json")
    assert answer["schema"] == SCHEMA_VERSION
    assert answer["files"] == 3


def test_md_verify(notes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = ("--root", str(notes), "--json")
    code, answer = call(capsys, "md", "verify", "--wikilinks", *root)
    assert code == 1
    assert [f["subject"] for f in answer["findings"]] == ["missing-note"]
    code, answer = call(capsys, "md", "verify", "--frontmatter", "--exempt", "index", *root)
    assert code == 1
    assert [f["subject"] for f in answer["findings"]] == ["sub/oncall.md"]
    code, answer = call(capsys, "md", "verify", "--coverage", "*.md:index.md", *root)
    assert code == 1
    assert {f["kind"] for f in answer["findings"]} == {"backlink"}
    code, answer = call(capsys, "md", "verify", "--coverage", "nothing/*.md:index.md", *root)
    assert code == 1
    assert "matched 0" in answer["error"]
    code, answer = call(capsys, "md", "verify", *root)
    assert code == 2 and answer["code"] == "ERR_USAGE"
    assert "--coverage A:B, --frontmatter or --wikilinks" in answer["error"]


def test_import_markdown_round_trip(store: Path, notes: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    (notes / "notes.txt").write_text("not markdown", encoding="utf-8")
    (notes / "empty.md").write_text("---\nname: empty\n---\n", encoding="utf-8")
    before = len(git_log(store))
    code, answer = call(capsys, "import", "markdown", str(notes), "--store", str(store),
                        "--json")
    assert code == 0, "what could be imported landed: a skipped file is reported, not a failure"
    assert answer["ok"] is True and answer["commit"], answer
    assert {s["file"] for s in answer["skipped"]} == {"empty.md"}, "only .md files are read"
    assert [s["code"] for s in answer["skipped"]] == ["ERR_NOT_CONVERTED"]
    assert len(git_log(store)) == before + 1, "one commit"
    converted = {c["file"]: c["path"] for c in answer["converted"]}
    assert converted["deploy.md"] == "areas/imported/deploy.html"
    assert converted["sub/oncall.md"] == "areas/imported/sub/oncall.html"
    s = ("--store", str(store), "--json")
    gist = call(capsys, "read", "areas/imported/deploy.html", "--tier", "gist", *s)[1]["text"]
    assert gist == "Deploys to checkout-api happen on Tuesdays."
    details = call(capsys, "read", "areas/imported/sub/oncall.html", "--tier", "details",
                   *s)[1]["text"]
    assert " ".join(details.split()).startswith(
        "On-call rotation Priya runs the on-call rotation and approves paging rule changes. "
        "The rotation changes every Monday at 11:00.")
    assert "sub/oncall.md" not in details, "the source file is metadata, not text"
    meta = call(capsys, "read", "areas/imported/sub/oncall.html", "--tier", "all",
                *s)[1]["text"]
    assert '<meta name="memhtml-source" content="sub/oncall.md">' in meta
    code, answer = call(capsys, "import", "markdown", str(notes), *s)
    assert answer["commit"] is None and answer["added"] == []
    assert len(git_log(store)) == before + 1, "a second import of an unchanged folder adds nothing"
