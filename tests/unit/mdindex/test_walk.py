"""The walk of a folder on disk: regular files inside the root, each directory once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from returns.io import IOResult
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.mdfs import DirectoryReader, OsFileSystem
from memhtml.mdindex import ReadFailure, build
from memhtml.mdindex.globs import exclusion
from memhtml.mdindex.walk import ListedReader, Walk, walk_tree

PLAIN = "three plain words here"


def walked(root: Path, *globs: str) -> Walk:
    result = walk_tree(OsFileSystem(), str(root), exclusion(globs).unwrap())
    return unsafe_perform_io(result.unwrap())


def reasons(walk: Walk) -> dict[str, str]:
    return {s.path: s.reason for s in walk.skipped}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    tree = tmp_path / "notes"
    (tree / "topics").mkdir(parents=True)
    (tree / "a.md").write_text(PLAIN)
    (tree / "topics" / "b.md").write_text(PLAIN)
    return tree


def test_a_fifo_is_skipped_and_reported_never_opened(root: Path) -> None:
    os.mkfifo(root / "x.md")
    walk = walked(root)
    assert walk.files == ("a.md", "topics/b.md")
    assert "named pipe" in reasons(walk)["x.md"]
    # A read of the pipe by name is refused at stat, before any open could block.
    failure = unsafe_perform_io(DirectoryReader(root).read_files(["x.md"]).failure())
    assert isinstance(failure, ReadFailure)


def test_a_link_out_of_the_root_is_not_followed(root: Path) -> None:
    secret = root.parent / "secret.md"
    secret.write_text("a secret from outside the root")
    (root / "passwd.md").symlink_to(secret)
    (root / "out").symlink_to(root.parent)
    walk = walked(root)
    assert walk.files == ("a.md", "topics/b.md")
    assert "outside the root" in reasons(walk)["passwd.md"]
    assert "outside the root" in reasons(walk)["out"]
    assert isinstance(
        unsafe_perform_io(DirectoryReader(root).read_files(["passwd.md"]).failure()), ReadFailure
    )


def test_a_link_inside_the_root_is_followed(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / ".hidden").mkdir(parents=True)
    (root / ".hidden" / "kept.md").write_text(PLAIN)
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "real.md").write_text("the real words of it")
    (root / "alias.md").symlink_to(root / "elsewhere" / "real.md")
    (root / "sneak.md").symlink_to(root / ".hidden" / "kept.md")
    walk = walked(root)
    # The file has a real path, so the link is a second name for it.
    assert walk.files == ("elsewhere/real.md",)
    assert "same file as elsewhere/real.md" in reasons(walk)["alias.md"]
    # A link into an excluded directory does not smuggle its file back in.
    assert "excluded" in reasons(walk)["sneak.md"]


def test_a_symlinked_directory_is_walked_once(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / "hidden-target").mkdir(parents=True)
    (root / "hidden-target" / "c.md").write_text(PLAIN)
    (root / "a-link").symlink_to(root / "hidden-target", target_is_directory=True)
    walk = walked(root)
    # Real directories first: the file is listed under its real path even
    # though the link's name sorts first, and not a second time through it.
    assert walk.files == ("hidden-target/c.md",)
    assert "already walked" in reasons(walk)["a-link"]


def test_a_link_into_an_excluded_directory_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / "_store" / "deep").mkdir(parents=True)
    (root / "_store" / "deep" / "d.md").write_text(PLAIN)
    (root / "a.md").write_text(PLAIN)
    (root / "view").symlink_to(root / "_store" / "deep", target_is_directory=True)
    walk = walked(root, "_store")
    assert walk.files == ("a.md",)
    assert "_store/deep, which is excluded" in reasons(walk)["view"]


def test_a_cycle_ends(root: Path) -> None:
    (root / "topics" / "loop").symlink_to(root, target_is_directory=True)
    (root / "self").symlink_to(root / "self")
    walk = walked(root)
    assert walk.files == ("a.md", "topics/b.md")
    assert "already walked" in reasons(walk)["topics/loop"]
    assert "self" in reasons(walk)


def test_build_over_a_folder_with_every_hazard(root: Path) -> None:
    os.mkfifo(root / "pipe.md")
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "etc.md").symlink_to("/etc/passwd")
    corpus = unsafe_perform_io(build(DirectoryReader(root)).unwrap())
    assert corpus.files == ("a.md", "topics/b.md")


def test_the_listed_reader_serves_one_walk(root: Path) -> None:
    reader = DirectoryReader(root)
    walk = unsafe_perform_io(reader.walk(lambda _: False).unwrap())
    listed = ListedReader(reader, walk.files)
    pruned: IOResult[tuple[str, ...], ReadFailure] = listed.list_files(lambda p: p == "topics")
    assert unsafe_perform_io(pruned.unwrap()) == ("a.md",)


def test_a_missing_root_is_a_read_failure(tmp_path: Path) -> None:
    result = walk_tree(OsFileSystem(), str(tmp_path / "absent"), lambda _: False)
    assert isinstance(unsafe_perform_io(result.failure()), ReadFailure)
