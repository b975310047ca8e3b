"""The store marker: what ``init`` commits reads back as the branch it names, no text
makes the reader fail, and a tip is a store's only with the marker or the layout an
earlier ``init`` made."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.memory_git import InMemoryGit
from memhtml.contracts.services import PathChange, Signature
from memhtml.store.layout import (
    MARKER,
    StoreMark,
    is_branch_name,
    marker_branch,
    marker_bytes,
    store_mark,
)

AUTHOR = Signature("Tester", "tester@example.org")
AT = datetime(2026, 5, 1, tzinfo=UTC)

_PART = r"[A-Za-z0-9_][A-Za-z0-9_-]{0,20}"
branch_names = st.from_regex(rf"{_PART}(/{_PART}){{0,2}}", fullmatch=True)


@given(branch_names)
def test_a_marker_reads_back_as_the_branch_it_names(branch: str) -> None:
    assert is_branch_name(branch)
    assert marker_branch(marker_bytes(branch)) == branch


@given(st.binary(max_size=300))
def test_any_bytes_read_as_a_usable_branch_or_none(data: bytes) -> None:
    named = marker_branch(data)
    assert named is None or is_branch_name(named)


@given(st.text(max_size=40))
def test_a_name_taken_never_holds_what_git_refuses(name: str) -> None:
    if is_branch_name(name):
        assert ".." not in name and not name.startswith(("-", ".", "/"))
        assert not name.endswith((".lock", "/", ".")) and not any(ch.isspace() for ch in name)


def test_marker_with_a_hostile_branch_still_marks_a_store_but_names_none() -> None:
    assert marker_branch(b'branch = "../../etc"\n') is None
    assert marker_branch(b"branch = 3\n") is None
    assert marker_branch(b"not toml at all [\n") is None


def mark_of(changes: list[PathChange]) -> StoreMark | None:
    git = InMemoryGit()
    sha = unsafe_perform_io(git.commit("main", None, changes, "m", AUTHOR, AT).unwrap())
    found = store_mark(git, sha)
    assert is_successful(found)
    return unsafe_perform_io(found.unwrap())


def test_a_tip_is_a_store_by_its_marker_or_by_the_earlier_layout() -> None:
    assert mark_of([PathChange(MARKER, marker_bytes("trunk"))]) == StoreMark("marker", "trunk")
    older = [PathChange(".gitattributes", b"index.html merge=ours\n"),
             PathChange("areas/inbox/.gitkeep", b"")]
    assert mark_of(older) == StoreMark("layout")
    # A store of this release whose marker was removed keeps being one, by its line.
    unmarked = [PathChange(".gitattributes", b"index.html merge=memhtml-generated\n"),
                PathChange("archive/.gitkeep", b"")]
    assert mark_of(unmarked) == StoreMark("layout")
    assert mark_of([PathChange(".gitattributes", b"*.html merge=ours\n"),
                    PathChange("archive/.gitkeep", b"")]) is None
    # Half a layout, or a project's own files, is not a store.
    assert mark_of(older[:1]) is None
    assert mark_of(older[1:]) is None
    assert mark_of([PathChange("README.md", b"a project\n")]) is None
