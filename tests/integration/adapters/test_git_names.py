"""Lookups that hand pygit2 no name (``git_names``) find what pygit2's own lookups find,
and keep no reference to the name they were asked about.

pygit2 keeps a reference to every name given to a tree's ``in``/``[]``/``/``, to
``TreeBuilder.get``/``remove`` and to a reference lookup, so a name made at run time
is never freed (``bench/pygit2_leaks.py`` measures it; ``docs/design.md`` has the
figures). The git adapters go round those calls; these laws hold the way round to
the calls it replaces, on generated trees whose names sort the awkward way git sorts
them (``a-b`` and ``a.b`` either side of a directory ``a``, whose entry sorts as
``a/``), and hold it to keeping nothing.
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygit2.enums import FileMode

from memhtml.adapters.git_names import entry_at, reference, tree_entry, tree_without

NAMES = ["a", "a-b", "a.b", "a0", "ab", "a b", "b", "é", "A", "a.b.c", "z" * 40]
_names = st.sampled_from(NAMES)


def _fresh(name: str) -> str:
    """An equal string that is a new object, as a name split from a path is."""
    return "".join(list(name))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path_factory.mktemp("names")), bare=True)


def _tree(repo: pygit2.Repository, files: set[str], folders: dict[str, set[str]]
          ) -> pygit2.Tree:
    blob = repo.create_blob(b"x")
    builder = repo.TreeBuilder()
    for name in files:
        builder.insert(name, blob, FileMode.BLOB)
    for name, inside in folders.items():
        sub = repo.TreeBuilder()
        for child in inside or {"only"}:
            sub.insert(child, blob, FileMode.BLOB)
        builder.insert(name, sub.write(), FileMode.TREE)
    tree = repo[builder.write()]
    assert isinstance(tree, pygit2.Tree)
    return tree


_trees = st.tuples(st.sets(_names, max_size=8),
                   st.dictionaries(_names, st.sets(_names, max_size=3), max_size=4)
                   ).map(lambda t: (t[0] - set(t[1]), t[1]))


def _pygit2_entry(tree: pygit2.Tree, name: str) -> tuple[str, int] | None:
    try:
        found = tree[name]
    except KeyError:
        return None
    return str(found.id), found.filemode


def _ours(found: pygit2.Object | None) -> tuple[str, int] | None:
    return None if found is None else (str(found.id), found.filemode)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=_trees, probes=st.lists(_names, min_size=1, max_size=6))
def test_an_entry_found_by_index_is_the_one_pygit2_finds_by_name(
        repo: pygit2.Repository, shape: tuple[set[str], dict[str, set[str]]],
        probes: list[str]) -> None:
    files, folders = shape
    tree = _tree(repo, files, folders)
    for name in probes:
        assert _ours(tree_entry(tree, name)) == _pygit2_entry(tree, name), name
        for child in NAMES[:4]:
            path = f"{name}/{child}"
            assert _ours(entry_at(tree, path)) == _pygit2_entry(tree, path), path


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=_trees, gone=st.sets(_names, max_size=5))
def test_a_tree_without_some_entries_is_the_tree_builders(
        repo: pygit2.Repository, shape: tuple[set[str], dict[str, set[str]]],
        gone: set[str]) -> None:
    files, folders = shape
    tree = _tree(repo, files, folders)
    builder = repo.TreeBuilder(tree)
    for name in gone:
        if builder.get(name) is not None:
            builder.remove(name)
    assert tree_without(repo, tree, gone).id == builder.write()


def test_a_reference_is_found_as_pygit2_finds_it(repo: pygit2.Repository,
                                                 tmp_path: Path) -> None:
    checkout = pygit2.init_repository(str(tmp_path / "r"), initial_head="main")
    author = pygit2.Signature("a", "a@example.org", 0, 0)
    tree = checkout.TreeBuilder().write()
    checkout.create_commit("refs/heads/main", author, author, "m", tree, [])
    for name in ("HEAD", "refs/heads/main", "refs/heads/none", "main", "not a ref", ""):
        ours = reference(checkout, _fresh(name))
        theirs = checkout.references.get(name)
        assert (ours is None) == (theirs is None), name
        if ours is not None and theirs is not None:
            assert ours.name == theirs.name and ours.target == theirs.target


def test_no_lookup_keeps_the_name_it_was_given(repo: pygit2.Repository,
                                               tmp_path: Path) -> None:
    tree = _tree(repo, {"a", "a-b"}, {"d": {"x"}})
    checkout = pygit2.init_repository(str(tmp_path / "r"), initial_head="main")
    for name in ("a", "missing", "d", "d/x", "d/missing", "refs/heads/main", "refs/x/y"):
        # a reference is looked up under the interned name: the first lookup of a name
        # keeps that one string, and no later lookup of the name keeps another
        reference(checkout, _fresh(name))
        fresh = _fresh(name)
        before = sys.getrefcount(fresh)
        tree_entry(tree, fresh)
        entry_at(tree, fresh)
        tree_without(repo, tree, [fresh])
        reference(checkout, fresh)
        assert sys.getrefcount(fresh) == before, name


def test_the_way_the_refcount_is_read_sees_pygit2_keep_a_name(repo: pygit2.Repository
                                                              ) -> None:
    """The check above would see a kept name: pygit2's own lookup keeps one. When a
    pygit2 release stops keeping it, this says so and ``git_names`` can go."""
    tree = _tree(repo, {"a"}, {})
    fresh = _fresh("missing")
    before = sys.getrefcount(fresh)
    _ = fresh in tree
    if sys.getrefcount(fresh) == before:
        pytest.skip(f"pygit2 {version('pygit2')} no longer keeps the names it looks up")
    assert sys.getrefcount(fresh) == before + 1
