"""The markdown conversion: every converted memory renders to a file that parses, and
its title, claim, type, tags and code keep the markdown's own text."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import yaml
from returns.result import Failure, Success

from memhtml.compose import error_code, explain
from memhtml.format import parse_memory
from memhtml.head.record import record_from
from memhtml.store.errors import FrontmatterDuplicateField, FrontmatterOverLimit
from memhtml.store.markdown_fields import memory_type_of
from memhtml.store.markdown_front import _built, load_front, split_front
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


def _pure(block: str) -> object:
    """The block through PyYAML's own parser and the import's one builder."""
    return _built(yaml.parse(block, Loader=yaml.SafeLoader))


@pytest.mark.parametrize("block", [
    "name: x\ntags: [a, b]\ncreated: 2025-03-01", "a: b\t", "a:\tb", "a: !", "a: |#",
    "a: '\ufeffx'", "a: [!x]", "a: {b: [1, 2.5, null, yes]}", "a: \udcff", "a: x | y",
    "? complex\n: key", "a: &x 1", "a: 'q''s'\nb: \"d\\u00e9\"", "a: >\n  folded\n  text\n",
])
def test_frontmatter_loads_as_the_pure_parser_does(block: str) -> None:
    """libyaml reads these otherwise than PyYAML's own parser (a tab, a bare tag, a
    byte-order mark), or not at all; the import reads each as the pure parser does,
    refusals and their messages included."""

    def outcome(load: Callable[[str], object]) -> object:
        try:
            return load(block)
        except yaml.YAMLError as error:
            return str(error)

    assert outcome(load_front) == outcome(_pure)


@pytest.mark.parametrize(("value", "kept"), [
    ("2025-02-30", "2025-02-30"), ("!!timestamp nope", "nope"), ("012", "012"),
    ("1.10", "1.10"), ("12:30", "12:30"), ("NO", "NO"), ("0x1F", "0x1F"), ("~", ""),
    ("'~'", "~"), ("!!binary aGk=", "aGk="), ("!custom x", "x"),
])
def test_a_value_is_kept_as_written(value: str, kept: str) -> None:
    """No type is guessed for a field: what YAML 1.1 would read as a date no calendar
    holds (once a refusal), an octal number, a sexagesimal time or False is the text
    the person wrote, in the facet the field becomes."""
    data = convert_markdown("x.md", f"---\nwhen: {value}\n---\nA fact.\n".encode()).unwrap()
    assert data.front.facet_pairs == (("when", kept),)
    record = record_from(render_file(data, (), AT), "areas/x/x.html").unwrap()
    assert ("when", kept) in {(f.name, f.value) for f in record.facets}


def test_keys_are_the_names_written() -> None:
    """``1`` and ``true`` are two fields (YAML 1.1 makes them 1 and True, one key)."""
    fields, _ = split_front("---\n1: one\ntrue: yes\nnull: n\n2024-01-01: d\n---\nx").unwrap()
    assert fields == {"1": "one", "true": "yes", "null": "n", "2024-01-01": "d"}


@pytest.mark.parametrize(("block", "name", "lines"), [
    ("a: 1\nb: 2\na: 3", "a", (2, 4)),
    ("1: one\n'1': uno", "1", (2, 3)),
    ("x: {k: 1, \"k\": 2}", "k", (2, 2)),
])
def test_a_field_named_twice_is_refused_with_both_lines(
        block: str, name: str, lines: tuple[int, int]) -> None:
    refused = convert_markdown("n/x.md", f"---\n{block}\n---\nA fact.\n".encode())
    assert isinstance(refused, Failure)
    error = refused.failure()
    assert isinstance(error, FrontmatterDuplicateField)
    assert (error.file, error.field, error.lines) == ("n/x.md", name, lines)
    assert error_code(error) == "ERR_FRONTMATTER_DUPLICATE_FIELD"
    assert explain(error).startswith(f"n/x.md: the frontmatter names the field {name!r} twice")


@pytest.mark.parametrize(("block", "limit", "line"), [
    ("a: &x [1, 2]\nb: *x", "alias", 3),
    ("base: &b {k: v}\nmore:\n  <<: *b", "alias", 4),
    ("a: " + "[" * 40 + "]" * 40, "depth", 2),
    ("a:\n" + "".join("  " * n + f"  k{n}:\n" for n in range(40)) + "  " * 41 + "v", "depth", 34),
    ("a: [" + ", ".join(["x"] * 3000) + "]", "nodes", 2),
    ("a: '" + "x" * 40_000 + "'", "size", 1),
])
def test_a_frontmatter_past_a_bound_is_refused_by_name(block: str, limit: str, line: int) -> None:
    refused = convert_markdown("deep.md", f"---\n{block}\n---\nA fact.\n".encode())
    assert isinstance(refused, Failure)
    error = refused.failure()
    assert isinstance(error, FrontmatterOverLimit)
    assert (error.file, error.limit, error.line) == ("deep.md", limit, line)
    assert error_code(error) == "ERR_FRONTMATTER_OVER_LIMIT"
    assert explain(error).startswith("deep.md: the frontmatter ")


def test_a_key_that_is_not_text_is_refused() -> None:
    refused = split_front("---\n? [a, b]\n: c\n---\nbody")
    assert isinstance(refused, Failure)
    assert refused.failure() == ("the frontmatter is not valid YAML at line 2: a field name "
                                 "must be text, not a list or a mapping")
