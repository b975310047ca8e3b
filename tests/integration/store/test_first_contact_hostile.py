"""The store's first-contact guards, attacked as a careless person and a hostile clone
would: markers naming refs that are not branches, markers that are binary, symbolic
links or only in the working tree, a person's own merge driver, edits in the checkout
of every odd shape, and a store config that cannot be edited as a plain file.

Real repositories made with the git command line, the real CLI, real git afterwards.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import ConfigLevel

from memhtml.store.merge_driver import DRIVER_COMMAND, DRIVER_KEY
from tests.integration.cli.cli_support import call, call_text

MARKER = ".memhtml/store.toml"
CONFIG = ".memhtml/config.toml"


def _env() -> dict[str, str]:
    return {**os.environ, "GIT_AUTHOR_NAME": "Setup", "GIT_AUTHOR_EMAIL": "setup@example.org",
            "GIT_COMMITTER_NAME": "Setup", "GIT_COMMITTER_EMAIL": "setup@example.org"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True, env=_env()).stdout


def blob(root: Path, rev_path: str) -> bytes:
    """A committed file's bytes exactly (text mode would fold CRLF)."""
    return subprocess.run(["git", "cat-file", "blob", rev_path], cwd=root, check=True,
                          capture_output=True, env=_env()).stdout


@pytest.fixture(autouse=True)
def no_global_git_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """libgit2 reads no global or system git config: each test sees only what it sets."""
    empty = str(tmp_path_factory.mktemp("no-git-config"))
    levels = (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM)
    saved = {level: pygit2.settings.search_path[level] for level in levels}
    for level in levels:
        pygit2.settings.search_path[level] = empty
    yield
    for level, path in saved.items():
        pygit2.settings.search_path[level] = path


def project(tmp_path: Path, name: str = "repo") -> Path:
    """A project's repository on main with one commit of its own."""
    root = tmp_path / name
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    (root / "README.md").write_text("A project.\n", encoding="utf-8")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "first")
    return root


def store(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str = "repo") -> Path:
    """A store on main holding one memory, areas/inbox/alpha.html, committed."""
    root = tmp_path / name
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    code, answer = call(capsys, "init", str(root), "--json")
    assert code == 0, answer
    write(capsys, root, "Alpha", "Alpha holds.")
    return root


def write(capsys: pytest.CaptureFixture[str], root: Path, title: str, claim: str) -> str:
    code, answer = call(capsys, "write", "--title", title, "--claim", claim,
                        "--store", str(root), "--json")
    assert code == 0, answer
    return str(answer["path"])


def refs(root: Path) -> dict[str, str]:
    out = git(root, "for-each-ref", "--format=%(refname) %(objectname)")
    pairs = (line.split(" ", 1) for line in out.splitlines())
    return {pair[0]: pair[1] for pair in pairs}


def commit_marker(root: Path, text: str | bytes) -> None:
    data = text.encode() if isinstance(text, str) else text
    (root / MARKER).write_bytes(data)
    git(root, "add", "-f", MARKER)
    git(root, "commit", "-q", "-m", "marker")


# -- markers a hostile clone might carry ---------------------------------------------------


def test_a_marker_naming_a_tag_never_moves_the_tag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = store(tmp_path, capsys)
    git(root, "tag", "v1")
    commit_marker(root, 'format = 1\nbranch = "refs/tags/v1"\n')
    git(root, "tag", "-f", "v1")
    tag = git(root, "rev-parse", "refs/tags/v1").strip()
    write(capsys, root, "Beta", "Beta holds.")
    assert git(root, "rev-parse", "refs/tags/v1").strip() == tag
    assert "areas/inbox/beta.html" in git(root, "ls-tree", "-r", "--name-only", "main")


def test_a_cloned_marker_naming_a_remote_ref_writes_to_the_local_branch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    origin = store(tmp_path, capsys, "origin")
    commit_marker(origin, 'format = 1\nbranch = "refs/remotes/origin/main"\n')
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    remote = git(clone, "rev-parse", "refs/remotes/origin/main").strip()
    write(capsys, clone, "Beta", "Beta holds.")
    assert git(clone, "rev-parse", "refs/remotes/origin/main").strip() == remote
    assert "areas/inbox/beta.html" in git(clone, "ls-tree", "-r", "--name-only", "main")


def test_a_marker_naming_head_never_creates_a_branch_called_head(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = store(tmp_path, capsys)
    commit_marker(root, 'format = 1\nbranch = "HEAD"\n')
    git(root, "switch", "-q", "-c", "topic")
    call(capsys, "write", "--title", "Beta", "--claim", "Beta holds.", "--store", str(root),
         "--json")
    assert "refs/heads/HEAD" not in git(root, "for-each-ref", "--format=%(refname)")


@pytest.mark.parametrize("branch", ["refs/tags/x", "HEAD", "refs/remotes/origin/x"])
def test_init_refuses_a_branch_that_is_a_ref_or_head(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], branch: str) -> None:
    root = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    code, answer = call(capsys, "init", str(root), "--branch", branch, "--json")
    assert code == 1, answer
    assert git(root, "for-each-ref") == ""
    assert git(root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"


@pytest.mark.parametrize("branch", ["--upload-pack=x", "../x", "x.lock", "x@{1}", "-x",
                                    "a b", "@", "x..y", "x/", ".x"])
def test_init_refuses_option_like_and_malformed_branches(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], branch: str) -> None:
    root = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    code, answer = call(capsys, "init", str(root), f"--branch={branch}", "--json")
    assert code == 1, answer
    assert "branch name" in answer["error"]
    assert git(root, "for-each-ref") == ""
    assert not (root / ".memhtml").exists()


@pytest.mark.parametrize("branch", ["--upload-pack=x", "../x", "x.lock", "-x", "x y"])
def test_a_malformed_marker_branch_falls_back_to_the_branch_it_was_read_from(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], branch: str) -> None:
    root = store(tmp_path, capsys)
    commit_marker(root, f'format = 1\nbranch = "{branch}"\n')
    before = set(refs(root))
    write(capsys, root, "Beta", "Beta holds.")
    assert set(refs(root)) == before
    assert "areas/inbox/beta.html" in git(root, "ls-tree", "-r", "--name-only", "main")


def test_a_marker_naming_a_branch_without_a_marker_is_ignored(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path)
    first = git(root, "rev-parse", "HEAD").strip()
    assert call(capsys, "init", str(root), "--json")[0] == 0
    git(root, "branch", "elsewhere", first)  # the project's own commit: no marker there
    commit_marker(root, 'format = 1\nbranch = "elsewhere"\n')
    elsewhere = git(root, "rev-parse", "elsewhere").strip()
    write(capsys, root, "Beta", "Beta holds.")
    assert git(root, "rev-parse", "elsewhere").strip() == elsewhere
    assert "areas/inbox/beta.html" in git(root, "ls-tree", "-r", "--name-only", "main")


def test_a_marker_only_in_the_working_tree_does_not_make_a_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path)
    (root / ".memhtml").mkdir()
    (root / MARKER).write_text('format = 1\nbranch = "main"\n', encoding="utf-8")
    before = refs(root)
    code, answer = call(capsys, "write", "--title", "X", "--claim", "Y.", "--store", str(root),
                        "--json")
    assert code == 1 and answer["code"] == "ERR_NOT_A_STORE"
    assert refs(root) == before


@pytest.mark.parametrize("content", [bytes(range(256)) * 4, b"branch = " + b"a" * 300_000])
def test_a_binary_or_huge_marker_still_marks_the_branch_it_is_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes) -> None:
    root = store(tmp_path, capsys)
    commit_marker(root, content)
    before = set(refs(root))
    write(capsys, root, "Beta", "Beta holds.")
    assert set(refs(root)) == before
    assert "areas/inbox/beta.html" in git(root, "ls-tree", "-r", "--name-only", "main")


def test_a_committed_symlink_marker_is_never_followed_out_of_the_tree(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path)
    outside = tmp_path / "outside.toml"
    outside.write_text('format = 1\nbranch = "main"\n', encoding="utf-8")
    (root / ".memhtml").mkdir()
    (root / MARKER).symlink_to(outside)
    git(root, "add", "-f", MARKER)
    git(root, "commit", "-q", "-m", "symlink marker")
    call(capsys, "write", "--title", "X", "--claim", "Y.", "--store", str(root), "--json")
    assert outside.read_text(encoding="utf-8") == 'format = 1\nbranch = "main"\n'
    assert (root / MARKER).is_symlink()


# -- the person's merge driver ---------------------------------------------------------------


def test_write_and_doctor_fix_leave_a_persons_merge_driver_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = store(tmp_path, capsys)
    git(root, "config", "merge.ours.driver", "my-merge %O %A %B")
    write(capsys, root, "Beta", "Beta holds.")
    call_text(capsys, "doctor", "--fix", "--store", str(root))
    assert git(root, "config", "--get-all", "merge.ours.driver").strip() == "my-merge %O %A %B"


def test_init_leaves_a_persons_merge_driver_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    git(root, "config", "merge.ours.driver", "my-merge %O %A %B")
    code, answer = call(capsys, "init", str(root), "--json")
    assert code == 0, answer
    assert git(root, "config", "--get-all", "merge.ours.driver").strip() == "my-merge %O %A %B"


def test_a_fresh_clone_gets_the_driver_in_its_own_config_only(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    origin = store(tmp_path, capsys, "origin")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    assert subprocess.run(["git", "config", "--local", DRIVER_KEY], cwd=clone,
                          capture_output=True, check=False).returncode == 1
    call_text(capsys, "status", "--store", str(clone))
    assert git(clone, "config", "--local", DRIVER_KEY).strip() == DRIVER_COMMAND
    # The generic ``ours`` driver an earlier release defined is never defined again.
    assert subprocess.run(["git", "config", "merge.ours.driver"], cwd=clone,
                          capture_output=True, check=False).returncode == 1


# -- uncommitted edits of odd shapes -----------------------------------------------------------


def _label_refused(capsys: pytest.CaptureFixture[str], root: Path, path: str) -> str:
    tip = git(root, "rev-parse", "main").strip()
    code, answer = call(capsys, "label", path, "team:a", "--store", str(root), "--json")
    assert code == 1, answer
    assert answer["code"] == "ERR_UNCOMMITTED_EDITS", answer
    assert git(root, "rev-parse", "main").strip() == tip
    return str(answer["error"])


def test_a_memory_replaced_by_a_directory_is_refused_and_kept(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = store(tmp_path, capsys)
    target = root / "areas/inbox/alpha.html"
    target.unlink()
    target.mkdir()
    (target / "notes.txt").write_text("mine\n", encoding="utf-8")
    assert "areas/inbox/alpha.html" in _label_refused(capsys, root, "areas/inbox/alpha.html")
    assert (target / "notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_a_staged_deletion_is_refused_and_kept(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = store(tmp_path, capsys)
    git(root, "rm", "-q", "areas/inbox/alpha.html")
    said = _label_refused(capsys, root, "areas/inbox/alpha.html")
    assert "deleted" in said and "staged" in said
    assert git(root, "status", "--porcelain").strip() == "D  areas/inbox/alpha.html"


def test_a_memory_replaced_by_a_symlink_is_refused_and_its_target_untouched(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = store(tmp_path, capsys)
    outside = tmp_path / "outside.html"
    outside.write_text("not a memory\n", encoding="utf-8")
    (root / "areas/inbox/alpha.html").unlink()
    (root / "areas/inbox/alpha.html").symlink_to(outside)
    _label_refused(capsys, root, "areas/inbox/alpha.html")
    assert outside.read_text(encoding="utf-8") == "not a memory\n"


def test_a_symlinked_folder_is_never_written_through(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = store(tmp_path, capsys)
    elsewhere = tmp_path / "elsewhere"
    (root / "areas/inbox").rename(elsewhere)
    (root / "areas/inbox").symlink_to(elsewhere)
    before = {p.name: p.read_bytes() for p in elsewhere.iterdir()}
    _label_refused(capsys, root, "areas/inbox/alpha.html")
    call(capsys, "write", "--title", "Gamma", "--claim", "Gamma holds.", "--store", str(root),
         "--json")
    assert {p.name: p.read_bytes() for p in elsewhere.iterdir()} == before


def test_an_untracked_file_where_a_write_would_land_is_kept(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = store(tmp_path, capsys)
    mine = root / "areas/inbox/gamma.html"
    mine.write_text("my own draft\n", encoding="utf-8")
    call(capsys, "write", "--title", "Gamma", "--claim", "Gamma holds.", "--store", str(root),
         "--json")
    assert mine.read_text(encoding="utf-8") == "my own draft\n"
    tracked = git(root, "ls-tree", "-r", "--name-only", "main")
    if "areas/inbox/gamma.html" in tracked:  # committed under that name: it must be memhtml's
        assert "my own draft" not in git(root, "show", "main:areas/inbox/gamma.html")


def test_status_lists_edits_in_a_wide_untracked_tree_once_each(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = store(tmp_path, capsys)
    wide = root / "areas/dump"
    for i in range(40):
        folder = wide / f"d{i}"
        folder.mkdir(parents=True)
        for j in range(10):
            (folder / f"n{j}.html").write_text(f"{i}-{j}\n", encoding="utf-8")
            (folder / f"n{j}.txt").write_text("not a memory\n", encoding="utf-8")
    code, answer = call(capsys, "status", "--store", str(root), "--json")
    assert code == 0, answer
    listed = [(e["path"], e["kind"]) for e in answer["uncommitted"]]
    dump = [path for path, kind in listed if path.startswith("areas/dump/")]
    assert len(dump) == len(set(dump)) == 400
    assert all(path.endswith(".html") for path in dump)
    assert {kind for path, kind in listed if path in dump} == {"untracked"}


# -- embed recording into an awkward config -----------------------------------------------------


def _embed(capsys: pytest.CaptureFixture[str], root: Path) -> tuple[int, str, str]:
    return call_text(capsys, "embed", "--embedder", "hashing", "--store", str(root))


def _commit_config(root: Path, data: bytes) -> None:
    (root / CONFIG).write_bytes(data)
    git(root, "add", "-f", CONFIG)
    git(root, "commit", "-q", "-m", "config")


@pytest.mark.parametrize("data", [
    b'embedder = "local"\nembedder = "openai"\n',
    b'[embedder]\nname = "local"\n',
    b'embedder.name = "local"\n',
    b'"embedder" = "local"\nother = 1\n',
    b'note = """\nembedder = "local"\n"""\n',
    b"\xff\xfe not text",
], ids=["twice", "table", "dotted", "quoted", "in-string", "binary"])
def test_embed_never_commits_a_config_it_cannot_edit_cleanly(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes) -> None:
    root = store(tmp_path, capsys)
    _commit_config(root, data)
    tip = git(root, "rev-parse", "main").strip()
    code, _, err = _embed(capsys, root)
    assert code == 0
    assert "not recorded" in err
    assert git(root, "rev-parse", "main").strip() == tip
    assert (root / CONFIG).read_bytes() == data


def test_embed_refuses_a_config_committed_as_a_symlink(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = store(tmp_path, capsys)
    outside = tmp_path / "outside.toml"
    outside.write_text("x = 1\n", encoding="utf-8")
    (root / CONFIG).symlink_to(outside)
    git(root, "add", "-f", CONFIG)
    git(root, "commit", "-q", "-m", "config link")
    tip = git(root, "rev-parse", "main").strip()
    _, _, err = _embed(capsys, root)
    assert "symbolic link" in err
    assert outside.read_text(encoding="utf-8") == "x = 1\n"
    assert git(root, "rev-parse", "main").strip() == tip


def test_embed_refuses_a_config_that_is_a_directory_in_the_checkout(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = store(tmp_path, capsys)
    (root / CONFIG).mkdir()
    tip = git(root, "rev-parse", "main").strip()
    _, _, err = _embed(capsys, root)
    assert "not a plain file" in err
    assert git(root, "rev-parse", "main").strip() == tip
    assert (root / CONFIG).is_dir()


def test_embed_replaces_a_crlf_line_in_place(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = store(tmp_path, capsys)
    _commit_config(root, b'# mine\r\nembedder = "local"\r\n[search]\r\nk = 1\r\n')
    _embed(capsys, root)
    assert blob(root, f"main:{CONFIG}") == \
        b'# mine\r\nembedder = "hashing"\r\n[search]\r\nk = 1\r\n'


def test_embed_adds_a_line_to_a_crlf_config_with_crlf(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = store(tmp_path, capsys)
    _commit_config(root, b"# mine\r\nlimit = 5\r\n[search]\r\nk = 1\r\n")
    _embed(capsys, root)
    stored = blob(root, f"main:{CONFIG}")
    assert b'embedder = "hashing"\r\n' in stored
    assert stored.count(b"\n") == stored.count(b"\r\n")
