"""A commit's tree built by editing the touched directories (``tree_edit``) is the
tree the whole-index route builds, for any parent git writes and any run of changes:
additions, replacements, deletions (of files, of directories, of nothing), modes,
links, repeated paths, and the clashes both refuse with the same reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygit2.enums import FileMode
from returns.pipeline import is_successful
from returns.result import Failure, Result, Success

from memhtml.adapters.tree_edit import edited_tree, tree_delta
from memhtml.contracts.errors import GitError, GitFailure
from memhtml.contracts.services import (
    FILE_MODE_BLOB,
    FILE_MODE_EXECUTABLE,
    FILE_MODE_LINK,
    PathChange,
)

PATHS = st.builds("/".join, st.lists(st.sampled_from(["a", "b", "c.html", "d"]),
                                     min_size=1, max_size=3))
MODES = st.sampled_from([None, None, FILE_MODE_BLOB, FILE_MODE_EXECUTABLE, FILE_MODE_LINK,
                         0o040000])
CHANGES = st.lists(st.builds(PathChange, PATHS, st.none() | st.binary(max_size=3), MODES),
                   max_size=8)


def _parents_of(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:end]) for end in range(1, len(parts))]


def _by_index(repo: pygit2.Repository, parent: pygit2.Tree | None,
              changes: Sequence[PathChange]) -> Result[pygit2.Oid, GitError]:
    """The route the adapter took before: the whole parent tree read into an index."""
    index = pygit2.Index()
    if parent is not None:
        index.read_tree(parent)
    files = {entry.path for entry in index}
    under: Counter[str] = Counter(d for f in files for d in _parents_of(f))
    for change in changes:
        path, present = change.path, change.path in files
        if change.data is None:
            if present:
                index.remove(path)
                files.discard(path)
                under.subtract(_parents_of(path))
            continue
        if not present and (under[path] > 0 or any(d in files for d in _parents_of(path))):
            return Failure(GitFailure(
                "commit", f"{path!r} collides with a file or directory of the same name"))
        if change.mode not in (None, FILE_MODE_BLOB, FILE_MODE_EXECUTABLE, FILE_MODE_LINK):
            return Failure(GitFailure("commit", f"mode {change.mode:o} for {path!r} is "
                                                "not a file's or a link's"))
        mode = change.mode if change.mode is not None else (
            index[path].mode if present else FILE_MODE_BLOB)
        index.add(pygit2.IndexEntry(path, repo.create_blob(change.data), FileMode(mode)))
        if not present:
            files.add(path)
            under.update(_parents_of(path))
    return Success(index.write_tree(repo))


def _parent(repo: pygit2.Repository, files: dict[str, tuple[bytes, int]]
            ) -> pygit2.Tree | None:
    """A tree git itself would write, from files whose paths do not clash."""
    built = _by_index(repo, None, [PathChange(p, data, mode)
                                   for p, (data, mode) in files.items()])
    assert is_successful(built)
    return repo.get(built.unwrap())  # type: ignore[return-value]


PARENTS = st.dictionaries(PATHS, st.tuples(st.binary(max_size=3), st.sampled_from(
    [FILE_MODE_BLOB, FILE_MODE_EXECUTABLE, FILE_MODE_LINK])), max_size=6).filter(
    lambda files: not any(d in files for p in files for d in _parents_of(p)))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path_factory.mktemp("trees") / "r"), bare=True)


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=PARENTS, changes=CHANGES, fresh=st.booleans())
def test_editing_the_touched_directories_gives_the_index_routes_tree(
        repo: pygit2.Repository, files: dict[str, tuple[bytes, int]],
        changes: list[PathChange], fresh: bool) -> None:
    parent = None if fresh else _parent(repo, files)
    expected, got = _by_index(repo, parent, changes), edited_tree(repo, parent, changes)
    assert is_successful(got) == is_successful(expected)
    if is_successful(expected):
        assert got.unwrap() == expected.unwrap()
    else:
        assert got.failure() == expected.failure()


def test_a_submodule_entry_is_kept_and_can_be_replaced(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    builder = repo.TreeBuilder()
    builder.insert("sub", pygit2.Oid(hex="1" * 40), 0o160000)
    builder.insert("keep.html", repo.create_blob(b"k"), FILE_MODE_BLOB)
    folder = repo.TreeBuilder()
    folder.insert("x.html", repo.create_blob(b"x"), FILE_MODE_BLOB)
    builder.insert("areas", folder.write(), 0o040000)
    parent = repo.get(builder.write())
    assert isinstance(parent, pygit2.Tree)
    for changes in ([PathChange("areas/y.html", b"y")],
                    [PathChange("areas/x.html", None), PathChange("new/z.html", b"z")],
                    [PathChange("sub", b"now a file")], [PathChange("sub/inner", b"i")]):
        expected, got = _by_index(repo, parent, changes), edited_tree(repo, parent, changes)
        assert is_successful(got) == is_successful(expected)
        assert (got.unwrap() == expected.unwrap()) if is_successful(got) else (
            got.failure() == expected.failure())


def _walked(before: pygit2.Tree | None, after: pygit2.Tree | None,
            prefix: str = "") -> set[str]:
    """Every file path whose entry differs, by visiting each entry of both trees."""
    old = {o.name: o for o in before} if before is not None else {}
    new = {o.name: o for o in after} if after is not None else {}
    out: set[str] = set()
    for name in old.keys() | new.keys():
        was, now = old.get(name), new.get(name)
        was_tree = was if isinstance(was, pygit2.Tree) else None
        now_tree = now if isinstance(now, pygit2.Tree) else None
        if was_tree is not None or now_tree is not None:
            out |= _walked(was_tree, now_tree, f"{prefix}{name}/")
        same = was is not None and now is not None and was.id == now.id \
            and was.filemode == now.filemode
        if not same and ((was is not None and was_tree is None)
                         or (now is not None and now_tree is None)):
            out.add(f"{prefix}{name}")
    return out


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=PARENTS, changes=CHANGES, walked=st.sampled_from([0, 1, 2, 256]),
       data=st.data())
def test_the_paths_two_trees_differ_on_whichever_way_they_are_compared(
        repo: pygit2.Repository, files: dict[str, tuple[bytes, int]],
        changes: list[PathChange], walked: int, data: st.DataObject) -> None:
    """Entry by entry, by libgit2's diff, or a mix by directory size: the same paths,
    those a walk of every entry finds (modes alone, links, a file become a directory)."""
    if files:
        # The same bytes under another mode: a change only the mode shows.
        for path in data.draw(st.lists(st.sampled_from(sorted(files)), max_size=3)):
            content, mode = files[path]
            changes = [PathChange(path, content, data.draw(st.sampled_from(
                [m for m in (FILE_MODE_BLOB, FILE_MODE_EXECUTABLE, FILE_MODE_LINK)
                 if m != mode]))), *changes]
    before = _parent(repo, files) or repo.get(repo.TreeBuilder().write())
    assert isinstance(before, pygit2.Tree)
    built = edited_tree(repo, before, changes)
    if not is_successful(built):
        return
    after = repo.get(built.unwrap())
    assert isinstance(after, pygit2.Tree)
    expected = tuple(sorted(_walked(before, after)))
    assert tree_delta(repo, before, after, walked) == expected
    assert tree_delta(repo, after, before, walked) == expected


def test_a_path_thousands_of_folders_deep_is_built_as_the_index_builds_it(
        repo: pygit2.Repository) -> None:
    deep = "/".join(["d"] * 1200 + ["f.html"])
    for changes in ([PathChange(deep, b"x")],
                    [PathChange(deep, b"x"), PathChange("d/e.html", b"y"), PathChange(deep, None)]):
        expected, got = _by_index(repo, None, changes), edited_tree(repo, None, changes)
        assert is_successful(expected) and got.unwrap() == expected.unwrap()
