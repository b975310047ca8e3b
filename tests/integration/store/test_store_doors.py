"""The write doors against real repositories: one commit each, or nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode
from returns.io import IOFailure, IOResult

from memhtml.adapters.clock import FixedClock
from memhtml.adapters.git import PygitService
from memhtml.contracts.errors import GitError, GitFailure, InvalidMemory, NotFound, PathRefused
from memhtml.contracts.record import Link
from memhtml.contracts.services import FILE_MODE_LINK, PathChange, Signature
from memhtml.format import NewMemoryInput, render_template, set_meta
from memhtml.store import (
    BArchive,
    BLabel,
    BLink,
    BMove,
    BWrite,
    Refused,
    Store,
    StoreDeps,
    WriteInput,
    archive,
    batch,
    correct,
    describe,
    init_store,
    label,
    link,
    move,
    read,
    slug_of,
    task_add,
    task_list,
    task_status,
    unlabel,
    unlink,
    write,
)
from memhtml.store.errors import DanglingLinks, DuplicateClaim, UncommittedEdits
from memhtml.store.merge_driver import DRIVER_COMMAND, DRIVER_KEY
from tests.integration.store.store_support import (
    AUTHOR,
    CLOCK,
    NOW,
    err,
    git_cli,
    make_store,
    ok,
    tip,
)

LATER = FixedClock(datetime(2026, 6, 2, 8, 30, 0, tzinfo=UTC))
LATER_STAMP = "2026-06-02T08:30:00Z"

GOLDEN_WRITE_SHA = "ce820006987dbf36c5d9f2820a621671ed2ff5f9"
"""The commit of ``test_golden_commit_id``: pins the template, the message and the tree."""


def later(store: Store) -> Store:
    return Store(dataclasses.replace(store.deps, clock=LATER))


def memory_at(store: Store, path: str) -> str:
    return ok(read(store, path, "all"))


def note(title: str, claim: str, **kw: object) -> WriteInput:
    return WriteInput(title=title, claim=claim, **kw)  # type: ignore[arg-type]


# -- init ----------------------------------------------------------------------------------


def test_init_lays_out_the_store_and_sets_the_merge_driver(tmp_path: Path) -> None:
    store, _git = make_store(tmp_path)
    files = git_cli(tmp_path, "ls-files").split()
    assert files == [".gitattributes", ".gitignore", ".memhtml/store.toml", "archive/.gitkeep",
                     "areas/inbox/.gitkeep", "resources/people/.gitkeep"]
    attributes = (tmp_path / ".gitattributes").read_text()
    assert "index.html merge=memhtml-generated" in attributes.splitlines()
    assert "/sitemap.xml merge=memhtml-generated" in attributes.splitlines()
    assert "merge=ours" not in attributes
    ignore = (tmp_path / ".gitignore").read_text().splitlines()
    assert {".memhtml/*", "!.memhtml/config.toml", "!.memhtml/sleep/"} <= set(ignore)
    assert git_cli(tmp_path, "config", "--get", DRIVER_KEY).strip() == DRIVER_COMMAND
    # What travels is seen by git; anything else there stays local.
    (tmp_path / ".memhtml" / "sleep").mkdir(parents=True)
    (tmp_path / ".memhtml" / "sleep" / "run.html").write_text("report")
    (tmp_path / ".memhtml" / "config.toml").write_text('branch = "main"\n')
    (tmp_path / ".memhtml" / "snapshots").mkdir()
    (tmp_path / ".memhtml" / "snapshots" / "x").write_text("cache")
    assert sorted(git_cli(tmp_path, "status", "--porcelain", "-uall").splitlines()) == [
        "?? .memhtml/config.toml", "?? .memhtml/sleep/run.html"]
    for made in (".memhtml/sleep/run.html", ".memhtml/config.toml", ".memhtml/snapshots/x"):
        (tmp_path / made).unlink()
    assert git_cli(tmp_path, "status", "--porcelain") == ""
    again = ok(init_store(store.deps))
    assert again.paths == ()
    assert again.commit == tip(store)


def test_init_rewrites_an_earlier_releases_ignore_line(tmp_path: Path) -> None:
    git = ok(PygitService.init(tmp_path, bare=True))
    old = [PathChange(".gitignore", b"node_modules/\n.memhtml/\n")]
    ok(git.commit("refs/heads/main", None, old,
                  "old store", AUTHOR, CLOCK.now()))
    deps = StoreDeps(git=git, clock=CLOCK, author=AUTHOR)
    landed = ok(init_store(deps))
    assert ".gitignore" in landed.paths
    tip_sha = ok(git.resolve("main"))
    entry = next(e for e in ok(git.list_tree(tip_sha)) if e.path == ".gitignore")
    text = ok(git.read_blobs([entry.blob_id]))[entry.blob_id].decode()
    lines = text.splitlines()
    assert "node_modules/" in lines and ".memhtml/" not in lines and ".memhtml/*" in lines


def test_init_on_a_repository_with_history_adds_only_what_is_missing(tmp_path: Path) -> None:
    git = ok(PygitService.init(tmp_path, bare=True))
    first = ok(git.commit("refs/heads/main", None,
                          [PathChange(".gitignore", b"node_modules/\n"),
                           PathChange("areas/inbox/old.txt", b"hello\n")],
                          "existing", AUTHOR, CLOCK.now()))
    landed = ok(init_store(StoreDeps(git, CLOCK, AUTHOR)))
    assert landed.paths == (".gitattributes", ".gitignore", ".memhtml/store.toml",
                            "archive/.gitkeep", "resources/people/.gitkeep")
    info = ok(git.commit_info(landed.commit))
    assert info.parents == (first,)
    data = ok(git.read_blobs([ok(git.entries_at(landed.commit, [".gitignore"]))[0].blob_id]))
    assert next(iter(data.values())) == (
        b"node_modules/\n.memhtml/*\n!.memhtml/config.toml\n!.memhtml/store.toml\n"
        b"!.memhtml/sleep/\n!.memhtml/state/\n")


# -- write ---------------------------------------------------------------------------------


def test_write_is_one_commit_with_subject_body_and_trailers(tmp_path: Path) -> None:
    store, git = make_store(tmp_path)
    parent = tip(store)
    landed = ok(write(store, note("Deploy canary first", "Deploys go to the canary first.",
                                  body=("It caught a bad config in March.",),
                                  entities=("service:deploy",), tags=("ops",))))
    assert landed.primary == "areas/inbox/deploy-canary-first.html"
    assert landed.paths == ("areas/inbox/deploy-canary-first.html",)
    info = ok(git.commit_info(landed.commit))
    assert info.parents == (parent,)
    assert info.message.splitlines()[0] == "memhtml write: areas/inbox/deploy-canary-first.html"
    assert info.trailers == (("Memhtml-Op", "write"),
                             ("Memhtml-Path", "areas/inbox/deploy-canary-first.html"))
    assert info.time == CLOCK.now()
    html = memory_at(store, landed.primary)
    assert "<mark>Deploys go to the canary first.</mark> It caught a bad config" in html
    assert '<meta name="memhtml-entity" content="service:deploy">' in html
    assert (tmp_path / landed.primary).read_text() == html


def test_write_paths_are_unique_ascii_slugs(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    first = ok(write(store, note("Café Déjà Vu!", "One.")))
    second = ok(write(store, note("Cafe deja vu", "Two.")))
    third = ok(write(store, note("Café déjà vu", "Three.")))
    assert (first.primary, second.primary, third.primary) == (
        "areas/inbox/cafe-deja-vu.html", "areas/inbox/cafe-deja-vu-2.html",
        "areas/inbox/cafe-deja-vu-3.html")
    long = slug_of("word " * 40)
    assert len(long) <= 60
    assert not long.endswith("-")
    assert slug_of("Index") == "index-memory"
    assert slug_of("日本語") == "memory"
    task = ok(task_add(store, "Ship it", "Ship the release."))
    assert task.primary == "areas/tasks/ship-it.html"
    placed = ok(write(store, note("Ada", "Ada writes the runbooks.", directory="resources/people")))
    assert placed.primary == "resources/people/ada.html"


def test_write_takes_a_whole_file_verbatim(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    html = render_template(NewMemoryInput(title="Given whole", claim="Files can be given whole.",
                                          memory_type="procedural", at="2025-01-02T03:04:05Z"))
    landed = ok(write(store, WriteInput(file_html=html)))
    assert landed.primary == "areas/inbox/given-whole.html"
    assert memory_at(store, landed.primary) == html
    copy = err(write(store, WriteInput(file_html=html, path="resources/ops/given.html")))
    assert copy == DuplicateClaim("Files can be given whole.", "areas/inbox/given-whole.html")
    placed = ok(write(store, WriteInput(file_html=html, path="resources/ops/given.html"),
                      allow_duplicate=True))
    assert placed.primary == "resources/ops/given.html"
    taken = err(write(store, WriteInput(file_html=html, path="resources/ops/given.html"),
                      allow_duplicate=True))
    assert isinstance(taken, Refused)
    assert "already holds a memory" in taken.reason


def test_a_block_tag_in_prose_is_text_and_a_fence_holds_code(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    landed = ok(write(store, note("Tags", "Claims are <table> prose.",
                                  body=("fine", "a <ul> typed into prose", "<p>again</p>"))))
    html = memory_at(store, landed.primary or "")
    assert "<mark>Claims are &lt;table&gt; prose.</mark>" in html
    assert "<p>a &lt;ul&gt; typed into prose</p>" in html
    assert ok(read(store, landed.primary or "", "details")) == (
        "Claims are <table> prose. fine\n\na <ul> typed into prose\n\n<p>again</p>")
    fenced = ok(write(store, note("Fence", "Markup inside a fence is code.",
                                  body=("```html\n<div>hello</div>\n```",))))
    assert '<code data-lang="html">&lt;div&gt;hello&lt;/div&gt;' in memory_at(store,
                                                                           fenced.primary or "")


def test_invalid_memory_is_refused_with_every_violation_and_nothing_committed(
    tmp_path: Path,
) -> None:
    store, git = make_store(tmp_path)
    before = tip(store)
    bad = (render_template(NewMemoryInput(title="Bad", claim="A claim.", memory_type="semantic",
                                          at=NOW))
           .replace('content="semantic"', 'content="gossip"')
           .replace("<mark>A claim.</mark>", "no mark here <script>alert(1)</script>"))
    error = err(write(store, WriteInput(file_html=bad, path="areas/inbox/bad.html")))
    assert isinstance(error, InvalidMemory)
    assert len(error.violations) >= 3
    assert any("gossip" in v for v in error.violations)
    assert any("script" in v for v in error.violations)
    assert any("mark" in v for v in error.violations)
    assert all(v in describe(error) for v in error.violations)
    assert tip(store) == before
    templated = err(write(store, note("Due", "Due soon.", due_at="tomorrow",
                                      valid_from="last week")))
    assert isinstance(templated, InvalidMemory)
    assert len(templated.violations) == 2
    assert tip(store) == before
    assert ok(git.commit_info(before or "")).message.startswith("memhtml init")


@pytest.mark.parametrize(
    "path",
    ["../escape.html", "/etc/passwd.html", "areas\\inbox\\x.html", ".git/hooks/x.html",
     "areas/../../x.html", "areas/./x.html", "areas//x.html", "areas/.GIT/x.html"],
)
def test_paths_outside_the_store_are_refused(tmp_path: Path, path: str) -> None:
    store, _ = make_store(tmp_path, worktree=False, state=False)
    seed = ok(write(store, note("Seed", "A memory to act on.")))
    before = tip(store)
    for attempt in (
        write(store, note("Out", "Out.", path=path)),
        write(store, note("Out", "Out.", directory=path.removesuffix(".html"))),
        archive(store, path),
        move(store, seed.primary or "", path),
        read(store, path),
    ):
        error = err(attempt)
        assert isinstance(error, PathRefused), error
        assert describe(error).startswith("path ")
    # An href is root-relative by the format's rule: a leading slash means the store's
    # root there, so only the other spellings are refused as paths.
    linked = err(link(store, seed.primary or "", "supports", path))
    assert isinstance(linked, DanglingLinks if path.startswith("/") else PathRefused)
    assert tip(store) == before


def test_a_memory_path_must_be_an_indexed_html_file(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path, worktree=False, state=False)
    for path in ("areas/inbox/x.txt", "areas/inbox/index.html", ".memhtml/x.html"):
        error = err(write(store, note("X", "X.", path=path)))
        assert isinstance(error, PathRefused)
    error = err(write(store, note("X", "X.", path="archive/2026/x.html")))
    assert isinstance(error, Refused)


def _commit_symlink(root: Path, path: str, target: bytes) -> None:
    repo = pygit2.Repository(str(root))
    parent = repo.head.peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(parent.tree)
    index.add(pygit2.IndexEntry(path, repo.create_blob(target), FileMode(FILE_MODE_LINK)))
    tree = index.write_tree(repo)
    sig = pygit2.Signature("t", "t@example.org", 0, 0)
    repo.create_commit("refs/heads/main", sig, sig, "symlink", tree, [parent.id])


def test_a_symlink_entry_is_not_a_memory_and_is_never_written(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path, worktree=False)
    _commit_symlink(tmp_path, "areas/inbox/evil.html", b"/etc/passwd")
    _commit_symlink(tmp_path, "areas/link", b"/tmp")
    version = ok(store.head())
    assert version.get("areas/inbox/evil.html") is None
    assert [s.path for s in version.skipped_files] == ["areas/inbox/evil.html"]
    before = tip(store)
    refused = err(write(store, note("Evil", "Overwrite it.", path="areas/inbox/evil.html")))
    assert isinstance(refused, Refused)
    assert "symbolic link" in describe(refused)
    through = err(write(store, note("Through", "Through it.", path="areas/link/x.html")))
    assert isinstance(through, Refused)
    assert "areas/link is a symbolic link" in describe(through)
    for attempt in (archive(store, "areas/inbox/evil.html"),
                    label(store, "areas/inbox/evil.html", "topic:x"),
                    read(store, "areas/inbox/evil.html")):
        # every door answers the path the same way: no memory there, and why
        error = err(attempt)
        assert isinstance(error, NotFound)
        assert describe(error).startswith("no memory at areas/inbox/evil.html (the file is "
                                          "not a memory: a symbolic link")
    assert tip(store) == before
    beside = ok(write(store, note("Evil", "A memory named like the link.")))
    assert beside.primary == "areas/inbox/evil-2.html"


class _FailingCommits(PygitService):
    def commit(self, ref: str, expected_parent: str | None, changes: Sequence[PathChange],
               message: str, author: Signature, at: datetime) -> IOResult[str, GitError]:
        return IOFailure(GitFailure("commit", "no space left on device"))


def test_a_failed_write_reports_failure(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path, worktree=False)
    failing = Store(dataclasses.replace(
        store.deps, git=_FailingCommits(pygit2.Repository(str(tmp_path)))))
    error = err(write(failing, note("Lost", "This write cannot land.")))
    assert error == GitFailure("commit", "no space left on device")
    assert describe(error) == "git commit failed: no space left on device"


class _RacedOnce(PygitService):
    """Lets another writer land just before this one's first commit."""

    def __init__(self, repo: pygit2.Repository, rival: Store) -> None:
        super().__init__(repo)
        self.rival: Store | None = rival
        self.calls = 0

    def commit(self, ref: str, expected_parent: str | None, changes: Sequence[PathChange],
               message: str, author: Signature, at: datetime) -> IOResult[str, GitError]:
        self.calls += 1
        if self.rival is not None:
            rival, self.rival = self.rival, None
            ok(write(rival, note("Same title", "The rival's memory.")))
        return super().commit(ref, expected_parent, changes, message, author, at)


def test_a_moved_ref_is_retried_on_the_new_tip_and_loses_nothing(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path, worktree=False)
    raced = _RacedOnce(pygit2.Repository(str(tmp_path)), Store(store.deps))
    mine = Store(dataclasses.replace(store.deps, git=raced))
    landed = ok(write(mine, note("Same title", "My memory.")))
    assert raced.calls == 2
    assert landed.primary == "areas/inbox/same-title-2.html"
    version = ok(mine.head())
    assert version.get("areas/inbox/same-title.html").claim == "The rival's memory."  # type: ignore[union-attr]
    assert version.get("areas/inbox/same-title-2.html").claim == "My memory."  # type: ignore[union-attr]


def test_golden_commit_id(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path, bare=True)
    landed = ok(write(store, note("Golden", "Commit ids are pinned by the fixed clock.",
                                  body=("Nothing else varies.",), tags=("golden",))))
    assert landed.commit == GOLDEN_WRITE_SHA


# -- correct, archive, edges, labels, move -------------------------------------------------


def test_correct_supersedes_and_archives_in_one_commit(tmp_path: Path) -> None:
    store, git = make_store(tmp_path)
    old = ok(write(store, note("Deploy window", "Deploys run on Tuesdays.")))
    fan = ok(write(store, note("Fan", "Links to the deploy window.",
                               links=(Link("relates_to", "/areas/inbox/deploy-window.html"),))))
    fixed = ok(correct(later(store), old.primary or "",
                       note("Deploy window", "Deploys run on Wednesdays.")))
    archived_at = "archive/2026/areas/inbox/deploy-window.html"
    assert fixed.primary == "areas/inbox/deploy-window-2.html"
    assert fixed.paths == (archived_at, "areas/inbox/deploy-window-2.html",
                           "areas/inbox/deploy-window.html", "areas/inbox/fan.html")
    assert ok(git.commit_info(fixed.commit)).parents == (fan.commit,)
    version = ok(store.head())
    new = version.get("areas/inbox/deploy-window-2.html")
    gone = version.get(archived_at)
    assert new is not None
    assert gone is not None
    assert Link("supersedes", "/" + archived_at) in new.links
    assert gone.status == "archived"
    assert gone.archived_at == LATER_STAMP
    assert gone.superseded_by == "/areas/inbox/deploy-window-2.html"
    assert version.get("areas/inbox/deploy-window.html") is None
    # A link to the corrected memory follows to the correction, the memory it meant.
    assert version.get("areas/inbox/fan.html").links == (  # type: ignore[union-attr]
        Link("relates_to", "/areas/inbox/deploy-window-2.html"),)
    assert not (tmp_path / "areas/inbox/deploy-window.html").exists()
    assert (tmp_path / archived_at).read_text() == gone.html


def test_archive_moves_stamps_and_rewrites_inbound_hrefs(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    target = ok(write(store, note("Target", "The target.")))
    ok(write(store, note("Source", "Points at the target.",
                         links=(Link("supports", "/areas/inbox/target.html"),))))
    landed = ok(archive(later(store), target.primary or ""))
    moved = "archive/2026/areas/inbox/target.html"
    assert landed.paths == (moved, "areas/inbox/source.html", "areas/inbox/target.html")
    version = ok(store.head())
    record = version.get(moved)
    assert record is not None
    assert (record.status, record.archived_at, record.updated_at) == (
        "archived", LATER_STAMP, LATER_STAMP)
    assert version.inbound("/" + moved) == ("areas/inbox/source.html",)
    assert version.inbound("/areas/inbox/target.html") == ()
    again = err(archive(store, moved))
    assert isinstance(again, Refused)
    assert "archived" in again.reason


def test_link_unlink_label_unlabel_stamp_updated(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    a = ok(write(store, note("Alpha", "Alpha."))).primary or ""
    b = ok(write(store, note("Beta", "Beta."))).primary or ""
    s = later(store)
    linked = ok(link(s, a, "caused_by", "/" + b))
    assert linked.paths == (a,)
    record = ok(s.head()).get(a)
    assert record is not None
    assert record.links == (Link("caused_by", "/" + b),)
    assert record.updated_at == LATER_STAMP
    assert ok(link(s, a, "caused_by", b)).paths == ()
    assert err(link(s, a, "caused_by", "areas/inbox/missing.html")) == DanglingLinks(
        ("/areas/inbox/missing.html",))
    assert isinstance(err(link(s, a, "likes", b)), Refused)
    ok(unlink(s, a, "caused_by", b))
    assert ok(s.head()).get(a).links == ()  # type: ignore[union-attr]
    ok(label(s, a, "service:api"))
    assert ok(s.head()).by_entity("service:api") == (a,)
    assert isinstance(err(label(s, a, "not an entity")), type(err(unlink(s, a, "caused_by", b))))
    ok(unlabel(s, a, "service:api"))
    assert ok(s.head()).by_entity("service:api") == ()
    assert isinstance(err(unlabel(s, a, "service:api")), type(err(label(s, a, "bad"))))


def test_move_rewrites_every_inbound_href(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    a = ok(write(store, note("Alpha", "Alpha."))).primary or ""
    ok(write(store, note("Beta", "Beta.", links=(Link("part_of", "/" + a),))))
    ok(write(store, note("Gamma", "Gamma.", links=(Link("supports", "/" + a),
                                                  Link("relates_to", "/" + a)))))
    moved = ok(move(store, a, "areas/ops/"))
    assert moved.paths == ("areas/inbox/alpha.html", "areas/inbox/beta.html",
                           "areas/inbox/gamma.html", "areas/ops/alpha.html")
    version = ok(store.head())
    assert version.inbound("/areas/ops/alpha.html") == ("areas/inbox/beta.html",
                                                        "areas/inbox/gamma.html")
    assert version.inbound("/areas/inbox/alpha.html") == ()
    assert {link.rel for link in version.get("areas/inbox/gamma.html").links} == {  # type: ignore[union-attr]
        "supports", "relates_to"}
    assert isinstance(err(move(store, "areas/ops/alpha.html", "areas/inbox/beta.html")), Refused)
    assert isinstance(err(move(store, "areas/ops/alpha.html", "archive/2026/x.html")), Refused)


def test_tasks_are_listed_with_overdue_and_done_archives(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    late = ok(task_add(store, "Late", "Was due yesterday.", due_at="2026-04-30")).primary or ""
    ok(task_add(store, "Today", "Due today.", due_at="2026-05-01"))
    ok(task_add(store, "Earlier today", "Due this morning.", due_at="2026-05-01T08:00:00Z"))
    ok(task_add(store, "Someday", "No date."))
    rows = ok(task_list(store))
    assert [(r.title, r.overdue) for r in rows] == [
        ("Late", True), ("Earlier today", True), ("Today", False), ("Someday", False)]
    ok(task_status(store, late, "doing"))
    assert ok(store.head()).get(late).task_status == "doing"  # type: ignore[union-attr]
    done = ok(task_status(store, late, "done"))
    assert done.paths == ("archive/2026/areas/tasks/late.html", "areas/tasks/late.html")
    assert [r.title for r in ok(task_list(store))] == ["Earlier today", "Today", "Someday"]
    finished = [r for r in ok(task_list(store, include_done=True)) if r.status == "done"]
    assert [(r.path, r.overdue) for r in finished] == [("archive/2026/areas/tasks/late.html",
                                                        False)]
    plain = ok(write(store, note("Not a task", "Plain."))).primary or ""
    assert isinstance(err(task_status(store, plain, "done")), Refused)
    assert isinstance(err(task_status(store, "areas/tasks/today.html", "finished")), Refused)


def test_batch_lands_several_ops_as_one_commit_or_none(tmp_path: Path) -> None:
    store, git = make_store(tmp_path)
    seed = ok(write(store, note("Seed", "Seed."))).primary or ""
    landed = ok(batch(store, [
        BWrite(note("One", "First of the batch.")),
        BLink("areas/inbox/one.html", "supports", seed),
        BLabel(seed, "topic:batch"),
        BMove(seed, "areas/batch/seed.html"),
    ]))
    info = ok(git.commit_info(landed.commit))
    assert info.message.splitlines()[0] == "memhtml batch: 4 ops"
    assert [v for k, v in info.trailers if k == "Memhtml-Op"] == ["write", "link", "label", "move"]
    version = ok(store.head())
    assert version.get("areas/inbox/one.html").links == (  # type: ignore[union-attr]
        Link("supports", "/areas/batch/seed.html"),)
    assert version.by_entity("topic:batch") == ("areas/batch/seed.html",)
    before = tip(store)
    failed = err(batch(store, [BWrite(note("Two", "Second.")), BArchive("areas/inbox/nope.html")]))
    assert isinstance(failed, NotFound)
    assert describe(failed) == "no memory at areas/inbox/nope.html (batch op 2)"
    assert tip(store) == before


def test_the_checkout_follows_but_a_local_edit_is_never_clobbered(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    a = ok(write(store, note("Alpha", "Alpha."))).primary or ""
    b = ok(write(store, note("Beta", "Beta."))).primary or ""
    assert git_cli(tmp_path, "status", "--porcelain") == ""
    edited = (tmp_path / a).read_text().replace("Alpha.</mark>", "Alpha, edited.</mark>")
    (tmp_path / a).write_text(edited)
    # A batch touching the edited file is refused whole: nothing lands, nothing moves.
    tip_before = git_cli(tmp_path, "rev-parse", "HEAD")
    refused = err(batch(later(store), [BLabel(a, "topic:x"), BLabel(b, "topic:x")]))
    assert isinstance(refused, UncommittedEdits) and refused.paths == (a,)
    assert git_cli(tmp_path, "rev-parse", "HEAD") == tip_before
    # One that leaves it alone lands, and the checkout follows around the edit.
    landed = ok(batch(later(store), [BLabel(b, "topic:x")]))
    assert landed.unsynced == ()
    assert (tmp_path / a).read_text() == edited
    assert (tmp_path / b).read_text() == ok(read(store, b, "all"))
    assert git_cli(tmp_path, "status", "--porcelain") == f" M {a}\n"
    assert "topic:x" not in git_cli(tmp_path, "diff", "--cached")


def test_describe_reads_as_one_line(tmp_path: Path) -> None:
    del tmp_path
    refused = Refused("the memory was not written", ("one", "two"))
    assert describe(refused) == "the memory was not written: one; two"
    assert "\n" not in describe(InvalidMemory.of("a.html", ("x", "y")))
    assert describe(InvalidMemory.of("a.html", ("x", "y"))).endswith("x; y")
    stamped = set_meta("<html>", "memhtml-updated", NOW)
    assert stamped == "<html>"
