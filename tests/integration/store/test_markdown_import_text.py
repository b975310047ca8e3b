"""``import markdown`` reads tags and links in the text as written, imports each real
file once, says an exported claim once, and walks a folder as ``md`` walks it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Success

from memhtml.format import parse_memory
from memhtml.store.inputs import BWrite
from memhtml.store.markdown_import import convert_markdown, plan_import, render_file
from tests.integration.cli.cli_support import call
from tests.integration.store.test_markdown_import_faithful import walk_markdown

AT = "2025-06-01T12:00:00Z"
EXPORTED = Path(__file__).resolve().parents[2] / "golden" / "markdown_export" / "expected"


def _converted(text: str, source: str = "note.md") -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The tags and the wikilink/link target names a file converts to."""
    result = convert_markdown(source, text.encode())
    assert isinstance(result, Success), result
    one = result.unwrap()
    return one.tags, tuple(t.name for t in one.article.targets)


@pytest.mark.parametrize(("text", "tags", "targets"), [
    ("Runs on #kubernetes.\n", ("kubernetes",), ()),
    ("Not a tag: \\#kubernetes.\n", (), ()),
    ("Not a tag: &#35;kubernetes.\n", (), ()),
    ("Not a tag: `#kubernetes` in code.\n", (), ()),
    ("A fence follows.\n\n```\n#kubernetes [[Runbook]]\n```\n", (), ()),
    ("    #indented [[Runbook]]\n\nAn indented block is code.\n", (), ()),
    ("See [[Runbook]].\n", (), ("Runbook",)),
    ("Not a link: \\[\\[Runbook\\]\\].\n", (), ()),
    ("Not a link: \\[[Runbook]].\n", (), ()),
    ("Not a link: `[[Runbook]]`.\n", (), ()),
    ("A table.\n\n| who | tag |\n|---|---|\n| [[People/Priya\\|Priya]] | #team |\n",
     ("team",), ("People/Priya",)),
])
def test_tags_and_links_are_read_as_written(text: str, tags: tuple[str, ...],
                                            targets: tuple[str, ...]) -> None:
    assert _converted(text) == (tags, targets)


def test_escaped_text_reads_as_its_characters() -> None:
    result = convert_markdown("note.md", b"Plain \\#one and \\[\\[two\\]\\] stay text.\n")
    html = render_file(result.unwrap(), (), AT)
    assert "Plain #one and [[two]] stay text." in html


WORDS = st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True)


@settings(max_examples=60)
@given(WORDS, WORDS, WORDS, WORDS)
def test_only_an_unescaped_tag_or_link_outside_code_counts(
        tag: str, escaped: str, coded: str, name: str) -> None:
    text = (f"One #{tag} here, \\#{escaped} there, `#{coded}` in code.\n\n"
            f"Link [[{name}]], not \\[\\[{escaped}\\]\\] nor `[[{coded}]]`.\n\n"
            f"```\n#{coded} [[{coded}]]\n```\n")
    assert _converted(text) == ((tag,), (name,))


def test_a_linked_note_is_imported_once_by_its_real_path(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert call(capsys, "init", str(store), "--json")[0] == 0
    notes = tmp_path / "notes"
    (notes / "topics").mkdir(parents=True)
    (notes / "topics" / "zebra.md").write_text("Zebras have stripes.\n", encoding="utf-8")
    (notes / "a-link.md").symlink_to(notes / "topics" / "zebra.md")
    (notes / "again").symlink_to(notes / "topics", target_is_directory=True)
    code, answer = call(capsys, "import", "markdown", str(notes), "--store", str(store),
                        "--json")
    assert code == 0, answer
    assert [a["file"] for a in answer["added"]] == ["topics/zebra.md"], \
        "the real path wins, whatever the link's name sorts like"
    assert answer["skipped"] == []
    stats = call(capsys, "md", "stats", "--root", str(notes), "--no-cache", "--json")[1]
    assert stats["files"] == 1, "md and import read the same files"


def test_import_and_md_walk_the_same_files(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert call(capsys, "init", str(store), "--json")[0] == 0
    notes = tmp_path / "notes"
    for name in ("a.md", "sub/b.md", ".obsidian/c.md", ".trash/d.md", "sub/.e.md",
                 ".hidden.md"):
        (notes / name).parent.mkdir(parents=True, exist_ok=True)
        (notes / name).write_text(f"Note {name[0]} holds a fact.\n", encoding="utf-8")
    (notes / "logo.png").symlink_to("/etc/hostname")
    code, answer = call(capsys, "import", "markdown", str(notes), "--store", str(store),
                        "--json")
    assert code == 0, answer
    assert sorted(a["file"] for a in answer["added"]) == ["a.md", "sub/b.md"]
    stats = call(capsys, "md", "stats", "--root", str(notes), "--no-cache", "--json")[1]
    assert stats["files"] == 2


def _article(html: str) -> str:
    return html.split("<article", 1)[1]


def test_an_exported_claim_is_said_once_when_imported_again() -> None:
    plan = plan_import(walk_markdown(EXPORTED).files, "areas/back/", at=AT)
    assert not plan.refused
    written = {op.data.path or "": op.data.file_html or "" for op in plan.ops
               if isinstance(op, BWrite)}
    deploy = written["areas/back/areas/ops/deploy-steps.html"]
    assert _article(deploy).count("Deploys go through the") == 1
    assert "<p><mark>Deploys go through the *canary* first [always].</mark></p>" in deploy
    cache = written["areas/back/areas/cache/cache-ttl.html"]
    assert _article(cache).count("The cache TTL is") == 1
    for path, html in written.items():
        assert _article(html).count("<mark>") == 1, path
        parsed = parse_memory(html, path)
        assert isinstance(parsed, Success), parsed


def test_a_body_that_differs_from_its_description_keeps_both() -> None:
    text = "---\ndescription: Deploys happen on Tuesdays.\n---\n\nDeploys happen on Fridays.\n"
    html = render_file(convert_markdown("d.md", text.encode()).unwrap(), (), AT)
    assert "<mark>Deploys happen on Tuesdays.</mark>" in html
    assert "<p>Deploys happen on Fridays.</p>" in html


def test_export_then_import_keeps_one_claim(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    first, second, out = tmp_path / "first", tmp_path / "second", tmp_path / "out"
    for store in (first, second):
        assert call(capsys, "init", str(store), "--json")[0] == 0
    code, wrote = call(capsys, "write", "--title", "Deploy steps", "--claim",
                       "Deploys go through the `canary` first.", "--store", str(first),
                       "--json")
    assert code == 0, wrote
    assert call(capsys, "export", "markdown", str(out), "--store", str(first), "--json")[0] == 0
    code, answer = call(capsys, "import", "markdown", str(out), "--store", str(second),
                        "--json")
    assert code == 0, answer
    path = answer["added"][0]["path"]
    whole = call(capsys, "read", path, "--tier", "all", "--store", str(second), "--json")[1]
    text = str(whole)
    article = _article(text)
    assert len(re.findall("go through the", article)) == 1, article
    gist = call(capsys, "read", path, "--tier", "gist", "--store", str(second), "--json")[1]
    was = call(capsys, "read", wrote["new"][0], "--tier", "gist", "--store", str(first),
               "--json")[1]
    assert gist["text"] == was["text"] == "Deploys go through the `canary` first."
