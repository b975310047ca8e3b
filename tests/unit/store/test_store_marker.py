"""The store marker: what ``init`` commits reads back as the branch it names, no text
makes the reader fail, a sleep run's branch is never a store's, and a tip is a store's
only with the marker or the layout an earlier ``init`` made."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.memory_git import InMemoryGit
from memhtml.contracts.services import PathChange, Signature
from memhtml.sleep.contract import BRANCH_PREFIX, branch_of
from memhtml.store.layout import (
    MARKER,
    RUN_BRANCH_PREFIX,
    StoreMark,
    is_branch_name,
    is_run_branch,
    is_store_branch,
    marker_branch,
    marker_bytes,
    marker_note,
    store_branch_problem,
    store_mark,
)

AUTHOR = Signature("Tester", "tester@example.org")
AT = datetime(2026, 5, 1, tzinfo=UTC)

_PART = r"[A-Za-z0-9_][A-Za-z0-9_-]{0,20}"
branch_names = st.from_regex(rf"{_PART}(/{_PART}){{0,2}}", fullmatch=True)


@given(branch_names)
def test_a_marker_reads_back_as_the_branch_it_names(branch: str) -> None:
    assert is_branch_name(branch)
    assert marker_branch(marker_bytes(branch)) == (None if is_run_branch(branch) else branch)


@given(st.binary(max_size=300))
def test_any_bytes_read_as_a_usable_branch_or_none(data: bytes) -> None:
    named = marker_branch(data)
    assert named is None or is_store_branch(named)


def test_the_run_prefix_is_the_sleep_run_s_own() -> None:
    assert RUN_BRANCH_PREFIX == BRANCH_PREFIX
    assert is_run_branch(branch_of("2026-12-06")) and is_run_branch(branch_of("2026-12-06-2"))


@given(st.sampled_from(["sleep/", "Sleep/", "SLEEP/", "refs/heads/sleep/"]),
       st.from_regex(r"[A-Za-z0-9._-]{0,20}", fullmatch=True))
def test_a_sleep_run_s_branch_is_never_a_store_s(prefix: str, rest: str) -> None:
    name = prefix + rest
    assert is_run_branch(name) and not is_store_branch(name)
    assert marker_branch(marker_bytes(name)) is None
    problem = store_branch_problem(name.removeprefix("refs/heads/"))
    assert problem is not None and "sleep run" in problem


def test_names_beside_the_run_prefix_are_store_branches() -> None:
    for name in ("sleepy", "sleeper/x", "main", "memory/sleep/x", "asleep/x"):
        assert is_store_branch(name) and store_branch_problem(name) is None, name
    assert is_run_branch("sleep") and not is_store_branch("sleep")


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


def note_on(marker: bytes | None, branch: str) -> str | None:
    git = InMemoryGit()
    changes = [PathChange("README.md", b"x\n")]
    if marker is not None:
        changes.append(PathChange(MARKER, marker))
    sha = unsafe_perform_io(git.commit("main", None, changes, "m", AUTHOR, AT).unwrap())
    found = marker_note(git, sha, branch)
    assert is_successful(found)
    return unsafe_perform_io(found.unwrap())


def test_a_marker_naming_another_branch_is_told_never_followed() -> None:
    assert note_on(marker_bytes("main"), "main") is None
    assert note_on(marker_bytes("main"), "refs/heads/main") is None
    assert note_on(None, "main") is None
    assert note_on(b"not toml [", "main") is None
    moved = note_on(marker_bytes("other"), "main")
    assert moved is not None and "git config memhtml.branch other" in moved
    assert "memhtml init" in moved
    run = note_on(marker_bytes("sleep/2026-12-06"), "main")
    assert run is not None and "sleep run" in run and "main" in run
    assert "git config memhtml.branch sleep" not in run
