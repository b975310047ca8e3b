"""Pages beside the memories (an imported index) land through the batch door: in the
same commit as the memories, never at a path the head, publish or git owns, never
over a symbolic link, and not at all when the store already holds their bytes."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode
from returns.pipeline import is_successful

from memhtml.contracts.services import FILE_MODE_LINK
from memhtml.store import BWrite, Refused, WriteInput, batch, describe
from memhtml.store.doors import page_path
from memhtml.store.reads import markdown_pages
from tests.integration.store.store_support import err, make_store, ok, tip


def _write(title: str) -> BWrite:
    return BWrite(WriteInput(title=title, claim=f"{title} is a fact.", directory="areas/x/"))


def test_a_page_lands_with_the_memories_in_one_commit(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path, worktree=False)
    before = tip(store)
    landed = ok(batch(store, [_write("One")], {"areas/x/MEMORY.md": b"- [One](one.html)\n"}))
    assert "areas/x/MEMORY.md" in landed.paths and len(landed.paths) == 2
    repo = pygit2.Repository(str(tmp_path))
    commit = repo.revparse_single(landed.commit).peel(pygit2.Commit)
    assert [str(p) for p in commit.parent_ids] == [before]
    version = ok(store.head())
    assert version.get("areas/x/MEMORY.md") is None, "a page is no memory"
    assert ok(markdown_pages(store, version)) == {"areas/x/MEMORY.md": "- [One](one.html)\n"}
    again = ok(batch(store, [], {"areas/x/MEMORY.md": b"- [One](one.html)\n"}))
    assert again.paths == () and again.commit == landed.commit, \
        "a page already holding its bytes commits nothing"


@pytest.mark.parametrize("path", [
    "areas/x/note.html", "index.html", "areas/index.html", "sitemap.xml",
    ".memhtml/config.toml", ".gitattributes", "../outside.md", "/etc/x.md", "a/../../b.md",
    "./areas/x/MEMORY.md",
])
def test_a_page_at_a_path_someone_else_owns_is_refused(tmp_path: Path, path: str) -> None:
    store, _ = make_store(tmp_path, worktree=False)
    before = tip(store)
    error = err(batch(store, [_write("One")], {path: b"x"}))
    assert isinstance(error, Refused) or "outside" in describe(error), describe(error)
    assert tip(store) == before, "a refused page commits nothing, memories included"
    assert not is_successful(page_path(path)) and is_successful(page_path("a.md"))


def test_a_page_over_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path, worktree=False)
    repo = pygit2.Repository(str(tmp_path))
    parent = repo.head.peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(parent.tree)
    index.add(pygit2.IndexEntry("areas/x/MEMORY.md", repo.create_blob(b"/etc/passwd"),
                                FileMode(FILE_MODE_LINK)))
    sig = pygit2.Signature("t", "t@example.org", 0, 0)
    repo.create_commit(repo.head.name, sig, sig, "link", index.write_tree(repo), [parent.id])
    before = tip(store)
    error = err(batch(store, [], {"areas/x/MEMORY.md": b"- a\n"}))
    assert "symbolic link" in describe(error)
    assert tip(store) == before
    assert ok(markdown_pages(store, ok(store.head()))) == {}, "a link is never read as a page"

