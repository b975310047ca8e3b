"""``memhtml sync`` and ``memhtml clone`` against a person's unfinished work and a
remote written by somebody hostile.

A sync moves the store's branch and rewrites the checkout, so it answers to the same
rules as every write: a path the person edited and has not committed, or a merge or
rebase git left waiting, refuses it with nothing moved. The remote is untrusted input:
whatever its branch holds (symbolic links, a settings file naming an endpoint, a huge
or broken or non-UTF-8 memory, names that look like path traversal, a history with no
common root) may make a sync fail with a message, never crash it, never write outside
the checkout, and never become a setting that sends data off this machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pygit2
import pytest
from pygit2.enums import FileMode

from memhtml.cli.common import Common, open_cli_services
from tests.integration.cli.cli_support import call, call_text
from tests.integration.sync.sync_support import git

AUTHOR = pygit2.Signature("mallory", "mallory@example.invalid", 1_900_000_000, 0)
FILE = FileMode.BLOB
LINK = FileMode.LINK
TREE = FileMode.TREE


@pytest.fixture(autouse=True)
def _plain_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """git as installed, without the developer's own config, with an identity for the
    commits the tests make as a person would."""
    empty = tmp_path / "gitconfig"
    empty.write_text("[user]\n\tname = Pat\n\temail = pat@example.invalid\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def tip(root: Path, ref: str = "refs/heads/main") -> str | None:
    repo = pygit2.Repository(str(root))
    found = repo.references.get(ref)
    return None if found is None else str(found.target)


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    pygit2.init_repository(str(bare), bare=True, initial_head="main")
    return bare


def _write(capsys: pytest.CaptureFixture[str], store: Path, title: str, claim: str) -> str:
    code, answer = call(capsys, "write", "--title", title, "--claim", claim,
                        "--store", str(store), "--json")
    assert code == 0, answer
    return str(answer["new"][0])


def _sync(capsys: pytest.CaptureFixture[str], store: Path, *more: str) -> tuple[int, Any]:
    return call(capsys, "sync", *more, "--store", str(store), "--json")


def _synced(capsys: pytest.CaptureFixture[str], store: Path) -> dict[str, Any]:
    code, answer = _sync(capsys, store)
    assert code == 0, answer
    return dict(answer)


@pytest.fixture
def pair(tmp_path: Path, remote: Path, capsys: pytest.CaptureFixture[str]
         ) -> tuple[Path, Path, str]:
    """Two clones of one remote sharing one memory: the first made the store and
    published it, the second cloned it."""
    first, second = tmp_path / "first", tmp_path / "second"
    assert call(capsys, "init", str(first), "--json")[0] == 0
    git(first, "remote", "add", "origin", str(remote))
    memory = _write(capsys, first, "Deploy day", "Deploys happen on Tuesdays.")
    _synced(capsys, first)
    code, cloned = call(capsys, "clone", str(remote), str(second), "--json")
    assert code == 0, cloned
    return first, second, memory


def _edit_and_commit(store: Path, path: str, old: str, new: str) -> None:
    target = store / path
    target.write_text(target.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    git(store, "commit", "-qam", f"{old} -> {new}")


# -- a person's unfinished work in the checkout ------------------------------------------


@pytest.mark.parametrize("local_commit", [False, True], ids=["fast-forward", "merge"])
def test_an_uncommitted_edit_on_a_path_the_remote_changed_refuses(
        pair: tuple[Path, Path, str], remote: Path, capsys: pytest.CaptureFixture[str],
        local_commit: bool) -> None:
    first, second, memory = pair
    _edit_and_commit(first, memory, "Tuesdays", "Wednesdays")
    assert _synced(capsys, first)["pushed"] is True
    if local_commit:
        _write(capsys, second, "Lunch", "Lunch is at noon.")
    (second / memory).write_text((second / memory).read_text(encoding="utf-8").replace(
        "Tuesdays", "Fridays"), encoding="utf-8")
    held = (second / memory).read_bytes()
    branch_before, remote_before = tip(second), tip(remote)

    code, answer = _sync(capsys, second)

    assert code == 1, answer
    assert memory in answer["error"] + " ".join(answer["violations"]), answer
    assert tip(second) == branch_before, "the local branch did not move"
    assert (second / memory).read_bytes() == held, "the person's edit is untouched"
    assert tip(remote) == remote_before, "nothing was pushed"

    git(second, "commit", "-qam", "deploys on Fridays")
    done = _synced(capsys, second)
    assert done["action"] == "merged" and done["pushed"] is True, done
    assert tip(remote) == tip(second)
    texts = [git(second, "show", f"main:{p}") for p in
             git(second, "ls-tree", "-r", "--name-only", "main").splitlines()
             if p.endswith(".html")]
    assert any("Wednesdays" in t for t in texts) and any("Fridays" in t for t in texts)


def _conflicted_merge(store: Path) -> None:
    """A ``git merge`` stopped on a conflict in a file outside the store's memories."""
    git(store, "checkout", "-qb", "side")
    (store / "notes.txt").write_text("side\n")
    git(store, "add", "notes.txt")
    git(store, "commit", "-qm", "side notes")
    git(store, "checkout", "-q", "main")
    (store / "notes.txt").write_text("main\n")
    git(store, "add", "notes.txt")
    git(store, "commit", "-qm", "main notes")
    git(store, "merge", "side", check=False)
    assert (store / ".git" / "MERGE_HEAD").exists()


def _conflicted_rebase(store: Path) -> None:
    """A ``git rebase`` stopped on a conflict (HEAD detached meanwhile)."""
    git(store, "checkout", "-qb", "side")
    (store / "notes.txt").write_text("side\n")
    git(store, "add", "notes.txt")
    git(store, "commit", "-qm", "side notes")
    git(store, "checkout", "-q", "main")
    (store / "notes.txt").write_text("main\n")
    git(store, "add", "notes.txt")
    git(store, "commit", "-qm", "main notes")
    git(store, "rebase", "side", check=False)
    assert (store / ".git" / "rebase-merge").exists() or (store / ".git" / "rebase-apply").exists()


@pytest.mark.parametrize("stopped", [_conflicted_merge, _conflicted_rebase],
                         ids=["merge", "rebase"])
def test_a_merge_or_rebase_in_progress_refuses(
        pair: tuple[Path, Path, str], remote: Path, capsys: pytest.CaptureFixture[str],
        stopped: Any) -> None:
    first, second, memory = pair
    _edit_and_commit(first, memory, "Tuesdays", "Wednesdays")
    _synced(capsys, first)
    stopped(second)
    branch_before, remote_before = tip(second), tip(remote)
    head_before = git(second, "rev-parse", "HEAD")
    held = (second / memory).read_bytes()

    code, answer = _sync(capsys, second)

    assert code == 1, answer
    assert "merge" in answer["error"] or "rebase" in answer["error"], answer
    assert tip(second) == branch_before and tip(remote) == remote_before
    assert git(second, "rev-parse", "HEAD") == head_before
    assert (second / memory).read_bytes() == held


# -- a hostile remote ----------------------------------------------------------------------


def _raw_tree(repo: pygit2.Repository, entries: list[tuple[str, int, pygit2.Oid]]
              ) -> pygit2.Oid:
    """A tree object written byte by byte, so it may hold names libgit2's builder
    refuses (``..``): what a hostile server can send."""
    def key(entry: tuple[str, int, pygit2.Oid]) -> bytes:
        name, mode, _ = entry
        return name.encode("utf-8") + (b"/" if mode == TREE else b"")

    body = b"".join(f"{mode:o} {name}".encode() + b"\0" + oid.raw
                    for name, mode, oid in sorted(entries, key=key))
    return repo.odb.write(pygit2.enums.ObjectType.TREE, body)


def _with_paths(repo: pygit2.Repository, base: pygit2.Tree | None,
                files: Mapping[str, tuple[bytes, FileMode]]) -> pygit2.Oid:
    """``base`` (or nothing) with ``files`` (path -> bytes and mode) laid over it."""
    index = pygit2.Index()
    if base is not None:
        index.read_tree(base)
    for path, (data, mode) in files.items():
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), mode))
    return index.write_tree(repo)


def _push_commit(remote: Path, tree: pygit2.Oid, parents: list[str], subject: str) -> str:
    repo = pygit2.Repository(str(remote))
    made = repo.create_commit(None, AUTHOR, AUTHOR, subject, tree,
                              [pygit2.Oid(hex=p) for p in parents])
    repo.references.create("refs/heads/main", made, force=True)
    return str(made)


def _remote_tree(remote: Path) -> pygit2.Tree:
    repo = pygit2.Repository(str(remote))
    return repo.revparse_single("refs/heads/main").peel(pygit2.Tree)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the clones that a symbolic link from the remote points into."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.html").write_text("untouched\n")
    return folder


def _hostile_files(outside: Path) -> dict[str, tuple[bytes, FileMode]]:
    huge = (b"<!doctype html><html><head><title>big</title></head><body><p>"
            + b"a" * (10 * 1024 * 1024) + b"</p></body></html>")
    return {
        "areas/inbox/link.html": (str(outside / "victim.html").encode(), LINK),
        "areas/linked": (str(outside).encode(), LINK),
        ".memhtml/config.toml": (
            b'embedder = "openai"\nembed_url = "http://203.0.113.9/v1"\n'
            b'embed_key_env = "HOME"\nllm = "openai"\nllm_url = "http://203.0.113.9/v1"\n'
            b'transcripts_dir = "/"\n', FILE),
        "areas/inbox/huge.html": (huge, FILE),
        "areas/inbox/broken.html": (b"<html><head><meta name=memhtml-type", FILE),
        "areas/inbox/latin1.html": (b"<!doctype html><p>caf\xe9 \xff\xfe</p>", FILE),
        "areas/inbox/..html": (b"dots\n", FILE),
        "areas/inbox/-rf.html": (b"dash\n", FILE),
    }


def _settings_are_local(store: Path) -> None:
    settings = open_cli_services(Common(store=str(store), json=True)).settings
    assert settings.embed_url is None and settings.llm_url is None
    assert settings.embed_key_env == "MEMHTML_EMBED_API_KEY"
    assert settings.llm == "none" and settings.transcripts_dir is None


def _nothing_escaped(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["victim.html"]
    assert (outside / "victim.html").read_text() == "untouched\n"


def _no_symlink_written(store: Path) -> None:
    """The sync wrote no symbolic link into the checkout (git clone may have)."""
    for path in ("areas/inbox/link.html", "areas/linked"):
        assert not (store / path).is_symlink(), path


def _blobs_at(root: Path, ref: str = "main") -> set[bytes]:
    repo = pygit2.Repository(str(root))
    tree = repo.revparse_single(ref).peel(pygit2.Tree)
    found: set[bytes] = set()

    def walk(node: pygit2.Tree) -> None:
        for entry in node:
            if isinstance(entry, pygit2.Tree):
                walk(entry)
            elif isinstance(entry, pygit2.Blob):
                found.add(entry.data)

    walk(tree)
    return found


_LOCAL_VERSIONS = {
    "areas/inbox/broken.html": b"<html><head><title>mine, also broken",
    "areas/inbox/latin1.html": b"<!doctype html><p>na\xefve \x80 mine</p>",
    "areas/inbox/huge.html": b"<!doctype html><p>small and mine</p>",
    "areas/inbox/link.html": b"<!doctype html><p>a plain file here</p>",
}


@pytest.mark.parametrize("history", ["descendant", "diverged", "colliding", "unrelated"])
def test_a_hostile_remote_branch_is_brought_in_without_harm(
        pair: tuple[Path, Path, str], remote: Path, outside: Path,
        capsys: pytest.CaptureFixture[str], history: str) -> None:
    """Symbolic links, a settings file naming an endpoint, a 10 MB page, a broken and
    a non-UTF-8 file and odd names, as a descendant of the local branch, beside a
    local write, against local files at the same paths, and with no common root."""
    first, _, _ = pair
    base = _remote_tree(remote)
    parent = tip(remote)
    assert parent is not None
    repo = pygit2.Repository(str(remote))
    tree = _with_paths(repo, None if history == "unrelated" else base, _hostile_files(outside))
    _push_commit(remote, tree, [] if history == "unrelated" else [parent], "hostile")
    if history == "diverged":
        _write(capsys, first, "Lunch", "Lunch is at noon.")
    if history in ("colliding", "unrelated"):
        for path, data in _LOCAL_VERSIONS.items():
            (first / path).write_bytes(data)
        git(first, "add", *_LOCAL_VERSIONS)
        git(first, "commit", "-qm", "my own versions")
    local_before = tip(first)
    mine = _blobs_at(first)

    code, answer = _sync(capsys, first)

    assert code in (0, 1), answer
    if code == 1:
        assert answer["error"] and tip(first) == local_before, answer
    else:
        assert tip(first) == tip(remote), answer
        assert mine <= _blobs_at(first), "every local version is still in the tree"
    _nothing_escaped(outside)
    _no_symlink_written(first)
    _settings_are_local(first)


def test_a_merge_keeps_the_remote_symlink_a_symlink(
        pair: tuple[Path, Path, str], remote: Path, outside: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A path only the remote changed is the remote's in the merged tree: the same
    blob and the same mode, as a fast-forward would have it."""
    first, _, _ = pair
    repo = pygit2.Repository(str(remote))
    parent = tip(remote)
    assert parent is not None
    link = {"areas/inbox/link.html": (str(outside / "victim.html").encode(), LINK)}
    _push_commit(remote, _with_paths(repo, _remote_tree(remote), link), [parent], "a link")
    _write(capsys, first, "Lunch", "Lunch is at noon.")

    assert _synced(capsys, first)["action"] == "merged"

    merged = pygit2.Repository(str(first)).revparse_single("main").peel(pygit2.Tree)
    assert merged["areas/inbox/link.html"].filemode == LINK


def test_a_fast_forward_over_a_symlink_stages_nothing_for_the_person(
        pair: tuple[Path, Path, str], remote: Path, outside: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    first, _, _ = pair
    repo = pygit2.Repository(str(remote))
    parent = tip(remote)
    assert parent is not None
    link = {"areas/inbox/link.html": (str(outside / "victim.html").encode(), LINK)}
    _push_commit(remote, _with_paths(repo, _remote_tree(remote), link), [parent], "a link")

    assert _synced(capsys, first)["action"] == "fast-forward"

    assert not (first / "areas/inbox/link.html").is_symlink()
    staged = git(first, "diff", "--cached", "--name-only", "main")
    assert staged == "", staged


def _unsafe_tree(repo: pygit2.Repository, base: pygit2.Tree, shape: str) -> pygit2.Oid:
    """The remote's tree with one more entry whose name git's tools refuse to make but
    a server can send: ``..`` leading out of the checkout, ``nest/..`` leading back
    into it, or ``.git`` (any case) leading into the clone's own git directory."""
    entries = [(e.name or "", e.filemode, e.id) for e in base]
    page = repo.create_blob(b"<!doctype html><p>escaped</p>")
    if shape == "dot-dot":
        # ../escaped.html: out of the checkout, into the test's own directory.
        return _raw_tree(repo, [*entries, ("..", TREE, _raw_tree(repo, [
            ("escaped.html", FILE, page)]))])
    if shape == "nested-dot-dot":
        back = _raw_tree(repo, [("escaped.html", FILE, page)])
        return _raw_tree(repo, [*entries, ("nest", TREE, _raw_tree(repo, [("..", TREE, back)]))])
    config = repo.create_blob(b"[core]\n\tfsmonitor = touch pwned\n")
    return _raw_tree(repo, [*entries, (shape, TREE, _raw_tree(repo, [("config", FILE, config)]))])


@pytest.mark.parametrize("shape", ["dot-dot", "nested-dot-dot", ".git", ".GIT"])
@pytest.mark.parametrize("history", ["descendant", "diverged"])
def test_a_tree_path_no_checkout_may_hold_is_refused(
        pair: tuple[Path, Path, str], remote: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], shape: str, history: str) -> None:
    """Before the refusal, a fast-forward wrote ``../escaped.html`` beside the
    checkout (the checkout writer joins tree paths to it as given), and took ``.GIT``,
    which a case-insensitive file system holds as git's own directory."""
    first, _, _ = pair
    repo = pygit2.Repository(str(remote))
    parent = tip(remote)
    assert parent is not None
    _push_commit(remote, _unsafe_tree(repo, _remote_tree(remote), shape), [parent], shape)
    if history == "diverged":
        _write(capsys, first, "Lunch", "Lunch is at noon.")
    local_before = tip(first)
    config_before = (first / ".git" / "config").read_bytes()

    code, answer = _sync(capsys, first)

    assert code == 1, answer
    assert answer["code"] == "ERR_REMOTE_PATHS_REFUSED", answer
    assert "nothing was brought in" in answer["error"], answer
    assert tip(first) == local_before and tip(remote) != local_before
    for where in (tmp_path, first):
        assert not (where / "escaped.html").exists(), where
    assert (first / ".git" / "config").read_bytes() == config_before
    assert "fsmonitor" not in git(first, "config", "--list")


@pytest.mark.parametrize("history", ["descendant", "diverged"])
def test_a_backslash_name_from_the_remote_stays_one_file_name(
        pair: tuple[Path, Path, str], remote: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], history: str) -> None:
    """On this system a backslash is a character of a name, but on Windows a separator
    that climbs out of the checkout, and the store's writers refuse it: a remote tree
    holding one is refused before anything moves, fast-forward or merge alike."""
    first, _, _ = pair
    name = "areas/inbox/a\\..\\..\\b.html"
    repo = pygit2.Repository(str(remote))
    parent = tip(remote)
    assert parent is not None
    tree = _with_paths(repo, _remote_tree(remote), {name: (b"backslashes\n", FILE)})
    _push_commit(remote, tree, [parent], "backslash")
    if history == "diverged":
        _write(capsys, first, "Lunch", "Lunch is at noon.")
    local_before = tip(first)

    code, answer = _sync(capsys, first)

    assert code == 1 and answer["code"] == "ERR_REMOTE_PATHS_REFUSED", answer
    assert answer["violations"] == [f"path {name!r} refused: backslash in path; use '/' "
                                    "as the separator"], answer
    assert tip(first) == local_before
    assert not (tmp_path / "b.html").exists() and not (first / "b.html").exists()
    assert not any("\\" in p.name for p in (first / "areas" / "inbox").iterdir())


# -- option injection ----------------------------------------------------------------------


@pytest.mark.parametrize("url", ["--upload-pack=touch pwned", "-u touch pwned"])
def test_clone_refuses_a_url_that_reads_as_an_option(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, answer = call(capsys, "clone", "--json", "--", url, str(tmp_path / "c"))
    assert code == 1, answer
    assert "-" in answer["error"]
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "c" / ".git").exists()


def test_clone_refuses_a_branch_that_reads_as_an_option(
        tmp_path: Path, remote: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = call(capsys, "clone", str(remote), str(tmp_path / "c"),
                        "--branch=--upload-pack=touch", "--json")
    assert code == 1, answer
    assert not (tmp_path / "c" / ".git").exists()


def test_sync_refuses_a_remote_or_branch_that_reads_as_an_option(
        pair: tuple[Path, Path, str], remote: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    first, _, _ = pair
    monkeypatch.chdir(tmp_path)
    before, remote_before = tip(first), tip(remote)
    code, answer = call(capsys, "sync", "--store", str(first), "--json",
                        "--branch=--upload-pack=touch pwned")
    assert code == 1, answer
    code, answer = call(capsys, "sync", "--store", str(first), "--json", "--",
                        "--upload-pack=touch pwned")
    assert code == 1, answer
    assert not (tmp_path / "pwned").exists() and not (first / "pwned").exists()
    assert tip(first) == before and tip(remote) == remote_before


@pytest.mark.parametrize("url", ["--upload-pack=touch pwned",
                                 "ssh://-oProxyCommand=touch pwned/x.git",
                                 "ext::sh -c touch% pwned"])
def test_sync_through_a_configured_url_that_reads_as_an_option_runs_nothing(
        pair: tuple[Path, Path, str], remote: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        url: str) -> None:
    """The URL comes from the clone's own config, but a person may have pasted it
    from anywhere: git itself must be the one to refuse it, before running anything."""
    first, _, _ = pair
    monkeypatch.chdir(tmp_path)
    git(first, "config", "remote.origin.url", url)
    _write(capsys, first, "Lunch", "Lunch is at noon.")
    before = tip(first)
    code, out, err = call_text(capsys, "sync", "--store", str(first))
    assert code == 1, out + err
    assert "Traceback" not in out + err
    assert tip(first) == before
    for where in (tmp_path, first, first / ".git"):
        assert not (where / "pwned").exists(), where


# -- a remote that changed under the clone -----------------------------------------------


def test_a_remote_branch_deleted_after_the_first_sync_is_published_again(
        pair: tuple[Path, Path, str], remote: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    first, _, _ = pair
    pygit2.Repository(str(remote)).references.delete("refs/heads/main")
    _write(capsys, first, "Lunch", "Lunch is at noon.")
    done = _synced(capsys, first)
    assert done["action"] == "published-new" and done["pushed"] is True, done
    assert tip(remote) == tip(first)
    assert tip(first, "refs/remotes/origin/main") == tip(first)


def test_a_repository_whose_branch_has_no_commits_is_told_to_init_then_merges(
        pair: tuple[Path, Path, str], remote: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A repository with no commit on its branch is not a store yet: sync says how to
    make it one, and once made, the remote's unrelated store is merged into it."""
    _, _, memory = pair
    empty = tmp_path / "empty"
    pygit2.init_repository(str(empty), initial_head="main")
    git(empty, "remote", "add", "origin", str(remote))
    code, answer = _sync(capsys, empty, "--branch", "main")
    assert code == 1 and "memhtml init" in answer["error"], answer
    assert tip(empty) is None
    assert call(capsys, "init", str(empty), "--json")[0] == 0
    done = _synced(capsys, empty)
    # init's commit is deterministic, so the remote may already descend from it.
    assert done["action"] in ("merged", "fast-forward"), done
    assert (empty / memory).is_file()
    assert tip(empty) == tip(remote)
    code, doctor = call(capsys, "doctor", "--store", str(empty), "--json")
    assert code == 0, doctor


def test_an_unreachable_remote_fails_with_a_message_and_keeps_the_local_commit(
        pair: tuple[Path, Path, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    first, _, _ = pair
    git(first, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    _write(capsys, first, "Lunch", "Lunch is at noon.")
    before = tip(first)
    code, out, err = call_text(capsys, "sync", "--store", str(first))
    assert code == 1, out + err
    assert "Traceback" not in out + err
    assert "origin" in out + err
    assert tip(first) == before


# -- a write racing a sync -----------------------------------------------------------------


def test_writes_landing_between_fetch_and_merge_commit_are_kept(
        pair: tuple[Path, Path, str], remote: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The merge is derived, a write lands on the branch, the merge commit's swap is
    refused and the door derives again from the new tip: the write survives."""
    from memhtml.sync import door

    first, second, _ = pair
    _write(capsys, first, "Lunch", "Lunch is at noon.")
    _synced(capsys, first)
    _write(capsys, second, "Coffee", "Coffee is downstairs.")
    real = door.merge_draft
    raced: list[str] = []

    def racing(store: Any, ours: str, theirs: str, label: str) -> Any:
        drafted = real(store, ours, theirs, label)
        if len(raced) < 2:
            # Two other writers in this clone land after the merge read the tip.
            raced.append(_write(capsys, second, f"Race {len(raced)}",
                                f"Race number {len(raced)} landed mid-sync."))
        return drafted

    monkeypatch.setattr(door, "merge_draft", racing)
    done = _synced(capsys, second)
    assert done["action"] == "merged" and done["pushed"] is True, done
    held = set(git(second, "ls-tree", "-r", "--name-only", "main").splitlines())
    assert set(raced) <= held and "areas/inbox/coffee.html" in held
    assert "areas/inbox/lunch.html" in held
    assert tip(remote) == tip(second)
    for path in raced:
        assert (second / path).is_file()
    # The merge commit sits on the last racing write: it was derived again on it.
    assert "Race 1" in git(second, "log", "-1", "--format=%B", "main^1")


def test_a_write_landing_before_a_fast_forward_is_kept(
        pair: tuple[Path, Path, str], remote: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The fetch found the remote strictly ahead; a local write lands before the
    branch is moved, so the fast-forward's compare-and-swap is refused. The write
    stays, and the sync ends either merged or with a message, never with a loss."""
    from memhtml.store.landing import forward as real
    from memhtml.sync import door

    first, second, _ = pair
    _write(capsys, first, "Lunch", "Lunch is at noon.")
    _synced(capsys, first)
    raced: list[str] = []

    def racing(deps: Any, expected: Any, target: str, **options: Any) -> Any:
        if not raced:
            raced.append(_write(capsys, second, "Race", "A write landed mid-sync."))
        return real(deps, expected, target, **options)

    monkeypatch.setattr(door, "forward", racing)
    code, answer = _sync(capsys, second)
    held = set(git(second, "ls-tree", "-r", "--name-only", "main").splitlines())
    assert raced and set(raced) <= held, answer
    assert code == 0, answer
    assert answer["action"] == "merged" and answer["pushed"] is True, answer
    assert "areas/inbox/lunch.html" in held and tip(remote) == tip(second)
