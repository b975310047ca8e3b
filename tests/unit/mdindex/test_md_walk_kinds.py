"""The walk names the kind of every entry it passes over, and the import sorts what
it loses from what it does not by that kind, never by the wording of the reason."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import get_args

import pytest
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.mdfs import DirectoryReader, OsFileSystem
from memhtml.mdindex.globs import exclusion
from memhtml.mdindex.walk import SECOND_NAMES, SkipKind, Walk, walk_tree
from memhtml.store.markdown_source import gather_markdown


def _kinds(walk: Walk) -> dict[str, SkipKind]:
    return {s.path: s.kind for s in walk.skipped}


def _walk(root: Path, fs: OsFileSystem | None = None, excluded: tuple[str, ...] = ()) -> Walk:
    prune = exclusion(excluded, hidden=False).unwrap()
    return unsafe_perform_io(walk_tree(fs or OsFileSystem(), str(root), prune).unwrap())


class _FailingOn(OsFileSystem):
    """The real disk, except that one call fails for one path: the errors a disk
    gives only in a race (an entry removed between listing and looking at it)."""

    def __init__(self, call: str, path: str) -> None:
        self.call = call
        self.path = path

    def _check(self, call: str, path: str) -> None:
        if call == self.call and path == self.path:
            raise FileNotFoundError(2, "No such file or directory", path)

    def lstat(self, path: str) -> os.stat_result:
        self._check("lstat", path)
        return super().lstat(path)

    def stat(self, path: str) -> os.stat_result:
        self._check("stat", path)
        return super().stat(path)

    def listdir(self, path: str) -> list[str]:
        self._check("listdir", path)
        return super().listdir(path)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """One entry for each kind the real disk can show on its own."""
    root = tmp_path / "tree"
    (root / "notes").mkdir(parents=True)
    (root / "drafts").mkdir()
    (root / "notes" / "a.md").write_text("alpha\n")
    (root / "drafts" / "d.md").write_text("draft\n")
    outside = tmp_path / "secret.md"
    outside.write_text("not part of the tree\n")
    os.mkfifo(root / "pipe.md")
    (root / "copy.md").symlink_to(root / "notes" / "a.md")
    (root / "notes" / "loop").symlink_to(root)
    (root / "out.md").symlink_to(outside)
    (root / "dangling.md").symlink_to(root / "nowhere.md")
    (root / "into-drafts.md").symlink_to(root / "drafts" / "d.md")
    (root / "to-pipe").symlink_to(root / "pipe.md")
    return root


def test_each_skip_made_by_the_walk_names_its_kind(tree: Path) -> None:
    walk = _walk(tree, excluded=("drafts",))
    assert walk.files == ("notes/a.md",)
    assert _kinds(walk) == {
        "copy.md": "seen_file",
        "dangling.md": "unresolvable_link",
        "into-drafts.md": "excluded_target",
        "notes/loop": "seen_directory",
        "out.md": "outside_root",
        "pipe.md": "special",
        "to-pipe": "special",
    }
    reasons = {s.path: s.reason for s in walk.skipped}
    assert reasons["out.md"].endswith("outside the root: not followed")
    assert "already walked" in reasons["notes/loop"]
    assert reasons["copy.md"] == "the same file as notes/a.md, listed once"


def test_a_socket_is_special(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(root / "sock.md"))
        assert _kinds(_walk(root)) == {"sock.md": "special"}
    finally:
        server.close()


@pytest.mark.parametrize(
    ("call", "name", "expected"),
    [("listdir", "sub", "unlistable"), ("lstat", "sub/x.md", "unexaminable")],
)
def test_the_kinds_a_race_gives(tmp_path: Path, call: str, name: str, expected: SkipKind
                                ) -> None:
    root = tmp_path / "r"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "x.md").write_text("x\n")
    walk = _walk(root, _FailingOn(call, str(root / name)))
    assert _kinds(walk) == {name: expected}


def test_a_link_whose_target_vanishes_after_resolving_is_broken(tmp_path: Path) -> None:
    root = tmp_path / "r"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "x.md").write_text("x\n")
    (root / "link.md").symlink_to(root / "sub" / "x.md")
    walk = _walk(root, _FailingOn("stat", str(root / "sub" / "x.md")))
    assert walk.files == ("sub/x.md",)
    assert _kinds(walk) == {"link.md": "broken_link"}


def test_the_kinds_are_closed_and_second_names_among_them() -> None:
    kinds = set(get_args(SkipKind))
    assert {"seen_directory", "seen_file"} == SECOND_NAMES
    assert kinds > SECOND_NAMES
    assert len(kinds) == 9


def test_the_import_refuses_by_kind(tree: Path) -> None:
    """A second name loses nothing (passed); a note that was not read is refused,
    whatever words its reason uses."""
    walked = gather_markdown(DirectoryReader(tree), exclusion(("drafts",)).unwrap())
    result = unsafe_perform_io(walked.unwrap())
    assert [path for path, _ in result.files] == ["notes/a.md"]
    refused = {path for path, _ in result.refused}
    passed = {path for path, _ in result.passed}
    assert refused == {"dangling.md", "into-drafts.md", "out.md", "pipe.md", "to-pipe"}
    assert passed == {"copy.md", "notes/loop"}


def test_an_import_of_second_names_only_refuses_nothing(tmp_path: Path) -> None:
    """A link named like a note that reaches a note already read, and a directory
    link back to the root, lose nothing: the import reports them and succeeds."""
    root = tmp_path / "n"
    root.mkdir()
    (root / "a.md").write_text("alpha\n")
    (root / "b.md").symlink_to(root / "a.md")
    (root / "again").symlink_to(root)
    gathered = gather_markdown(DirectoryReader(root), exclusion(()).unwrap())
    result = unsafe_perform_io(gathered.unwrap())
    assert [path for path, _ in result.files] == ["a.md"]
    assert sorted(path for path, _ in result.passed) == ["again", "b.md"]
    assert result.refused == ()
