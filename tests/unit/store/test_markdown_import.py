"""The markdown conversion: every converted memory renders to a file that parses, and
its title, claim, type, tags and code keep the markdown's own text."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import yaml
from returns.result import Failure, Success

from memhtml.format import parse_memory
from memhtml.store.markdown_front import load_front, memory_type_of, split_front
from memhtml.store.markdown_import import (
    convert_markdown,
    convert_tree,
    render_file,
    target_path,
)

AT = "2026-01-01T00:00:00Z"
CASES = {
    "with-frontmatter.md": (
        "---\nname: Deploy window\ndescription: Deploys happen on Tuesdays.\ntype: project\n"
        "tags: [ops, deploys]\ncreated: 2025-03-04\n---\n\nNever on a Friday.\n\n"
        "Ask the on-call first.\n",
        "Deploy window", "Deploys happen on Tuesdays.", "arc", ("ops", "deploys")),
    "heading.md": (
        "# On-call rotation\n\nPriya runs the\nrotation. It changes on Mondays.\n",
        "On-call rotation", "Priya runs the rotation.", "semantic", ()),
    "typed.md": (
        "---\ntype: error_pattern\n---\nRetries without keys double charge.\n\n"
        "```python\nretry(capture)\n\nretry(capture)\n```\n",
        "typed", "Retries without keys double charge.", "error_pattern", ()),
}


@pytest.mark.parametrize("source", sorted(CASES))
def test_a_converted_file_parses_and_keeps_its_text(source: str) -> None:
    text, title, claim, memory_type, tags = CASES[source]
    converted = convert_markdown(source, text.encode())
    assert isinstance(converted, Success), converted
    data = converted.unwrap()
    assert (data.title, data.claim, data.memory_type) == (title, claim, memory_type)
    assert set(tags) <= set(data.tags)
    parsed = parse_memory(render_file(data, (), AT), target_path(source, "areas/imported/"))
    assert isinstance(parsed, Success), parsed
    doc = parsed.unwrap()
    assert doc.title == title and doc.article.gist == claim
    if "```" in text:
        assert "retry(capture)\n\nretry(capture)" in doc.article.html


def test_frontmatter_dates_are_the_memory_dates() -> None:
    data = convert_markdown("with-frontmatter.md",
                            CASES["with-frontmatter.md"][0].encode()).unwrap()
    doc = parse_memory(render_file(data, (), AT), "areas/imported/x.html").unwrap()
    assert doc.metas.created_at.startswith("2025-03-04")


@pytest.mark.parametrize(("raw", "reason"), [
    (b"\xff\xfe", "not UTF-8"),
    (b"a\x00b", "binary"),
    (b"---\nname: x\n---\n", "no prose"),
    (b"---\nname: x\nno close\n", "frontmatter"),
])
def test_refusals_say_why(raw: bytes, reason: str) -> None:
    converted = convert_markdown("x.md", raw)
    assert isinstance(converted, Failure)
    assert reason in converted.failure()


def test_tree_reports_every_file_not_converted() -> None:
    files = [("a.md", b"A fact."), ("b.txt", b"text"), ("c.md", b"\xff"),
             ("sub/a.md", b"Another fact.")]
    result = convert_tree(files, "areas/imported")
    assert sorted(m.data.path or "" for m in result.memories) == [
        "areas/imported/a.html", "areas/imported/sub/a.html"]
    assert {s.source for s in result.skipped} == {"b.txt", "c.md"}


def test_helpers() -> None:
    fields, body = split_front("---\nname: 'x'\n---\nbody").unwrap()
    assert fields == {"name": "x"} and body.strip() == "body"
    assert isinstance(split_front("---\nname: x\nno close"), Failure)
    assert memory_type_of("user") == "user_preference"
    assert memory_type_of("feedback") != memory_type_of("user")
    assert memory_type_of("Error-Pattern") == "error_pattern"
    assert memory_type_of("whatever") == "semantic"
    assert target_path("My Notes/Big Idea.md", "areas/x/") == "areas/x/my-notes/big-idea.html"


@pytest.mark.parametrize("block", [
    "name: x\ntags: [a, b]\ncreated: 2025-03-01", "a: b\t", "a:\tb", "a: !", "a: |#",
    "a: '\ufeffx'", "a: [!x]", "a: {b: [1, 2.5, null, yes]}", "a: \udcff", "a: x | y",
])
def test_frontmatter_loads_as_the_pure_safe_loader_does(block: str) -> None:
    """libyaml reads these otherwise than PyYAML's own parser (a tab, a bare tag, a
    byte-order mark), or not at all; the import reads each as ``yaml.safe_load`` does,
    refusals and their messages included."""

    def outcome(load: Callable[[str], object]) -> object:
        try:
            return load(block)
        except yaml.YAMLError as error:
            return str(error)

    assert outcome(load_front) == outcome(yaml.safe_load)


@pytest.mark.parametrize("value", ["2025-02-30", "!!timestamp nope"])
def test_a_value_yaml_cannot_build_is_refused_not_raised(value: str) -> None:
    refused = split_front(f"---\nname: x\ndate: {value}\n---\nbody")
    assert isinstance(refused, Failure)
    assert "the frontmatter is not valid YAML" in refused.failure()
