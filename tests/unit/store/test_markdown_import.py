"""The markdown conversion: every converted memory parses, and its claim and body are
the markdown's own text."""

from __future__ import annotations

import pytest
from returns.result import Success

from memhtml.format import NewMemoryInput, parse_memory, render_template
from memhtml.store.markdown_import import (
    convert_markdown,
    convert_tree,
    memory_type_of,
    split_frontmatter,
    target_path,
)

CASES = {
    "with-frontmatter.md": (
        "---\nname: Deploy window\ndescription: Deploys happen on Tuesdays.\ntype: project\n"
        "---\n\nNever on a Friday.\n\nAsk the on-call first.\n",
        "Deploy window", "Deploys happen on Tuesdays.",
        ("Never on a Friday.", "Ask the on-call first."), "semantic"),
    "heading.md": (
        "# On-call rotation\n\nPriya runs the\nrotation.\n\nIt changes on Mondays.\n",
        "On-call rotation", "Priya runs the rotation.", ("It changes on Mondays.",),
        "semantic"),
    "plain_note.md": (
        "Coffee is on floor two.\n", "plain note", "Coffee is on floor two.", (), "semantic"),
    "typed.md": (
        "---\ntype: error_pattern\n---\nRetries without keys double charge.\n\n"
        "```python\nretry(capture)\n\nretry(capture)\n```\n",
        "typed", "Retries without keys double charge.",
        ("```python\nretry(capture)\n\nretry(capture)\n```",), "error_pattern"),
}


@pytest.mark.parametrize("source", sorted(CASES))
def test_round_trip(source: str) -> None:
    text, title, claim, body, memory_type = CASES[source]
    converted = convert_markdown(source, text.encode(), "areas/imported/", ("imported",))
    assert isinstance(converted, Success), converted
    data = converted.unwrap()
    assert (data.title, data.claim, data.body, data.memory_type) == (
        title, claim, body, memory_type)
    html = render_template(NewMemoryInput(title=data.title, claim=data.claim,
                                          memory_type=data.memory_type,
                                          at="2026-01-01T00:00:00Z", body=data.body,
                                          tags=data.tags))
    parsed = parse_memory(html, data.path or source)
    assert isinstance(parsed, Success), parsed
    doc = parsed.unwrap()
    assert doc.title == title
    assert doc.article.gist == claim
    assert doc.tags == ("imported",)
    for paragraph in body:
        if paragraph.startswith("```"):
            assert "retry(capture)\n\nretry(capture)" in doc.article.html
        else:
            assert paragraph in doc.article.body_text


@pytest.mark.parametrize(("raw", "reason"), [
    (b"\xff\xfe", "not UTF-8"),
    (b"---\nname: x\n---\n", "no text"),
    (b"```\ncode\n```\n", "first paragraph is code"),
    (b"A claim.\n\n<div>block</div>\n", "raw HTML"),
])
def test_refusals_say_why(raw: bytes, reason: str) -> None:
    converted = convert_markdown("x.md", raw, "areas/imported/")
    assert not isinstance(converted, Success)
    assert reason in converted.failure()


def test_tree_reports_every_file_not_converted() -> None:
    files = [("a.md", b"A fact."), ("b.txt", b"text"), ("c.md", b"\xff"),
             ("sub/a.md", b"Another fact."), ("A.md", b"Same slug as a.md.")]
    result = convert_tree(files, "areas/imported", taken=["areas/imported/taken.html"])
    assert [m.data.path for m in result.memories] == [
        "areas/imported/a.html", "areas/imported/sub/a.html"]
    assert {s.source: s.reason.split(" ")[0] for s in result.skipped} == {
        "a.md": "would", "b.txt": "not", "c.md": "not"}
    taken = convert_tree([("taken.md", b"A fact.")], "areas/imported",
                         taken=["areas/imported/taken.html"])
    assert taken.memories == ()


def test_helpers() -> None:
    assert split_frontmatter("---\nname: 'x'\n---\nbody") [0].name == "x"
    assert split_frontmatter("---\nname: x\nno close")[1] == "---\nname: x\nno close"
    assert memory_type_of("user") == "user_preference"
    assert memory_type_of("Error-Pattern") == "error_pattern"
    assert memory_type_of("whatever") == "semantic"
    assert target_path("My Notes/Big Idea.md", "areas/x/") == "areas/x/my-notes/big-idea.html"
