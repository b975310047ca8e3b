"""The ``Journals`` contract, run on ``JournalFiles`` (disk) and ``MemoryJournals`` alike:
a mark put is read back as it was put, a second put replaces it, a drop removes it, and
a mark that cannot be written is a value naming why, never an exception."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.adapters.journal_files import JournalFiles, pending_dir
from memhtml.adapters.memory_journals import MemoryJournals
from memhtml.contracts.journals import Journal, Journals, JournalUnrecorded, PathStep
from tests.contract.git_backends import err, ok

KINDS = ["disk", "memory"]
SHA = st.text("0123456789abcdef", min_size=40, max_size=40)
STEP = st.builds(PathStep, st.sampled_from(["a.html", "areas/x/b.html", "ü/c.html"]),
                 st.none() | SHA, st.none() | SHA)


def make(kind: str, root: Path) -> Journals:
    return JournalFiles(root / ".git") if kind == "disk" else MemoryJournals()


@pytest.fixture(params=KINDS)
def journals(request: pytest.FixtureRequest, tmp_path: Path) -> Journals:
    return make(request.param, tmp_path)


def mark(journals: Journals, **fields: object) -> Journal:
    base: dict[str, object] = {"name": journals.new_name(), "ref": "refs/heads/main",
                               "steps": (PathStep("a.html", None, "1" * 40),)}
    return Journal(**{**base, **fields})  # type: ignore[arg-type]


def test_a_mark_is_read_back_as_it_was_put(journals: Journals) -> None:
    put = mark(journals, parent="2" * 40, at=12.5, target="3" * 40, merge_parent="4" * 40,
               received=("a.html",))
    assert ok(journals.put(put)) == put
    assert journals.read_all() == (put,)


def test_a_second_put_replaces_the_mark_and_a_drop_removes_it(journals: Journals) -> None:
    first = mark(journals)
    ok(journals.put(first))
    landed = Journal(first.name, first.ref, first.steps, commit="5" * 40, synced=True,
                     received=None)
    ok(journals.put(landed))
    assert journals.read_all() == (landed,)
    journals.drop(landed)
    journals.drop(landed)  # gone already: fine
    assert journals.read_all() == ()


def test_new_names_are_distinct(journals: Journals) -> None:
    names = {journals.new_name() for _ in range(50)}
    assert len(names) == 50


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(KINDS), plan=st.lists(
    st.tuples(st.integers(0, 3), st.booleans(), st.lists(STEP, max_size=3)), max_size=12))
def test_the_marks_are_a_map_by_name_of_the_last_put(
        tmp_path_factory: pytest.TempPathFactory, kind: str,
        plan: list[tuple[int, bool, list[PathStep]]]) -> None:
    journals = make(kind, tmp_path_factory.mktemp("marks"))
    names = [journals.new_name() for _ in range(4)]
    model: dict[str, Journal] = {}
    for slot, dropping, steps in plan:
        journal = Journal(names[slot], "refs/heads/main", tuple(steps), at=float(slot))
        if dropping:
            journals.drop(journal)
            model.pop(journal.name, None)
        else:
            ok(journals.put(journal))
            model[journal.name] = journal
    assert {j.name: j for j in journals.read_all()} == model


def _blocked_disk(root: Path) -> tuple[Journals, Callable[[str], bool]]:
    git_dir = root / ".git"
    (git_dir / "memhtml").mkdir(parents=True)
    os.mkfifo(pending_dir(git_dir))  # a FIFO where the marks' folder belongs
    return JournalFiles(git_dir), lambda reason: "pending" in reason and "FIFO" in reason


def _refusing_memory(_: Path) -> tuple[Journals, Callable[[str], bool]]:
    return MemoryJournals(refuse="read-only"), lambda reason: "read-only" in reason


@pytest.mark.parametrize("blocked", [_blocked_disk, _refusing_memory])
def test_a_mark_that_cannot_be_written_is_a_value_naming_why(
        tmp_path: Path, blocked: Callable[[Path], tuple[Journals, Callable[[str], bool]]]
        ) -> None:
    journals, names_it = blocked(tmp_path)
    refused = err(journals.put(mark(journals)))
    assert isinstance(refused, JournalUnrecorded) and names_it(refused.reason), refused
    assert journals.read_all() == ()


def test_a_half_written_mark_is_never_read_and_is_swept_once_old(tmp_path: Path) -> None:
    journals = JournalFiles(tmp_path / ".git")
    ok(journals.put(mark(journals)))
    half = journals.folder / "4242-0123456789ab.tmp"
    half.write_bytes(b'{"ref": ')
    (journals.folder / "broken.json").write_bytes(b"not json")
    assert len(journals.read_all()) == 1, "neither is read as a mark"
    journals.sweep(half.stat().st_mtime + 1)
    assert half.exists(), "young: a writer may still be writing it"
    journals.sweep(half.stat().st_mtime + 3600)
    assert not half.exists()


@pytest.mark.parametrize("body", [
    b"[" * 200_000 + b"]" * 200_000,
    b'{"ref": "refs/heads/main", "steps": [["a\\u0000b.html", null, null]]}',
    b'{"ref": "refs/heads/main", "commit": "' + b"1" * 40 + b'", "synced": false,'
    b' "steps": [["../victim.txt", "' + b"2" * 40 + b'", null]]}',
    b'{"ref": "refs/heads/main", "steps": [["a.html", "not an id", null]]}',
    b'{"ref": "main", "steps": []}',
    b'{"ref": "refs/heads/main", "steps": [], "at": "soon"}',
])
def test_a_mark_that_is_not_memhtml_s_is_passed_over(tmp_path: Path, body: bytes) -> None:
    """A mark is this clone's state, never trusted: one nested past any parser's depth,
    naming a path outside the tree, or holding what is not an object id is skipped, so
    no command stops on it and none touches a file it names."""
    journals = JournalFiles(tmp_path / ".git")
    kept = mark(journals)
    ok(journals.put(kept))
    (journals.folder / "0-planted.json").write_bytes(body)
    assert journals.read_all() == (kept,)


def test_a_link_where_the_marks_folder_belongs_is_never_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    old = elsewhere / "notes.tmp"
    old.write_bytes(b"a person's file")
    os.utime(old, (0, 0))
    git_dir = tmp_path / ".git"
    (git_dir / "memhtml").mkdir(parents=True)
    pending_dir(git_dir).symlink_to(elsewhere)
    journals = JournalFiles(git_dir)
    refused = err(journals.put(mark(journals)))
    assert "symbolic link" in refused.reason and str(pending_dir(git_dir)) in refused.reason
    assert journals.read_all() == ()
    journals.sweep(10_000_000_000.0)
    assert sorted(p.name for p in elsewhere.iterdir()) == ["notes.tmp"], \
        "nothing written there, nothing swept there"
