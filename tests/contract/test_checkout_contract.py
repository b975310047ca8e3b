"""The ``Checkout`` contract, run on ``PygitService`` and on ``InMemoryGit`` alike: the
index, the working tree as git sees it, and the repository's own config.

A test here speaks only the Protocol (and, through ``Backend``, the few things done to a
repository from outside it). Where the two could differ only by lying, shas are pinned:
the double computes git's own object ids, so a golden sha holds on both.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from memhtml.contracts.errors import GitFailure
from memhtml.contracts.services import (
    FILE_MODE_BLOB,
    FILE_MODE_EXECUTABLE,
    FileStat,
    IndexUpdate,
)
from tests.contract.git_backends import (
    Backend,
    drop,
    err,
    make_backend,
    ok,
    put,
)


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()



def test_a_bare_repository_has_no_worktree_changes(backend: Backend) -> None:
    backend.commit(None, [put("a.html", "a")])
    assert ok(backend.git.worktree_changes()) == ()
    assert ok(backend.git.worktree_changes_begun()()) == ()



# -- config and the index ---------------------------------------------------------------


def test_set_config_stores_under_git_s_key(backend: Backend) -> None:
    ok(backend.git.set_config("merge.memhtml.driver", "memhtml merge %O %A %B"))
    ok(backend.git.set_config("Core.Sub Section.Name", "v"))
    assert backend.config("merge.memhtml.driver") == "memhtml merge %O %A %B"
    assert backend.config("core.Sub Section.name") == "v"
    ok(backend.git.set_config("merge.memhtml.driver", "again"))
    assert backend.config("merge.memhtml.driver") == "again"
    for key in ("nodot", ".x", "x.", "a_b.c", "a.b_c", "a.b c"):
        assert isinstance(err(backend.git.set_config(key, "v")), GitFailure), key


def test_local_config_value_reads_back_what_set_config_wrote(backend: Backend) -> None:
    git = backend.git
    assert ok(git.local_config_value("memhtml.branch")) is None
    ok(git.set_config("memhtml.branch", "memory/notes"))
    ok(git.set_config("Core.Sub Section.Name", "v"))
    assert ok(git.local_config_value("memhtml.branch")) == "memory/notes"
    assert ok(git.local_config_value("MemHTML.Branch")) == "memory/notes"
    assert ok(git.local_config_value("core.Sub Section.name")) == "v"
    assert ok(git.local_config_value("core.sub section.name")) is None
    assert ok(git.config_value("memhtml.branch")) == "memory/notes"
    ok(git.set_config("memhtml.branch", "main"))
    assert ok(git.local_config_value("memhtml.branch")) == "main"


def test_drop_config_removes_only_the_value_it_names(backend: Backend) -> None:
    git = backend.git
    assert ok(git.drop_config("merge.ours.driver", "true")) is False
    ok(git.set_config("merge.ours.driver", "true"))
    assert ok(git.drop_config("merge.ours.driver", "true")) is True
    assert backend.config("merge.ours.driver") is None
    ok(git.set_config("merge.ours.driver", "my-merge %O %A %B"))
    assert ok(git.drop_config("merge.ours.driver", "true")) is False
    assert backend.config("merge.ours.driver") == "my-merge %O %A %B"


ROOT_ATTRIBUTES = (
    "# a comment line\n"
    "*.html merge=ours\n"
    "[attr]evil merge=x\n"
    "areas/x.html evil\n"
    "areas/b/*.html -merge\n"
    "areas/c/** merge=text\n"
    "areas/e.html !merge\n"
    "/top.html merge=union\n"
    "index.html merge=memhtml-generated\n"
    "k[0-9].html merge=digit\n"
    "q?.html merge=single\n"
    "areas/**/deep.html merge=deep\n"
    "notes/*.html merge=star\n"
    "folder/ merge=directory-only\n"
)
EXPECTED_MERGE = {
    "a.html": "ours", "areas/x.html": "x", "areas/b/y.html": "binary",
    "areas/b/z/y.html": "ours", "areas/d/q.html": "binary", "top.html": "union",
    "areas/top.html": "ours", "index.html": "memhtml-generated",
    "areas/inbox/index.html": "memhtml-generated", "k1.html": "digit", "kx.html": "ours",
    "qa.html": "single", "areas/deep.html": "deep", "areas/a/b/deep.html": "deep",
    "notes/a.html": "star", "notes/x/a.html": "ours", "folder/a.html": "ours",
    "areas/f/g.html": "ours", "areas/f/h.html": "nested",
}
"""What ``git check-attr merge`` says of each path of ``ROOT_ATTRIBUTES`` and the two
nested files below (checked against git 2.39); the paths with git's text merge
(``areas/c/x/y.html`` text, ``areas/e.html`` unspecified, ``areas/f/s.html`` set,
``a.txt`` nothing) are left out."""


def test_merge_attributes_read_every_gitattributes_as_git_does(backend: Backend) -> None:
    sha = backend.commit(None, [
        put(".gitattributes", ROOT_ATTRIBUTES),
        put("areas/d/.gitattributes", "*.html binary\n"),
        put("areas/f/.gitattributes", "s.html merge\nh.html merge=nested\n"),
    ])
    paths = sorted([*EXPECTED_MERGE, "areas/c/x/y.html", "areas/e.html", "areas/f/s.html",
                    "a.txt"])
    assert ok(backend.git.merge_attributes(sha, paths)) == EXPECTED_MERGE
    # Only the paths asked about, and the commit's own files: a later commit without
    # them gives nothing.
    assert ok(backend.git.merge_attributes(sha, ["a.html"])) == {"a.html": "ours"}
    later = backend.commit(sha, [drop(".gitattributes"), drop("areas/d/.gitattributes"),
                                 drop("areas/f/.gitattributes")])
    assert ok(backend.git.merge_attributes(later, paths)) == {}


def test_a_bare_repository_has_no_index_to_update(backend: Backend) -> None:
    sha = backend.commit(None, [put("a.html", "a")])
    blob = ok(backend.git.list_tree(sha))[0].blob_id
    assert ok(backend.git.update_index([IndexUpdate("a.html", None, blob)])) == ()
    assert ok(backend.git.update_index([IndexUpdate("../x", None, blob)])) == ()


def test_update_index_is_compare_and_set(checkout: Backend) -> None:
    git = checkout.git
    sha = checkout.commit(None, [put("a.html", "a"), put("b.html", "b")])
    blobs = {e.path: e.blob_id for e in ok(git.list_tree(sha))}
    a, b = blobs["a.html"], blobs["b.html"]
    assert ok(git.update_index([])) == ()

    done = ok(git.update_index([IndexUpdate("b.html", None, b), IndexUpdate("a.html", None, a),
                                IndexUpdate("x/run", None, a, FILE_MODE_EXECUTABLE)]))
    assert done == ("a.html", "b.html", "x/run")
    assert [(e.path, e.blob_id, e.mode) for e in checkout.index()] == [
        ("a.html", a, FILE_MODE_BLOB), ("b.html", b, FILE_MODE_BLOB),
        ("x/run", a, FILE_MODE_EXECUTABLE)]

    # Only entries still holding what the caller expects move: "b" was staged over.
    done = ok(git.update_index([IndexUpdate("a.html", a, b), IndexUpdate("b.html", a, None),
                                IndexUpdate("gone", None, None), IndexUpdate("a.html", b, a),
                                IndexUpdate("x/run", a.upper(), None)]))
    assert done == ("a.html", "a.html", "gone")
    assert [(e.path, e.blob_id) for e in checkout.index()] == [
        ("a.html", a), ("b.html", b), ("x/run", a)]
    ok(git.update_index([IndexUpdate("b.html", b, None), IndexUpdate("x/run", a, b)]))
    assert [(e.path, e.blob_id) for e in checkout.index()] == [("a.html", a), ("x/run", b)]


def test_an_update_following_a_tip_the_branch_has_left_sets_nothing(checkout: Backend
                                                                     ) -> None:
    """The write's follow decides against its commit; a person's ``git commit`` moving
    the branch before the follow holds git's lock read an index without the write.
    Setting the entries then would make that index look like the write's own."""
    git = checkout.git
    first = checkout.commit(None, [put("a.html", "a")])
    a = ok(git.list_tree(first))[0].blob_id
    assert ok(git.update_index([IndexUpdate("a.html", None, a)], first)) == ("a.html",)
    second = checkout.commit(first, [put("b.html", "b")])
    b = next(e.blob_id for e in ok(git.list_tree(second)) if e.path == "b.html")
    assert ok(git.update_index([IndexUpdate("b.html", None, b)], first)) == ()
    assert [e.path for e in checkout.index()] == ["a.html"]
    assert ok(git.update_index([IndexUpdate("b.html", None, b)], second)) == ("b.html",)
    # Without a tip, as before: compare-and-set on the entries alone.
    assert ok(git.update_index([IndexUpdate("a.html", a, None)])) == ("a.html",)


@pytest.mark.parametrize(
    "update",
    [
        IndexUpdate("../x", None, None),
        IndexUpdate("new.html", None, "f" * 40),
        IndexUpdate("new.html", None, "zz" * 20),
        IndexUpdate("new.html", None, "BLOB", 0o40000),
        IndexUpdate("new.html", None, "BLOB", 0o644),
        IndexUpdate("new.html", None, "COMMIT"),
        IndexUpdate("a/.git ", None, "BLOB"),
    ],
)
def test_a_refused_index_update_changes_nothing(checkout: Backend, update: IndexUpdate) -> None:
    sha = checkout.commit(None, [put("a.html", "a")])
    blob = ok(checkout.git.list_tree(sha))[0].blob_id
    named = {"BLOB": blob, "COMMIT": sha}
    update = IndexUpdate(update.path, update.expected,
                         named.get(update.blob_id or "", update.blob_id), update.mode)
    first = IndexUpdate("first.html", None, blob)
    failure = err(checkout.git.update_index([first, update]))
    assert isinstance(failure, GitFailure)
    assert failure.operation == "update_index"
    assert checkout.index() == ()


def test_a_submodule_entry_needs_no_object(checkout: Backend) -> None:
    assert ok(checkout.git.update_index([IndexUpdate("sub", None, "1" * 40, 0o160000)])) == (
        "sub",)
    assert [(e.path, e.mode) for e in checkout.index()] == [("sub", 0o160000)]


def _checked_out_as_they_are(repo: Backend) -> None:
    data = {"a.html": "a\r\nb\n", "b.html": "\x00\rc"}
    sha = repo.commit(None, [put(p, t) for p, t in data.items()])
    blobs = {e.path: e.blob_id for e in ok(repo.git.list_tree(sha))}
    asked = {**blobs, "gone.html": "f" * 40}
    assert dict(ok(repo.git.checkout_bytes(asked))) == {p: t.encode() for p, t in data.items()}
    assert ok(repo.git.checkout_bytes({})) == {}
    failure = err(repo.git.checkout_bytes({"a.html": "abc"}))
    assert isinstance(failure, GitFailure) and failure.operation == "checkout_bytes"


def test_checkout_bytes_are_the_blobs_where_nothing_filters(checkout: Backend) -> None:
    """With no ``core.autocrlf`` and no attributes, git checks a blob out as it is, CRLF,
    lone CR and NUL included; an id git lacks is left out, a malformed one refused."""
    _checked_out_as_they_are(checkout)


def test_a_bare_repository_checks_blobs_out_as_they_are(backend: Backend) -> None:
    _checked_out_as_they_are(backend)


def test_a_repository_without_a_working_tree_reads_no_file(backend: Backend) -> None:
    backend.commit(None, [put("a.html", "a")])
    assert ok(backend.git.worktree_blobs(["a.html"])) == {}
    assert ok(backend.git.worktree_blobs([])) == {}


def test_an_index_update_ignores_stat_data_of_a_file_that_is_not_there(
        checkout: Backend) -> None:
    """Stat data recorded for a file that has since gone (or a double with no working
    tree) leaves the entry without it; the update itself lands."""
    sha = checkout.commit(None, [put("a.html", "a")])
    blob = ok(checkout.git.list_tree(sha))[0].blob_id
    stat = FileStat(1, 2, 3, 4, 5, 6, 0o100644, 7, 8, 1)
    assert ok(checkout.git.update_index([IndexUpdate("a.html", None, blob, stat=stat)])) == (
        "a.html",)
    assert [(e.path, e.blob_id) for e in checkout.index()] == [("a.html", blob)]


# -- the working tree's files ---------------------------------------------------------------


def test_a_written_file_is_there_as_git_sees_it(checkout: Backend) -> None:
    git = checkout.git
    stat = git.put_file("areas/kettle.html", b"descale on Mondays\n")
    assert isinstance(stat, FileStat) and stat.size == len(b"descale on Mondays\n")
    assert git.file_kind("areas/kettle.html") is True
    assert git.file_stat("areas/kettle.html") is not None
    assert git.file_kind("areas") is False, "a folder is something else"
    assert git.file_kind("areas/missing.html") is None
    assert git.file_kind("areas/kettle.html/under") is None
    blob = blob_id(b"descale on Mondays\n")
    assert ok(git.worktree_blobs(["areas/kettle.html"])) == {"areas/kettle.html": blob}
    # Untracked until committed: git names a folder holding nothing tracked once.
    assert ok(git.worktree_changes()) == ("areas/",)
    assert git.files_under("areas/") == ("areas/kettle.html",)


def test_an_executable_file_is_written_executable(checkout: Backend) -> None:
    git = checkout.git
    put = git.put_file("tools/run.html", b"x", executable=True)
    assert isinstance(put, FileStat) and put.mode & 0o111
    plain = git.put_file("tools/run.html", b"y")
    assert isinstance(plain, FileStat) and not plain.mode & 0o111


def test_removing_a_file_removes_the_folders_it_leaves_empty(checkout: Backend) -> None:
    git = checkout.git
    git.put_file("a/b/c.html", b"c")
    git.put_file("a/keep.html", b"k")
    assert git.put_file("a/b/c.html", None) is True
    assert git.file_kind("a/b/c.html") is None and git.file_kind("a/b") is None
    assert git.file_kind("a/keep.html") is True and git.file_kind("a") is False
    assert git.put_file("a/b/c.html", None) is False, "nothing there to remove"


def test_a_file_is_not_written_over_a_folder(checkout: Backend) -> None:
    git = checkout.git
    git.put_file("notes/inner.html", b"inner")
    assert git.put_file("notes", b"a file where a folder is") is False
    assert git.file_kind("notes") is False and git.file_kind("notes/inner.html") is True
    assert [p for p in git.files_under("") if p.endswith(".tmp")] == [], \
        "a write that failed leaves no temporary behind"


def test_files_under_lists_a_folder_s_files_sorted(checkout: Backend) -> None:
    git = checkout.git
    for path in ("new/z.html", "new/a/b.html", "new/a.html", "other/x.html"):
        checkout.person_writes(path, b"x")
    assert git.files_under("new/") == ("new/a.html", "new/a/b.html", "new/z.html")
    assert git.files_under("missing/") == ()


def test_a_persons_edits_are_worktree_changes(checkout: Backend) -> None:
    git = checkout.git
    tip = checkout.commit(None, [put("kept.html", "kept"), put("edited.html", "before"),
                                 put("gone.html", "gone")])
    entries = ok(git.list_tree(tip))
    ok(git.update_index([IndexUpdate(e.path, None, e.blob_id) for e in entries]))
    for entry in entries:
        git.put_file(entry.path, ok(git.read_blobs([entry.blob_id]))[entry.blob_id])
    assert ok(git.worktree_changes()) == ()
    checkout.person_writes("edited.html", b"after")
    checkout.person_writes("gone.html", None)
    checkout.person_writes("new.html", b"new")
    assert ok(git.worktree_changes()) == ("edited.html", "gone.html", "new.html")
    assert ok(git.worktree_blobs(["edited.html", "gone.html"])) == {
        "edited.html": blob_id(b"after")}


def test_the_index_lock_and_an_operation_in_progress_are_seen(checkout: Backend) -> None:
    git = checkout.git
    assert not git.index_locked() and git.operation_in_progress() is None
    checkout.person_locks(True)
    assert git.index_locked()
    checkout.person_locks(False)
    assert not git.index_locked()
    checkout.person_leaves("MERGE_HEAD")
    merge = git.operation_in_progress()
    assert merge is not None and merge[0] == "merge"
    checkout.person_leaves("rebase-merge")
    rebase = git.operation_in_progress()
    assert rebase is not None and rebase[0] == "rebase", "checked in git's order"


def test_a_bare_repository_has_no_files(backend: Backend) -> None:
    git = backend.git
    backend.commit(None, [put("a.html", "a")])
    assert git.put_file("b.html", b"b") is False
    assert git.file_kind("a.html") is None and git.file_stat("a.html") is None
    assert git.files_under("") == () and not git.index_locked()


def test_a_dangling_link_at_the_index_lock_is_a_held_lock(tmp_path: Path) -> None:
    """Git creates its lock exclusively, so anything at the name holds it, a link to
    nothing included; a write waits for it rather than racing git."""
    checkout = make_backend("pygit", tmp_path / "checkout", bare=False)
    lock = Path(checkout.git.path) / "index.lock"  # type: ignore[attr-defined]
    lock.symlink_to(tmp_path / "nowhere")
    assert checkout.git.index_locked()
