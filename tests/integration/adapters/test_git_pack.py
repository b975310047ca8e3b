"""A commit's blobs written as one pack are the blobs ``create_blob`` writes.

For generated blobs (empty, one byte, sizes across the pack header's 4-bit and 7-bit
size steps, binary, repeated): each id is the one libgit2 gives the same bytes, libgit2
reads each back from the pack, and git itself passes the pack (``verify-pack``) and
the repository (``fsck --strict``). A commit of many files through the adapter lands
the tree a loose write lands, with its blobs in one pack.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memhtml.adapters import tree_edit
from memhtml.adapters.git_pack import PACK_MIN_BLOBS, write_blob_pack
from memhtml.adapters.tree_edit import edited_tree
from memhtml.contracts.services import PathChange

BLOBS = st.lists(st.one_of(st.binary(max_size=40), st.binary(min_size=120, max_size=3000),
                           st.sampled_from([b"", b"x", b"\x00" * 17, b"a" * 2049])),
                 min_size=1, max_size=30)


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=False)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(BLOBS)
def test_a_packed_blob_is_the_blob(tmp_path_factory: pytest.TempPathFactory,
                                   blobs: list[bytes]) -> None:
    root = tmp_path_factory.mktemp("packed")
    repo = pygit2.init_repository(str(root))
    loose = pygit2.init_repository(str(tmp_path_factory.mktemp("loose")))
    ids = write_blob_pack(repo, blobs)
    assert ids is not None
    assert ids == [loose.create_blob(data) for data in blobs]
    for oid, data in zip(ids, blobs, strict=True):
        found = repo.get(oid)
        assert isinstance(found, pygit2.Blob) and found.data == data
    packs = sorted((root / ".git" / "objects" / "pack").glob("pack-*.idx"))
    assert len(packs) == 1
    verified = _git(root, "verify-pack", str(packs[0]))
    assert verified.returncode == 0, verified.stderr
    fsck = _git(root, "fsck", "--strict", "--full", "--no-dangling")
    assert fsck.returncode == 0, fsck.stderr


def test_a_commit_of_many_files_packs_them_and_lands_the_same_tree(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    changes = [PathChange(f"areas/{n % 7}/note-{n}.html", f"note {n}\n".encode() * (n % 5))
               for n in range(PACK_MIN_BLOBS + 10)]
    packed = pygit2.init_repository(str(tmp_path / "packed"))
    written: dict[str, bytes] = {}
    tree = edited_tree(packed, None, changes, written).unwrap()
    monkeypatch.setattr(tree_edit, "PACK_MIN_BLOBS", 10**9)
    loose = pygit2.init_repository(str(tmp_path / "loose"))
    assert edited_tree(loose, None, changes).unwrap() == tree
    assert {written[str(tree_edit_entry(packed, tree, c.path))] == c.data
            for c in changes} == {True}
    assert len(list((tmp_path / "packed" / ".git" / "objects" / "pack").glob("*.pack"))) == 1
    assert not list((tmp_path / "loose" / ".git" / "objects" / "pack").glob("*.pack"))


def tree_edit_entry(repo: pygit2.Repository, tree: pygit2.Oid, path: str) -> pygit2.Oid:
    found = repo.get(tree)
    assert isinstance(found, pygit2.Tree)
    return found[path].id
