"""The ``Repository`` contract, run on ``PygitService`` and on ``InMemoryGit`` alike:
objects, refs, commits, diffs and history. The checkout's is ``test_checkout_contract``.

A test here speaks only the Protocol (and, through ``Backend``, the few things done to a
repository from outside it). Where the two could differ only by lying, shas are pinned:
the double computes git's own object ids, so a golden sha holds on both.
"""

from __future__ import annotations

import hashlib
import threading
from datetime import datetime, timedelta

import pytest
from returns.pipeline import is_successful

from memhtml.adapters.git import PygitService
from memhtml.adapters.memory_git import InMemoryGit
from memhtml.contracts.errors import GitFailure, NotFound, RefMoved
from memhtml.contracts.services import (
    FILE_MODE_BLOB,
    FILE_MODE_EXECUTABLE,
    FILE_MODE_LINK,
    Checkout,
    GitService,
    PathChange,
    Repository,
    Signature,
)
from tests.contract.git_backends import (
    AT,
    AUTHOR,
    EMPTY_TREE,
    GOLDEN_ROOT_SHA,
    GOLDEN_SECOND_SHA,
    Backend,
    drop,
    err,
    golden_history,
    ok,
    put,
)


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def test_both_implementations_are_git_services(backend: Backend) -> None:
    """Both ports, each implementation: the checker holds the classes to each Protocol."""
    repositories: tuple[type[Repository], ...] = (PygitService, InMemoryGit)
    checkouts: tuple[type[Checkout], ...] = (PygitService, InMemoryGit)
    services: tuple[type[GitService], ...] = (PygitService, InMemoryGit)
    assert isinstance(backend.git, repositories) and isinstance(backend.git, checkouts)
    assert isinstance(backend.git, services)


# -- resolve ----------------------------------------------------------------------


def test_resolve_names_of_every_kind(backend: Backend) -> None:
    git = backend.git
    assert err(git.resolve("main")) == NotFound("commit 'main'")
    assert isinstance(err(git.resolve("HEAD")), NotFound)

    first = backend.commit(None, [put("a.html", "one")])
    second = backend.commit(first, [put("a.html", "two")])

    for name in ("main", "refs/heads/main", "heads/main", "HEAD", "@", second.upper(),
                 second[:10], second[:4]):
        assert ok(git.resolve(name)) == second, name
    assert ok(git.resolve(first[:7])) == first
    for missing in ("nope", "0" * 40, "refs/heads", "HEAD/x", "é", "ffff"):
        assert isinstance(err(git.resolve(missing)), NotFound), missing
    # Too short to be a prefix, or not a name git accepts: refused, not "not found".
    for invalid in ("abc", "a..b", "bad name", "x/", "a//b", "main.lock", "~", ""):
        assert isinstance(err(git.resolve(invalid)), GitFailure), invalid


def test_resolve_refuses_objects_that_are_not_commits(backend: Backend) -> None:
    root = backend.commit(None, [])
    tree = err(backend.git.resolve(EMPTY_TREE))
    assert isinstance(tree, GitFailure)
    assert "tree" in tree.reason
    sha = backend.commit(root, [put("a.html", "a")])
    blob = err(backend.git.resolve(blob_id(b"a")))
    assert isinstance(blob, GitFailure)
    assert "blob" in blob.reason
    assert isinstance(err(backend.git.list_tree(blob_id(b"a"))), GitFailure)
    assert ok(backend.git.resolve(sha)) == sha


# -- list_tree, read_blobs and entries_at ------------------------------------------------


NESTED = {
    "top.html": "<p>top</p>",
    "areas/deploy/rollback.html": "<p>rollback</p>",
    "areas/deploy/z/deep/er.html": "<p>deep</p>",
    "areas/dépôt/日本語.html": "<p>ünïcödé 日本語 🚀</p>",
    "areas/a-b.html": "<p>dash sorts before slash in git, not here</p>",
    "archive/2026/old.html": "<p>old</p>",
}
NESTED_SHA = "10d76e9a96977c9c2ead93c927194f087470d884"


def test_list_tree_nested_and_multibyte(backend: Backend) -> None:
    sha = backend.commit(None, [put(path, text) for path, text in NESTED.items()])
    entries = ok(backend.git.list_tree(sha))

    assert [entry.path for entry in entries] == sorted(NESTED)
    assert all(entry.mode == FILE_MODE_BLOB for entry in entries)
    assert backend.tree_bytes(sha) == {p: t.encode("utf-8") for p, t in NESTED.items()}
    assert {e.path: e.blob_id for e in entries} == {
        p: blob_id(t.encode("utf-8")) for p, t in NESTED.items()}
    # The tree ids under the commit are git's: "a-b.html" sorts before "areas/deploy".
    assert sha == NESTED_SHA


def test_list_tree_of_empty_and_missing_commits(backend: Backend) -> None:
    root = backend.commit(None, [])
    assert ok(backend.git.list_tree(root)) == ()
    assert isinstance(err(backend.git.list_tree("1" * 40)), NotFound)


def test_read_blobs_batches_and_skips_what_git_lacks(backend: Backend) -> None:
    sha = backend.commit(None, [put("a.html", "alpha"), put("b/c.html", "γάμμα")])
    entries = {entry.path: entry.blob_id for entry in ok(backend.git.list_tree(sha))}
    missing = "f" * 40

    asked = [entries["a.html"], missing, entries["b/c.html"], sha]
    blobs = ok(backend.git.read_blobs(asked))
    assert blobs == {entries["a.html"]: b"alpha", entries["b/c.html"]: "γάμμα".encode()}
    upper = entries["a.html"].upper()
    assert ok(backend.git.read_blobs([upper])) == {upper: b"alpha"}
    assert ok(backend.git.read_blobs([])) == {}
    assert isinstance(err(backend.git.read_blobs(["abc123"])), GitFailure)
    assert isinstance(err(backend.git.read_blobs([entries["a.html"], "abc123"])), GitFailure)


def test_entries_at_finds_files_only(backend: Backend) -> None:
    sha = backend.commit(None, [put("a.html", "1"), put("d/b.html", "2"), put("d/e/f", "3")])
    asked = ["d/b.html", "a.html", "d", "d/e", "missing.html", "d/missing", "a.html/x",
             "/a.html", "/d/b.html", "//a.html", "d//b.html", "", "d/", "a.html"]
    found = ok(backend.git.entries_at(sha, asked))
    assert [(e.path, e.blob_id) for e in found] == [
        ("/a.html", blob_id(b"1")), ("/d/b.html", blob_id(b"2")),
        ("a.html", blob_id(b"1")), ("a.html", blob_id(b"1")), ("d/b.html", blob_id(b"2"))]
    assert ok(backend.git.entries_at(sha, [])) == ()
    assert isinstance(err(backend.git.entries_at("2" * 40, ["a.html"])), NotFound)


def test_names_in_lists_the_directories_asked_for(backend: Backend) -> None:
    sha = backend.commit(None, [put(path, text) for path, text in NESTED.items()])
    asked = ["", "areas", "areas/deploy", "areas/dépôt", "top.html", "missing", "areas/z",
             "areas/deploy/z/deep"]
    assert ok(backend.git.names_in(sha, asked)) == {
        "": ("archive/", "areas/", "top.html"),
        "areas": ("a-b.html", "deploy/", "dépôt/"),
        "areas/deploy": ("rollback.html", "z/"),
        "areas/dépôt": ("日本語.html",),
        "areas/deploy/z/deep": ("er.html",),
    }
    assert ok(backend.git.names_in(sha, [])) == {}
    assert isinstance(err(backend.git.names_in("2" * 40, [""])), NotFound)


# -- changed_paths ----------------------------------------------------------------


def test_changed_paths_lists_both_sides_of_a_rename(backend: Backend) -> None:
    first = backend.commit(
        None, [put("keep.html", "same"), put("a/old.html", "moving"), put("edit.html", "v1")])
    second = backend.commit(first, [drop("a/old.html"), put("b/new.html", "moving"),
                                    put("edit.html", "v2"), put("added/ü.html", "new")])
    expected = ("a/old.html", "added/ü.html", "b/new.html", "edit.html")
    assert ok(backend.git.changed_paths(first, second)) == expected
    assert ok(backend.git.changed_paths(second, first)) == expected
    assert ok(backend.git.changed_paths(second, second)) == ()
    assert isinstance(err(backend.git.changed_paths(first, "2" * 40)), NotFound)


def test_changed_paths_sees_a_mode_change_and_a_file_becoming_a_directory(
    backend: Backend,
) -> None:
    first = backend.commit(None, [put("run.sh", "#!/bin/sh\n"), put("notes", "a file")])
    second = backend.chmod(first, "run.sh", FILE_MODE_EXECUTABLE)
    assert ok(backend.git.changed_paths(first, second)) == ("run.sh",)
    third = backend.commit(second, [drop("notes"), put("notes/one.html", "1")])
    assert ok(backend.git.changed_paths(second, third)) == ("notes", "notes/one.html")


# -- commit -----------------------------------------------------------------------


def test_commit_builds_on_the_parent_tree(backend: Backend) -> None:
    first = backend.commit(None, [put("a.html", "a"), put("d/b.html", "b")], "first")
    second = backend.commit(first, [put("d/c.html", "c"), drop("a.html")], "second")

    assert ok(backend.git.resolve("main")) == second
    assert backend.tree_bytes(second) == {"d/b.html": b"b", "d/c.html": b"c"}
    info = ok(backend.git.commit_info(second))
    assert info.parents == (first,)
    assert info.author == AUTHOR
    assert info.time == AT
    assert info.time.utcoffset() == timedelta(hours=2)


def test_commit_with_nothing_to_change_returns_the_parent(backend: Backend) -> None:
    first = backend.commit(None, [put("a.html", "a")])
    assert backend.commit(first, []) == first
    assert backend.commit(first, [drop("never/was.html"), drop("a.html/x")]) == first
    assert backend.commit(first, [put("a.html", "a")]) == first
    assert backend.commit(first, [drop("a.html"), put("a.html", "a")]) == first
    assert ok(backend.git.commits_between(None, "main")) == (first,)


def test_an_empty_tree_root_is_still_a_commit(backend: Backend) -> None:
    root = backend.commit(None, [], "empty")
    assert ok(backend.git.commit_info(root)).parents == ()
    assert ok(backend.git.read_blobs([EMPTY_TREE])) == {}


def test_empty_change_set_on_a_moved_ref_is_still_refused(backend: Backend) -> None:
    first = backend.commit(None, [put("a.html", "a")])
    second = backend.commit(first, [put("a.html", "b")])
    assert err(backend.git.commit("main", first, [], "noop", AUTHOR, AT)) == RefMoved(
        "main", first, second)


def test_later_change_to_the_same_path_wins(backend: Backend) -> None:
    sha = backend.commit(None, [put("x.html", "1"), put("x.html", "2")])
    assert backend.tree_bytes(sha) == {"x.html": b"2"}
    again = backend.commit(sha, [drop("x.html"), put("x.html", "3")])
    assert backend.tree_bytes(again) == {"x.html": b"3"}


def test_a_write_keeps_the_mode_of_the_file_it_replaces(backend: Backend) -> None:
    first = backend.commit(None, [put("run.sh", "v1"), put("link", "target")])
    chmod = backend.chmod(backend.chmod(first, "run.sh", FILE_MODE_EXECUTABLE), "link",
                          FILE_MODE_LINK)
    rewritten = backend.commit(chmod, [put("run.sh", "v2"), put("new.sh", "n"),
                                       put("link", "elsewhere")])
    modes = {entry.path: entry.mode for entry in ok(backend.git.list_tree(rewritten))}
    assert modes == {"new.sh": FILE_MODE_BLOB, "run.sh": FILE_MODE_EXECUTABLE,
                     "link": FILE_MODE_LINK}
    links = [e.path for e in ok(backend.git.entries_at(rewritten, ["link", "run.sh"]))
             if e.is_symlink]
    assert links == ["link"]


@pytest.mark.parametrize(
    "changes",
    [
        [put("areas", "a file where a directory is")],
        [put("areas/deploy/x.html/inner.html", "a directory where a file is")],
        [put("new", "1"), put("new/a", "2")],
    ],
)
def test_file_directory_collisions_are_refused(
    backend: Backend, changes: list[PathChange]
) -> None:
    first = backend.commit(None, [put("areas/deploy/x.html", "x")])
    failure = err(backend.git.commit("main", first, changes, "collide", AUTHOR, AT))
    assert isinstance(failure, GitFailure)
    assert "collides" in failure.reason
    assert ok(backend.git.resolve("main")) == first


@pytest.mark.parametrize(
    ("before", "changes"),
    [
        (["areas/deploy/x.html"], [put("new/a", "1"), put("new", "2")]),
        (["new/a", "z"], [drop("z"), put("z/q", "1"), put("z", "2")]),
    ],
)
def test_a_collision_within_one_commit_is_refused(
    backend: Backend, before: list[str], changes: list[PathChange],
) -> None:
    # libgit2's index misses a file written over a directory that was itself written
    # earlier in the same commit (write_tree then drops one side silently), so the
    # adapter checks the clash itself; this suite found the gap.
    first = backend.commit(None, [put(path, path) for path in before])
    failure = err(backend.git.commit("main", first, changes, "collide", AUTHOR, AT))
    assert isinstance(failure, GitFailure)
    assert ok(backend.git.resolve("main")) == first


def test_a_collision_cleared_earlier_in_the_same_commit_is_fine(backend: Backend) -> None:
    first = backend.commit(None, [put("notes", "a file")])
    second = backend.commit(first, [drop("notes"), put("notes/one.html", "now a directory")])
    assert backend.tree_bytes(second) == {"notes/one.html": b"now a directory"}


@pytest.mark.parametrize(
    "path",
    ["../escape.html", "/abs.html", "a\\b.html", ".git/config", "a/.GIT/x", "a//b", "a/./b",
     "", "a/.git.", "GIT~1/x", "a/.git::$INDEX_ALLOCATION"],
)
def test_refused_paths_commit_nothing(backend: Backend, path: str) -> None:
    first = backend.commit(None, [put("a.html", "a")])
    failure = err(backend.git.commit(
        "main", first, [put("fine.html", "never written"), put(path, "bad")], "m", AUTHOR, AT))
    assert isinstance(failure, GitFailure)
    assert failure.operation == "commit"
    assert ok(backend.git.resolve("main")) == first
    if path in ("a/.git.", "GIT~1/x", "a/.git::$INDEX_ALLOCATION"):
        return  # libgit2 refuses these only when building the tree, after the blobs
    assert ok(backend.git.read_blobs([blob_id(b"never written")])) == {}
    drop_failure = err(backend.git.commit("main", first, [drop(path)], "m", AUTHOR, AT))
    assert isinstance(drop_failure, GitFailure)


def test_paths_git_accepts_are_kept_verbatim(backend: Backend) -> None:
    odd = ["a:b", "a/ b", "b.", "b ", "..a", "a/...", ".gitmodules", "a/.git~1", "git~2",
           "a/.git.lock", "con", "a/\u2028", "a/\x80"]
    sha = backend.commit(None, [put(path, path) for path in odd])
    assert backend.tree_bytes(sha) == {path: path.encode() for path in odd}


def test_a_naive_time_is_refused(backend: Backend) -> None:
    naive = datetime(2026, 1, 1, 0, 0)
    failure = err(backend.git.commit("main", None, [put("a.html", "a")], "m", AUTHOR, naive))
    assert isinstance(failure, GitFailure)
    assert isinstance(err(backend.git.resolve("main")), NotFound)


@pytest.mark.parametrize("ref", ["bad name", "a..b", "x.lock", "refs/heads/", "-/~"])
def test_invalid_ref_name_is_refused(backend: Backend, ref: str) -> None:
    failure = err(backend.git.commit(ref, None, [put("a.html", "a")], "m", AUTHOR, AT))
    assert isinstance(failure, GitFailure)


def test_signatures_are_stored_as_libgit2_trims_them(backend: Backend) -> None:
    sha = ok(backend.git.commit("main", None, [], "m", Signature(" 'Ann' ;", "\tann@x, "), AT))
    assert ok(backend.git.commit_info(sha)).author == Signature("Ann", "ann@x")
    sha = ok(backend.git.commit("main", sha, [put("b", "b")], "m", Signature(".Bo.", "b@x"),
                                AT))
    assert ok(backend.git.commit_info(sha)).author == Signature(".Bo.", "b@x")
    for bad in (Signature("a<b", "e"), Signature("", "e"), Signature("n", " ;; "),
                Signature("n", "e\0"), Signature("n", "<e>")):
        assert isinstance(err(backend.git.commit("other", None, [], "m", bad, AT)), GitFailure)
    assert isinstance(err(backend.git.resolve("other")), NotFound)


def test_commit_on_a_nested_branch_name(backend: Backend) -> None:
    sha = backend.commit(None, [put("a.html", "a")], ref="sleep/run-1")
    assert ok(backend.git.resolve("sleep/run-1")) == sha
    assert ok(backend.git.resolve("refs/heads/sleep/run-1")) == sha
    assert isinstance(err(backend.git.resolve("main")), NotFound)


def test_commit_ids_are_git_s_own(backend: Backend) -> None:
    assert golden_history(backend.git) == (GOLDEN_ROOT_SHA, GOLDEN_SECOND_SHA)


def test_commit_on_the_checked_out_branch_moves_the_branch(checkout: Backend) -> None:
    sha = checkout.commit(None, [put("a.html", "a")], ref="HEAD")
    assert ok(checkout.git.resolve("main")) == sha
    assert ok(checkout.git.resolve("HEAD")) == sha
    lost = err(checkout.git.commit("HEAD", None, [put("b.html", "b")], "m", AUTHOR, AT))
    assert lost == RefMoved("HEAD", None, sha)


# -- compare-and-swap -------------------------------------------------------------


def test_second_writer_from_the_same_parent_gets_ref_moved(backend: Backend) -> None:
    base = backend.commit(None, [put("base.html", "base")])
    first = backend.commit(base, [put("one.html", "1")], "writer one")

    lost = err(backend.git.commit("main", base, [put("two.html", "2")], "writer two",
                                  AUTHOR, AT))
    assert lost == RefMoved("main", base, first)
    assert ok(backend.git.resolve("main")) == first
    history = ok(backend.git.commits_between(None, "main"))
    assert history == (base, first)
    assert "two.html" not in backend.tree_bytes(first)
    assert all("writer two" not in ok(backend.git.commit_info(sha)).message for sha in history)

    retried = backend.commit(first, [put("two.html", "2")], "writer two")
    assert ok(backend.git.commits_between(None, "main")) == (base, first, retried)
    assert set(backend.tree_bytes(retried)) == {"base.html", "one.html", "two.html"}


def test_ref_moved_covers_a_missing_ref_and_an_unexpected_one(backend: Backend) -> None:
    git = backend.git
    root = backend.commit(None, [put("a.html", "a")])
    assert err(git.commit("main", None, [put("b.html", "b")], "m", AUTHOR, AT)) == RefMoved(
        "main", None, root)
    assert err(git.commit("other", root, [put("b.html", "b")], "m", AUTHOR, AT)) == RefMoved(
        "other", root, None)
    assert err(git.commit("refs/heads/main", None, [], "m", AUTHOR, AT)) == RefMoved(
        "refs/heads/main", None, root)
    assert isinstance(err(git.resolve("other")), NotFound)
    missing_parent = err(git.commit("main", "3" * 40, [put("b.html", "b")], "m", AUTHOR, AT))
    assert isinstance(missing_parent, NotFound)
    assert ok(git.resolve("main")) == root


def test_the_expected_parent_may_be_named_not_just_given_as_a_sha(backend: Backend) -> None:
    root = backend.commit(None, [put("a.html", "a")])
    second = ok(backend.git.commit("main", "main", [put("b.html", "b")], "m", AUTHOR, AT))
    assert ok(backend.git.commit_info(second)).parents == (root,)


WRITERS = 4
COMMITS_EACH = 8


def test_racing_threads_lose_no_commit(backend: Backend) -> None:
    root = backend.commit(None, [put("root.html", "root")])
    start = threading.Barrier(WRITERS)
    lost: list[int] = []

    def writer(number: int) -> None:
        git = backend.writer()
        start.wait()
        for n in range(COMMITS_EACH):
            change = [put(f"w{number}/c{n}.html", f"{number} {n}")]
            while True:
                tip = ok(git.resolve("main"))
                result = git.commit("main", tip, change, f"w{number} c{n}", AUTHOR, AT)
                if is_successful(result):
                    break
                assert isinstance(err(result), RefMoved)
                lost.append(number)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    history = ok(backend.git.commits_between(None, "main"))
    assert len(history) == 1 + WRITERS * COMMITS_EACH
    assert history[0] == root
    assert all(not thread.is_alive() for thread in threads)
    expected = {"root.html"} | {f"w{w}/c{n}.html" for w in range(WRITERS)
                                for n in range(COMMITS_EACH)}
    assert set(backend.tree_bytes(history[-1])) == expected


# -- branches ---------------------------------------------------------------------


def test_create_and_delete_branches(backend: Backend) -> None:
    git = backend.git
    root = backend.commit(None, [put("a.html", "a")])
    ok(git.create_branch("sleep/run", root))
    assert ok(git.resolve("sleep/run")) == root
    ok(git.create_branch("refs/heads/by-full-name", "main"))
    assert ok(git.resolve("by-full-name")) == root

    exists = err(git.create_branch("sleep/run", "main"))
    assert isinstance(exists, GitFailure)
    assert "exists" in exists.reason
    assert isinstance(err(git.create_branch("x", "4" * 40)), NotFound)
    assert isinstance(err(git.create_branch("bad name", root)), GitFailure)
    assert isinstance(err(git.resolve("x")), NotFound)

    ok(git.delete_branch("sleep/run"))
    assert isinstance(err(git.resolve("sleep/run")), NotFound)
    assert isinstance(err(git.delete_branch("sleep/run")), GitFailure)
    assert isinstance(err(git.delete_branch("bad name")), GitFailure)
    checked_out = err(git.delete_branch("main"))
    assert isinstance(checked_out, GitFailure)
    ok(git.delete_branch("refs/heads/by-full-name"))
    assert ok(git.resolve("main")) == root


def test_branches_lists_local_branches_by_prefix(backend: Backend) -> None:
    git = backend.git
    assert ok(git.branches("")) == ()
    root = backend.commit(None, [put("a.html", "a")])
    ok(git.create_branch("sleep/2026-03-02", root))
    ok(git.create_branch("sleep/2026-03-01-2", root))
    ok(git.create_branch("sleepy", root))
    assert ok(git.branches("sleep/")) == ("sleep/2026-03-01-2", "sleep/2026-03-02")
    assert ok(git.branches("")) == ("main", "sleep/2026-03-01-2", "sleep/2026-03-02", "sleepy")
    ok(git.delete_branch("sleep/2026-03-02"))
    assert ok(git.branches("sleep/")) == ("sleep/2026-03-01-2",)


def test_move_ref_is_a_compare_and_swap(backend: Backend) -> None:
    git = backend.git
    root = backend.commit(None, [put("a.html", "a")])
    ok(git.create_branch("sleep/run", root))
    ahead = ok(git.commit("sleep/run", root, [put("b.html", "b")], "ahead", AUTHOR, AT))
    ok(git.move_ref("main", root, ahead))
    assert ok(git.resolve("main")) == ahead
    moved = err(git.move_ref("main", root, root))
    assert isinstance(moved, RefMoved)
    assert (moved.expected, moved.actual) == (root, ahead)
    assert ok(git.resolve("main")) == ahead, "a lost swap moves nothing"
    ok(git.move_ref("refs/heads/fresh", None, root))
    assert ok(git.resolve("fresh")) == root
    assert isinstance(err(git.move_ref("fresh", None, ahead)), RefMoved)
    assert isinstance(err(git.move_ref("main", ahead, "4" * 40)), NotFound)
    assert ok(git.resolve("main")) == ahead


# -- history ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "trailers"),
    [
        (
            "memory: put x\n\nBody text.\n\nMemhtml-Op: put\nMemhtml-Path: a/x.html\n",
            (("Memhtml-Op", "put"), ("Memhtml-Path", "a/x.html")),
        ),
        ("Memhtml-Op: put\n", ()),
        ("subject\n\nJust prose: not a trailer block\nsecond line\n", ()),
        (
            "subject\n\nReason: a long reason\n  that wraps\nSigned-off-by: A <a@example.org>",
            (("Reason", "a long reason that wraps"), ("Signed-off-by", "A <a@example.org>")),
        ),
        ("subject\n\nKey: one\nKey: two\n", (("Key", "one"), ("Key", "two"))),
        ("subject\n\n\n\nAfter:  gaps  \n\n", (("After", "gaps"),)),
        ("subject\n\nbody\n\n  indented: no\n", ()),
        ("", ()),
    ],
)
def test_commit_info_parses_trailers_in_order(
    backend: Backend, message: str, trailers: tuple[tuple[str, str], ...]
) -> None:
    sha = backend.commit(None, [put("x.html", "x")], message)
    info = ok(backend.git.commit_info(sha))
    assert info.sha == sha
    assert info.message == message
    assert info.parents == ()
    assert info.trailers == trailers


def test_commits_between_is_oldest_first(backend: Backend) -> None:
    shas: list[str] = []
    parent: str | None = None
    for n in range(5):
        parent = backend.commit(parent, [put(f"{n}.html", str(n))], f"c{n}")
        shas.append(parent)
    git = backend.git
    assert ok(git.commits_between(None, shas[-1])) == tuple(shas)
    assert ok(git.commits_between(shas[1], "main")) == tuple(shas[2:])
    assert ok(git.commits_between(shas[-1], shas[-1])) == ()
    assert ok(git.commits_between(shas[-1], shas[1])) == ()
    assert isinstance(err(git.commits_between("5" * 40, "main")), NotFound)
    assert isinstance(err(git.commits_between(None, "5" * 40)), NotFound)


def test_commits_between_branches_that_diverged(backend: Backend) -> None:
    base = backend.commit(None, [put("base.html", "b")])
    left = backend.commit(base, [put("left.html", "l")])
    ok(backend.git.create_branch("side", base))
    right = backend.commit(base, [put("right.html", "r")], ref="side")
    assert ok(backend.git.commits_between(left, "side")) == (right,)
    assert ok(backend.git.commits_between("side", "main")) == (left,)


def test_arrivals_count_the_steps_back_to_the_commit_that_brought_each_path(
        backend: Backend) -> None:
    c1 = backend.commit(None, [put("a/old.html", "1"), put("b.html", "b")], "c1")
    c2 = backend.commit(c1, [put("a/mid.html", "2"), put("b.html", "b2")], "c2")
    c3 = backend.commit(c2, [drop("a/old.html")], "c3")
    c4 = backend.commit(c3, [put("a/old.html", "back"), put("c.html", "c")], "c4")
    c5 = backend.commit(c4, [put("d.html", "d")], "c5")
    git = backend.git
    wanted = ["a/old.html", "a/mid.html", "b.html", "c.html", "d.html", "gone.html", "a"]
    # An edit does not move a path's arrival; a deletion and re-adding does; a path the
    # tip lacks, or a directory, is absent; the root commit's paths are its depth.
    assert ok(git.arrivals("main", wanted)) == {
        "a/old.html": 1, "a/mid.html": 3, "b.html": 4, "c.html": 1, "d.html": 0}
    assert ok(git.arrivals(c2, wanted)) == {"a/old.html": 1, "a/mid.html": 0, "b.html": 1}
    assert ok(git.arrivals(c5, [])) == {}
    assert isinstance(err(git.arrivals("nope", ["b.html"])), NotFound)


def test_arrivals_place_many_paths_in_one_walk(backend: Backend) -> None:
    """Past a few dozen paths the walk diffs trees instead of asking each path."""
    first = [f"bulk/{n:03d}.html" for n in range(80)]
    c1 = backend.commit(None, [put(p, p) for p in first], "bulk import")
    c2 = backend.commit(c1, [put("late.html", "l"), put(first[0], "edited")], "late")
    c3 = backend.commit(c2, [put(f"more/{n}.html", str(n)) for n in range(40)], "more")
    assert c3
    got = ok(backend.git.arrivals("main", [*first, "late.html",
                                           *(f"more/{n}.html" for n in range(40))]))
    assert got == {**dict.fromkeys(first, 2), "late.html": 1,
                   **{f"more/{n}.html": 0 for n in range(40)}}


def test_arrivals_follow_the_first_parent(backend: Backend) -> None:
    base = backend.commit(None, [put("base.html", "b")])
    ok(backend.git.create_branch("side", base))
    side = backend.commit(base, [put("side.html", "s")], ref="side")
    main = backend.commit(base, [put("main.html", "m")])
    # The merge brings side.html onto main: its arrival is the merge, not the side
    # branch's commit, which main's first-parent history never held.
    merged = ok(backend.git.commit_merge("refs/heads/main", main, side,
                                         [put("side.html", "s")], "merge", AUTHOR, AT))
    assert ok(backend.git.arrivals(merged, ["side.html", "main.html", "base.html"])) == {
        "side.html": 0, "main.html": 1, "base.html": 2}


def test_commits_touching_is_newest_first_and_limited(backend: Backend) -> None:
    c1 = backend.commit(None, [put("a/x.html", "1"), put("b.html", "b")], "c1")
    c2 = backend.commit(c1, [put("b.html", "b2")], "c2")
    c3 = backend.commit(c2, [put("a/x.html", "3")], "c3")
    c4 = backend.commit(c3, [drop("a/x.html")], "c4")
    c5 = backend.commit(c4, [put("b.html", "b3")], "c5")
    c6 = backend.chmod(c5, "b.html", FILE_MODE_EXECUTABLE)

    def touching(path: str, limit: int = 10) -> list[str]:
        return [info.sha for info in ok(backend.git.commits_touching("main", path, limit))]

    assert touching("a/x.html") == [c4, c3, c1]
    assert touching("a/x.html", 2) == [c4, c3]
    assert touching("a") == [c4, c3, c1]
    assert touching("b.html") == [c6, c5, c2, c1]
    assert touching("never.html") == []
    assert touching("a/x.html", 0) == []
    assert touching("a/x.html", -1) == []
    infos = ok(backend.git.commits_touching(c3, "b.html", 5))
    assert [info.message for info in infos] == ["c2", "c1"]
    assert infos[0].trailers == ()
    assert isinstance(err(backend.git.commits_touching("main", "../x", 5)), GitFailure)
    assert isinstance(err(backend.git.commits_touching("nope", "b.html", 5)), NotFound)
    assert isinstance(err(backend.git.commits_touching("nope", "b.html", 0)), NotFound)


def test_commits_mentioning_searches_messages_newest_first(backend: Backend) -> None:
    c1 = backend.commit(None, [put("a.html", "1")], "write a\n\nMemhtml-Op: write")
    c2 = backend.commit(c1, [put("b.html", "2")], "archive b\n\nMemhtml-Op: archive")
    c3 = backend.commit(c2, [put("c.html", "3")], "naïve c\n\nMemhtml-Op: write")
    c4 = ok(backend.git.commit_merge("main", c3, c1, [put("d.html", "4")],
                                     "merge\n\nMemhtml-Op: sync", AUTHOR, AT))

    def mentioning(text: str, limit: int = 10, ref: str = "main") -> list[str]:
        return [info.sha for info in ok(backend.git.commits_mentioning(ref, text, limit))]

    assert mentioning("Memhtml-Op: write") == [c3, c1]
    assert mentioning("Memhtml-Op: write", 1) == [c3]
    assert mentioning("Memhtml-Op:") == [c4, c3, c2, c1]
    assert mentioning("naïve") == [c3]
    assert mentioning("Memhtml-Op: write", ref=c2) == [c1]
    assert mentioning("nowhere") == [] and mentioning("Memhtml-Op:", 0) == []
    info = ok(backend.git.commits_mentioning("main", "archive b", 1))[0]
    assert (info.trailers, info.parents) == ((("Memhtml-Op", "archive"),), (c1,))
    assert info.author == info.committer == AUTHOR, "no committer given: the author signs"
    assert isinstance(err(backend.git.commits_mentioning("nope", "x", 5)), NotFound)
