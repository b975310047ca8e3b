"""Verify checks: coverage, frontmatter presence, wikilinks."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest
from returns.io import IOResult
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.mdfs import DirectoryReader
from memhtml.mdindex import (
    BadGlob,
    EmptyCheck,
    build,
    compile_glob,
    coverage,
    frontmatter_present,
    wikilink_target,
    wikilinks,
)

TreeWriter = Callable[..., DirectoryReader]
T = TypeVar("T")
E = TypeVar("E")


def ok(result: IOResult[T, E]) -> T:
    """The value of a successful IOResult; a failure raises."""
    return unsafe_perform_io(result.unwrap())


def err(result: IOResult[T, E]) -> E:
    """The error of a failed IOResult; a success raises."""
    return unsafe_perform_io(result.failure())


def test_clean_coverage_has_no_findings(lighthouse: DirectoryReader) -> None:
    assert ok(coverage(lighthouse, "notes/*.md", "notes/index-*.md")) == ()


def test_coverage_finds_an_orphan_and_a_dangling_index_line(
    tree: TreeWriter, lighthouse_files: dict[str, str]
) -> None:
    files = {
        **lighthouse_files,
        "notes/orphan.md": "---\nname: orphan\n---\n\nan undistilled lesson no index names",
        "notes/index-a.md": "- [wind-log](wind.md)\n- [glazing-care](glass.md)\n"
        "- [gone](gone.md)\n",
    }
    findings = ok(coverage(tree(files), "notes/*.md", "notes/index-*.md"))
    assert [(f.kind, f.subject) for f in findings] == [
        ("coverage", "notes/orphan.md"),
        ("backlink", "notes/index-a.md"),
    ]
    assert "gone.md" in findings[1].detail


@pytest.mark.parametrize(
    ("link", "dangling"),
    [
        ("[gone anchored](gone.md#top)", True),
        ("[gone queried](gone.md?v=2)", True),
        ('[gone titled](gone.md "the page")', True),
        ("[gone bracketed](<gone.md>)", True),
        ("[up and out](../gone.md)", True),
        ("[wind](wind.md#the-anemometer)", False),
        ("[wind](./wind.md?raw=1)", False),
        ("[handbook](../HANDBOOK.md)", False),
        ("[remote](https://example.com/gone.md)", False),
        ("[remote](//example.com/gone.md)", False),
        ("[here](#somewhere)", False),
        ("[root](/gone.md)", False),
        ("[image](gone.png)", False),
    ],
)
def test_backlinks_check_relative_markdown_links(
    tree: TreeWriter, lighthouse_files: dict[str, str], link: str, dangling: bool
) -> None:
    index = "- [wind-log](wind.md)\n- [glazing-care](glass.md)\n- " + link + "\n"
    reader = tree({**lighthouse_files, "notes/index-a.md": index})
    findings = ok(coverage(reader, "notes/*.md", "notes/index-*.md"))
    assert any(f.kind == "backlink" for f in findings) == dangling


@pytest.mark.parametrize(
    ("glob_a", "glob_b", "matched"),
    [("nothing/*.md", "notes/index-*.md", (0, 1)), ("notes/*.md", "nothing/*.md", (3, 0))],
)
def test_an_empty_side_is_an_error_not_a_pass(
    lighthouse: DirectoryReader, glob_a: str, glob_b: str, matched: tuple[int, int]
) -> None:
    error = err(coverage(lighthouse, glob_a, glob_b))
    assert isinstance(error, EmptyCheck)
    assert error.matched == matched
    assert "broken check" in error.reason


def test_globs_do_not_cross_directories(lighthouse: DirectoryReader) -> None:
    findings = ok(coverage(lighthouse, "*.md", "notes/*.md"))
    assert [f.subject for f in findings] == ["CHARTER.md", "HANDBOOK.md"]


def test_a_malformed_glob_is_an_error(lighthouse: DirectoryReader) -> None:
    assert isinstance(err(coverage(lighthouse, "notes/[a-.md", "*.md")), BadGlob)
    assert isinstance(compile_glob("").failure(), BadGlob)
    assert isinstance(compile_glob("a\\").failure(), BadGlob)
    match = compile_glob("n?tes/[!x]*.md").unwrap()
    assert not match("notes/wind.md")  # "[!" is not negation here: "^" is
    negated = compile_glob("n?tes/[^x]*.md").unwrap()
    assert negated("notes/wind.md")
    assert not negated("notes/sub/wind.md")


def test_frontmatter_present_reports_missing_names(lighthouse: DirectoryReader) -> None:
    findings = ok(frontmatter_present(lighthouse, "notes/*.md"))
    assert [(f.kind, f.subject) for f in findings] == [("frontmatter", "notes/index-a.md")]


def test_frontmatter_exemptions_are_basename_prefixes_given_per_run(
    lighthouse: DirectoryReader,
) -> None:
    assert ok(frontmatter_present(lighthouse, "notes/*.md", exempt=("index-",))) == ()
    # A prefix of a directory name exempts nothing.
    assert ok(frontmatter_present(lighthouse, "notes/*.md", exempt=("notes",))) != ()


def test_frontmatter_glob_matching_nothing_is_an_error(lighthouse: DirectoryReader) -> None:
    assert isinstance(err(frontmatter_present(lighthouse, "people/*.md")), EmptyCheck)


def test_frontmatter_accepts_crlf_and_quoted_names(
    tree: TreeWriter, lighthouse_files: dict[str, str]
) -> None:
    files = {
        "a.md": "---\r\nname: crlf\r\n---\r\n\r\nbody text here",
        "b.md": '---\nname: "quoted"\n---\n\nbody text here',
        "c.md": "---\nname:\n---\n\nbody text here",
        "d.md": "---\nname: unterminated\n\nbody text here",
    }
    findings = ok(frontmatter_present(tree(files), "*.md"))
    assert [f.subject for f in findings] == ["c.md", "d.md"]


@pytest.mark.parametrize(
    ("body", "target"),
    [
        ("stem", "stem"),
        ("stem|shown text", "stem"),
        ("stem#section", "stem"),
        (" stem # part | alias", "stem"),
        ("#only-heading", ""),
    ],
)
def test_wikilink_target(body: str, target: str) -> None:
    assert wikilink_target(body) == target


def test_wikilinks_resolve_by_stem_or_frontmatter_name(
    tree: TreeWriter, lighthouse_files: dict[str, str]
) -> None:
    files = {
        **lighthouse_files,
        "links.md": (
            "plain [[wind]], by name [[wind-log]], aliased [[glass|the glazing]],"
            " heading [[glazing-care#washing]], self [[#top]],"
            " dangling [[nowhere]] and [[missing|shown]] and [[gone#part]] and [[nowhere]]."
        ),
        "more.md": "also [[nowhere]] and a name-only file [[named-only]]",
        "stub.md": "---\nname: named-only\n---\n\n# x\n",
    }
    reader = tree(files)
    corpus = ok(build(reader))
    findings = ok(wikilinks(reader, corpus))
    assert [f.subject for f in findings] == ["gone", "missing", "nowhere"]
    assert {f.kind for f in findings} == {"wikilink"}
    assert "links.md, more.md" in findings[2].detail


def test_wikilinks_respect_the_build_scope(
    tree: TreeWriter, lighthouse_files: dict[str, str]
) -> None:
    files = {**lighthouse_files, "drafts/x.md": "a draft links [[nowhere]] for later writing"}
    reader = tree(files)
    corpus = ok(build(reader, lambda p: p == "drafts"))
    assert ok(wikilinks(reader, corpus)) == ()
