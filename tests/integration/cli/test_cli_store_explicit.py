"""A store is explicit: ``init`` marks one, on whatever branch HEAD names, and every
other command refuses a repository that carries no marker, writing nothing to it.
Commits carry the person's identity as author and memhtml as committer.

Everything runs through the real CLI in real repositories made by the git command
line, the way a newcomer's would be."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import ConfigLevel

from memhtml.compose import Settings, open_services, value_of
from memhtml.compose.sleep import head_gate, sleep_deps
from memhtml.compose.stores import AGENT
from tests.integration.cli.cli_support import call, call_text

MARKER = ".memhtml/store.toml"
PERSON = ("Ada Example", "ada@example.org")
CLAIM = ("write", "--title", "Deploy window", "--claim", "Deploys happen on Tuesdays.")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True, env=_git_env()).stdout


def _git_env() -> dict[str, str]:
    """git's own commits in these tests carry a fixed identity, whatever the machine's."""
    return {**os.environ, "GIT_AUTHOR_NAME": "Setup", "GIT_AUTHOR_EMAIL": "setup@example.org",
            "GIT_COMMITTER_NAME": "Setup", "GIT_COMMITTER_EMAIL": "setup@example.org"}


@pytest.fixture(autouse=True)
def no_global_identity(tmp_path_factory: pytest.TempPathFactory,
                       monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """libgit2 reads no global, XDG or system git config here, and no ``GIT_AUTHOR_*``
    variable is set: the identity a test sees is the one it configures."""
    empty = str(tmp_path_factory.mktemp("no-git-config"))
    levels = (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM)
    saved = {level: pygit2.settings.search_path[level] for level in levels}
    for level in levels:
        pygit2.settings.search_path[level] = empty
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"):
        monkeypatch.delenv(name, raising=False)
    yield
    for level, path in saved.items():
        pygit2.settings.search_path[level] = path


def fresh(tmp_path: Path, branch: str = "master", *, bare: bool = False) -> Path:
    """``git init`` as a person runs it: a repository on ``branch``, nothing committed."""
    root = tmp_path / ("repo.git" if bare else "repo")
    git(tmp_path, "init", "-q", *(["--bare"] if bare else []), "-b", branch, str(root))
    return root


def with_history(tmp_path: Path, branch: str = "dev") -> tuple[Path, str]:
    """A project's repository with one commit of its own on ``branch``."""
    root = fresh(tmp_path, branch)
    (root / "README.md").write_text("A project.\n", encoding="utf-8")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "first")
    return root, git(root, "rev-parse", "HEAD").strip()


def refs(root: Path) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)")


def head_ref(root: Path) -> str:
    return git(root, "symbolic-ref", "HEAD").strip()


def marker_of(root: Path, rev: str) -> str:
    return git(root, "show", f"{rev}:{MARKER}")


def who(root: Path, rev: str = "HEAD") -> str:
    return git(root, "log", "-1", "--format=%an <%ae> | %cn <%ce>", rev).strip()


# -- a repository that is not a store is refused and never written -------------------------


STORE_COMMANDS: tuple[tuple[str, ...], ...] = (
    CLAIM,
    ("correct", "areas/inbox/x.html", "--claim", "Better."),
    ("archive", "areas/inbox/x.html"),
    ("link", "areas/inbox/x.html", "supports", "areas/inbox/y.html"),
    ("unlink", "areas/inbox/x.html", "supports", "areas/inbox/y.html"),
    ("label", "areas/inbox/x.html", "team:a"),
    ("unlabel", "areas/inbox/x.html", "team:a"),
    ("move", "areas/inbox/x.html", "areas/y/"),
    ("publish",),
    ("read", "areas/inbox/x.html"),
    ("related", "areas/inbox/x.html"),
    ("log", "areas/inbox/x.html"),
    ("search", "deploy"),
    ("status",),
    ("doctor",),
    ("embed", "--embedder", "hashing"),
    ("task", "add", "--title", "Ship it"),
    ("task", "list"),
    ("sleep", "plan"),
    ("sleep", "status"),
    ("eval", "gate", "HEAD", "HEAD"),
)


@pytest.mark.parametrize("tokens", STORE_COMMANDS, ids=lambda t: " ".join(t[:2]))
def test_every_command_refuses_a_repository_that_is_not_a_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], tokens: tuple[str, ...]) -> None:
    root, first = with_history(tmp_path)
    before = refs(root)
    code, answer = call(capsys, *tokens, "--store", str(root), "--json")
    assert code == 1, answer
    assert answer["code"] == "ERR_NOT_A_STORE"
    assert "memhtml init" in answer["error"] and "--store" in answer["error"]
    assert refs(root) == before
    assert git(root, "rev-parse", "HEAD").strip() == first
    assert git(root, "status", "--porcelain", "--ignored") == ""
    assert not (root / ".memhtml").exists()
    assert not (root / ".git" / "memhtml").exists()


def test_write_in_a_fresh_git_init_is_refused_where_the_person_stands(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    root = fresh(tmp_path)
    monkeypatch.chdir(root)
    code, out, err = call_text(capsys, *CLAIM)
    assert code == 1 and out == ""
    assert err.startswith(f"error: {root} is not a memhtml store")
    assert f"`memhtml init {root}`" in err and "--store DIR" in err
    assert refs(root) == "" and head_ref(root) == "refs/heads/master"
    assert sorted(p.name for p in root.iterdir()) == [".git"]
    assert not (root / ".git" / "memhtml").exists()


def test_the_mcp_server_refuses_a_repository_that_is_not_a_store(tmp_path: Path) -> None:
    root = fresh(tmp_path)
    done = subprocess.run([sys.executable, "-m", "memhtml.mcp", "--store", str(root)],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=120, check=False)
    assert done.returncode == 1, done
    assert "is not a memhtml store" in done.stderr and "memhtml init" in done.stderr
    assert refs(root) == "" and not (root / ".git" / "memhtml").exists()


def test_commands_that_need_no_store_still_run_anywhere(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    root = fresh(tmp_path)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("---\nname: a\n---\nDeploys happen on Tuesdays.\n",
                                encoding="utf-8")
    monkeypatch.chdir(root)
    code, answer = call(capsys, "md", "stats", "--root", str(notes), "--json")
    assert code == 0, answer
    assert refs(root) == ""


# -- init on the branch HEAD names ---------------------------------------------------------


def test_init_in_an_empty_repository_on_master_stays_on_master(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = fresh(tmp_path)
    code, out, err = call_text(capsys, "init", str(root))
    assert code == 0, err
    assert err == ""  # only true notes, and there is nothing to note
    assert out.startswith(f"store at {root} (branch master)\n")
    assert head_ref(root) == "refs/heads/master"
    assert git(root, "branch", "--format=%(refname:short)").split() == ["master"]
    assert 'branch = "master"' in marker_of(root, "master")
    # The checkout is on the store's branch and holds its files; nothing is pending.
    assert (root / MARKER).is_file() and (root / "areas" / "inbox" / ".gitkeep").is_file()
    assert git(root, "status", "--porcelain") == ""
    code, answer = call(capsys, *CLAIM, "--store", str(root), "--json")
    assert code == 0, answer
    assert git(root, "log", "--format=%s", "master").splitlines() == [
        "memhtml write: areas/inbox/deploy-window.html", "memhtml init: store layout"]
    assert (root / "areas" / "inbox" / "deploy-window.html").is_file()
    assert git(root, "status", "--porcelain") == ""


def test_init_on_a_repository_with_history_adds_one_commit_on_its_branch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, first = with_history(tmp_path)
    code, answer = call(capsys, "init", str(root), "--json")
    assert code == 0, answer
    assert answer["branch"] == "dev" and answer["committed"] is True
    assert MARKER in answer["paths"]
    assert git(root, "rev-parse", "HEAD~1").strip() == first
    assert head_ref(root) == "refs/heads/dev"
    assert git(root, "status", "--porcelain") == ""
    assert (root / "README.md").read_text(encoding="utf-8") == "A project.\n"
    code, again = call(capsys, "init", str(root), "--json")
    assert code == 0 and again["committed"] is False


def test_init_in_a_bare_repository_on_its_head_branch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = fresh(tmp_path, "trunk", bare=True)
    code, answer = call(capsys, "init", str(root), "--json")
    assert code == 0, answer
    assert answer["branch"] == "trunk"
    code, wrote = call(capsys, *CLAIM, "--store", str(root), "--json")
    assert code == 0, wrote
    assert git(root, "log", "--format=%s", "trunk").splitlines()[0].startswith(
        "memhtml write:")
    assert git(root, "branch", "--format=%(refname:short)").split() == ["trunk"]


def test_init_with_a_branch_in_an_empty_repository_points_head_at_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = fresh(tmp_path)
    code, _, err = call_text(capsys, "init", str(root), "--branch", "memory")
    assert code == 0, err
    assert err == ""
    assert head_ref(root) == "refs/heads/memory"
    assert 'branch = "memory"' in marker_of(root, "memory")
    assert git(root, "status", "--porcelain") == ""
    code, answer = call(capsys, "status", "--store", str(root), "--json")
    assert code == 0, answer


def test_init_with_another_branch_than_a_checkout_holds_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = with_history(tmp_path)
    before = refs(root)
    code, answer = call(capsys, "init", str(root), "--branch", "memory", "--json")
    assert code == 1
    assert answer["code"] == "ERR_INIT_REFUSED"
    assert "git switch memory" in answer["error"]
    assert refs(root) == before and head_ref(root) == "refs/heads/dev"
    assert not (root / ".memhtml").exists()


@pytest.mark.parametrize("name", ["..", "-x", "a..b", "a b", "x.lock", ".hidden", "a/"])
def test_init_refuses_a_branch_name_git_would_not_take(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    root = fresh(tmp_path)
    code, answer = call(capsys, "init", str(root), f"--branch={name}", "--json")
    assert code == 1, answer
    assert answer["code"] == "ERR_INIT_REFUSED"
    assert refs(root) == ""


def test_a_topic_branch_of_a_store_still_writes_to_the_store_branch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = fresh(tmp_path)
    assert call(capsys, "init", str(root), "--json")[0] == 0
    git(root, "switch", "-q", "-c", "topic")
    code, answer = call(capsys, *CLAIM, "--store", str(root), "--json")
    assert code == 0, answer
    assert git(root, "log", "-1", "--format=%s", "master").startswith("memhtml write:")
    assert git(root, "log", "-1", "--format=%s", "topic") == "memhtml init: store layout\n"
    # The checkout was not ours to touch, and nothing in it is a person's change.
    assert answer["off_branch"] is True and answer["unsynced"] == []
    assert git(root, "status", "--porcelain") == ""
    code, _out, err = call_text(capsys, *CLAIM[:2], "Second", "--claim", "Another fact.",
                               "--store", str(root))
    assert code == 0 and "local changes" not in err and "another branch" in err, err


def test_a_detached_head_finds_the_store_branch_its_marker_records(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = fresh(tmp_path)
    assert call(capsys, "init", str(root), "--json")[0] == 0
    git(root, "checkout", "-q", "--detach")
    detached = git(root, "rev-parse", "HEAD").strip()
    code, answer = call(capsys, *CLAIM, "--store", str(root), "--json")
    assert code == 0, answer
    assert git(root, "log", "-1", "--format=%s", "master").startswith("memhtml write:")
    assert git(root, "rev-parse", "HEAD").strip() == detached


# -- a store made before the marker ---------------------------------------------------------


def older_store(tmp_path: Path) -> Path:
    """What an ``init`` of an earlier release committed, on main: no marker."""
    root = fresh(tmp_path, "main")
    (root / ".gitattributes").write_text(
        "# Generated by memhtml publish: regenerate, never merge.\n"
        "index.html merge=ours\nsitemap.xml merge=ours\n", encoding="utf-8")
    (root / ".gitignore").write_text(".memhtml/\n", encoding="utf-8")
    for folder in ("areas/inbox", "resources/people", "archive"):
        (root / folder).mkdir(parents=True)
        (root / folder / ".gitkeep").write_text("", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "memhtml init: store layout")
    return root


def test_a_store_made_before_the_marker_keeps_working_unchanged(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = older_store(tmp_path)
    code, answer = call(capsys, *CLAIM, "--store", str(root), "--json")
    assert code == 0, answer
    code, status = call(capsys, "status", "--store", str(root), "--json")
    assert code == 0, status
    # Recognised, not migrated: nothing but the write was committed.
    assert len(git(root, "log", "--format=%H").split()) == 2
    assert MARKER not in git(root, "ls-files")
    code, again = call(capsys, "init", str(root), "--json")
    assert code == 0, again
    assert MARKER in again["paths"]
    assert 'branch = "main"' in marker_of(root, "main")
    # The same commit replaces the earlier release's merge=ours lines with memhtml's own
    # driver's, and keeps the person's header line.
    assert ".gitattributes" in again["paths"]
    attributes = git(root, "show", "main:.gitattributes").splitlines()
    assert "index.html merge=memhtml-generated" in attributes
    assert "/sitemap.xml merge=memhtml-generated" in attributes
    assert not [line for line in attributes if "merge=ours" in line]
    assert attributes[0] == "# Generated by memhtml publish: regenerate, never merge."


# -- whose commits ----------------------------------------------------------------------------


def test_commits_are_authored_by_the_person_git_knows_and_committed_by_memhtml(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = fresh(tmp_path)
    git(root, "config", "user.name", PERSON[0])
    git(root, "config", "user.email", PERSON[1])
    assert call(capsys, "init", str(root), "--json")[0] == 0
    assert call(capsys, *CLAIM, "--store", str(root), "--json")[0] == 0
    person = f"{PERSON[0]} <{PERSON[1]}>"
    assert who(root) == f"{person} | memhtml <memhtml@localhost>"
    assert who(root, "HEAD~1") == f"{person} | memhtml <memhtml@localhost>"


def test_git_author_variables_and_memhtml_settings_come_first(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    root = fresh(tmp_path)
    git(root, "config", "user.name", PERSON[0])
    git(root, "config", "user.email", PERSON[1])
    assert call(capsys, "init", str(root), "--json")[0] == 0
    monkeypatch.setenv("GIT_AUTHOR_NAME", "From Env")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "env@example.org")
    assert call(capsys, *CLAIM, "--store", str(root), "--json")[0] == 0
    assert who(root) == "From Env <env@example.org> | memhtml <memhtml@localhost>"
    monkeypatch.setenv("MEMHTML_AUTHOR_NAME", "Set In Memhtml")
    code, _ = call(capsys, "write", "--title", "Second", "--claim", "A second fact.",
                   "--store", str(root), "--json")
    assert code == 0
    assert who(root) == "Set In Memhtml <env@example.org> | memhtml <memhtml@localhost>"


def test_with_no_identity_configured_memhtml_authors_the_commit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = fresh(tmp_path)
    assert call(capsys, "init", str(root), "--json")[0] == 0
    assert call(capsys, *CLAIM, "--store", str(root), "--json")[0] == 0
    assert who(root) == "memhtml <memhtml@localhost> | memhtml <memhtml@localhost>"


def test_a_sleep_run_keeps_memhtml_as_its_author(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = fresh(tmp_path)
    git(root, "config", "user.name", PERSON[0])
    git(root, "config", "user.email", PERSON[1])
    assert call(capsys, "init", str(root), "--json")[0] == 0
    services = value_of(open_services(Settings(store=root)))
    assert services.author.name == PERSON[0]
    assert services.settings.branch == "master"
    assert sleep_deps(services, head_gate).unwrap().author == AGENT
