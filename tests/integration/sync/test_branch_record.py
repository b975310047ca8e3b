"""The branch a store writes is this clone's own choice, and no pushed file moves it.

``memhtml init`` and ``memhtml clone`` record the store's branch in the repository's own
git config (``memhtml.branch``); a clone without a record (a plain ``git clone``, a
clone from before records) finds its store once and records what it found. After
that a collaborator's commit naming another branch, in ``.memhtml/config.toml`` or in
the marker ``.memhtml/store.toml``, is pulled like any file and changes nothing about
where this clone writes: the config key is ignored with a warning, the marker's
disagreement is shown by ``status`` and ``doctor``. No door ever writes a sleep run's
branch, which ``sleep abort`` deletes.

Two clones of one bare remote, the real CLI, the git command line as a person (or a
hostile collaborator) runs it, and the MCP server through the official client.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pygit2
import pytest
from mcp import ClientSession

from tests.integration.cli.cli_support import call, call_text
from tests.integration.mcp.mcp_support import SCENARIO_TIMEOUT_S, data, served
from tests.integration.sync.sync_support import git

CONFIG = ".memhtml/config.toml"
MARKER = ".memhtml/store.toml"
KEY = "memhtml.branch"


def tip(root: Path, branch: str = "main") -> str | None:
    found = pygit2.Repository(str(root)).references.get(f"refs/heads/{branch}")
    return None if found is None else str(found.target)


PUSH_ATTEMPTS = 5


def local_branches(root: Path) -> dict[str, str]:
    out = git(root, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
    return dict(line.split(" ", 1) for line in out.splitlines())


def on_branch(root: Path, commit: str, branch: str = "main") -> bool:
    return subprocess.run(["git", "-C", str(root), "merge-base", "--is-ancestor", commit,
                           f"refs/heads/{branch}"], check=False).returncode == 0


def record(root: Path) -> str | None:
    done = subprocess.run(["git", "-C", str(root), "config", "--local", "--get", KEY],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def dangling_commits(root: Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(root), "fsck", "--dangling"], capture_output=True,
                         text=True, check=False).stdout
    return [line.split()[2] for line in out.splitlines() if line.startswith("dangling commit")]


def push_files(clone: Path, files: Mapping[str, str | None], message: str) -> str:
    """The collaborator's side: commit ``files`` (None deletes one) on top of the
    remote's main with plain git, and push. Returns the pushed commit. A push the
    remote rejects because another clone pushed first (a server syncing beside it) is
    made again on the new main, as a person would, a few times."""
    for _ in range(PUSH_ATTEMPTS):
        git(clone, "fetch", "-q", "origin")
        git(clone, "reset", "-q", "--hard", "origin/main")
        for path, text in files.items():
            target = clone / path
            if text is None:
                git(clone, "rm", "-q", "--ignore-unmatch", path)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            git(clone, "add", "-f", path)
        git(clone, "commit", "-q", "--allow-empty", "-m", message)
        pushed = subprocess.run(["git", "-C", str(clone), "push", "-q", "origin", "HEAD:main"],
                                capture_output=True, text=True, check=False)
        if pushed.returncode == 0:
            return git(clone, "rev-parse", "HEAD").strip()
        assert "rejected" in pushed.stderr or "fetch first" in pushed.stderr, pushed.stderr
    raise AssertionError(f"the remote rejected {PUSH_ATTEMPTS} pushes of {message!r}")


def marker_naming(branch: str) -> str:
    return f'format = 1\nbranch = "{branch}"\n'


def write(capsys: pytest.CaptureFixture[str], root: Path, title: str) -> str:
    code, answer = call(capsys, "write", "--title", title, "--claim", f"{title} holds.",
                        "--store", str(root), "--json")
    assert code == 0, answer
    return str(answer["commit"])


def sync(capsys: pytest.CaptureFixture[str], root: Path) -> dict[str, object]:
    code, answer = call(capsys, "sync", "--store", str(root), "--json")
    assert code == 0, answer
    return dict(answer)


@pytest.fixture
def clones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, Path]:
    """A bare remote, clone A (made with init, published) and clone B (memhtml clone)."""
    remote = tmp_path / "remote.git"
    pygit2.init_repository(str(remote), bare=True, initial_head="main")
    a, b = tmp_path / "A", tmp_path / "B"
    assert call(capsys, "init", str(a), "--json")[0] == 0
    git(a, "remote", "add", "origin", str(remote))
    sync(capsys, a)
    assert call(capsys, "clone", str(remote), str(b), "--json")[0] == 0
    assert record(a) == record(b) == "main"
    return remote, a, b


def sleep_branch(capsys: pytest.CaptureFixture[str], root: Path) -> str:
    """Run a sleep run in ``root`` and name the branch it cut."""
    code, _ = call(capsys, "sleep", "run", "--store", str(root), "--json")
    assert code in (0, 1)
    [branch] = [name for name in local_branches(root) if name.startswith("sleep/")]
    return branch


# -- the reported attack --------------------------------------------------------------------


@pytest.mark.parametrize("where", ["config", "marker", "both"])
def test_a_pushed_sleep_branch_never_takes_a_write_that_abort_would_delete(
        clones: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str],
        where: str) -> None:
    remote, a, b = clones
    run_branch = sleep_branch(capsys, a)
    run_tip = tip(a, run_branch)
    files = {"config": {CONFIG: f'branch = "{run_branch}"\n'},
             "marker": {MARKER: marker_naming(run_branch)},
             "both": {CONFIG: f'branch = "{run_branch}"\n',
                      MARKER: marker_naming(run_branch)}}[where]
    push_files(b, files, "settle on a branch")

    assert sync(capsys, a)["action"] == "fast-forward"
    code, out, err = call_text(capsys, "write", "--title", "Deploy window", "--claim",
                               "Deploys happen on Tuesdays.", "--store", str(a))
    assert code == 0, err
    if where != "marker":
        assert f"ignored branch in {a / CONFIG}" in err
    commit = tip(a)
    assert commit is not None and out.startswith(commit[:10])
    assert on_branch(a, commit) and tip(a) == commit
    assert tip(a, run_branch) == run_tip, "the run's branch took nothing"
    assert record(a) == "main"

    code, aborted = call(capsys, "sleep", "abort", "--store", str(a), "--json")
    assert code == 0, aborted
    assert aborted["branch"] == run_branch and tip(a, run_branch) is None
    assert on_branch(a, commit), "the write survived the abort"
    assert commit not in dangling_commits(a)
    sync(capsys, a)
    assert tip(remote) == tip(a) and on_branch(remote, commit)


def test_a_pushed_branch_that_does_not_exist_leaves_every_command_working(
        clones: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """``branch = "evil"`` used to make every command, sync included, answer
    ERR_NOT_A_STORE after one pull, so the fix could not even be pulled."""
    remote, a, b = clones
    first = write(capsys, a, "Alpha")
    sync(capsys, a)
    push_files(b, {CONFIG: 'branch = "evil"\n', MARKER: marker_naming("evil")}, "evil")
    assert sync(capsys, a)["action"] == "fast-forward"
    for tokens in (("status",), ("search", "alpha"), ("read", "areas/inbox/alpha.html"),
                   ("log", "areas/inbox/alpha.html"), ("task", "list"), ("sleep", "plan"),
                   ("doctor",), ("eval", "gate", "HEAD", "HEAD")):
        code, answer = call(capsys, *tokens, "--store", str(a), "--json")
        assert code == 0, (tokens, answer)
    second = write(capsys, a, "Beta")
    assert on_branch(a, first) and on_branch(a, second)
    assert "evil" not in local_branches(a)

    # The collaborator takes it back; the clone pulls the fix like any change.
    push_files(b, {CONFIG: None, MARKER: marker_naming("main")}, "back to main")
    assert sync(capsys, a)["action"] == "merged"
    code, doctor = call(capsys, "doctor", "--store", str(a), "--json")
    assert code == 0 and not any(f["path"] == MARKER for f in doctor["findings"]), doctor
    assert tip(remote) == tip(a)


def test_a_pushed_marker_naming_another_store_branch_is_told_not_followed(
        clones: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, a, b = clones
    git(a, "branch", "other", "main")  # a branch of the person's, a store's too
    other = tip(a, "other")
    push_files(b, {MARKER: marker_naming("other")}, "move the store")
    sync(capsys, a)
    commit = write(capsys, a, "Stays home")
    assert on_branch(a, commit) and tip(a, "other") == other

    code, status = call(capsys, "status", "--store", str(a), "--json")
    assert code == 0, status
    assert status["branch"] == "main"
    assert "names branch other" in status["branch_note"], status
    code, doctor = call(capsys, "doctor", "--store", str(a), "--json")
    assert code == 0, doctor
    [finding] = [f for f in doctor["findings"] if f["path"] == MARKER]
    assert finding["kind"] == "warning"
    assert f"git config {KEY} other" in finding["message"]

    # The person decides to follow: their own git config is the one switch.
    git(a, "config", KEY, "other")
    moved = write(capsys, a, "Moved on purpose")
    assert on_branch(a, moved, "other") and not on_branch(a, moved, "main")


# -- a clone with no record finds its store once ---------------------------------------------


def test_a_plain_git_clone_finds_its_store_once_and_keeps_it(
        clones: tuple[Path, Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    remote, _, b = clones
    run = "sleep/2099-01-01"
    push_files(b, {MARKER: marker_naming(run)}, "point at a run")
    plain = tmp_path / "plain"
    git(tmp_path, "clone", "-q", str(remote), str(plain))
    git(plain, "branch", run, "main")  # a run branch of that name, carrying the marker
    assert record(plain) is None
    commit = write(capsys, plain, "First contact")
    assert record(plain) == "main"
    assert on_branch(plain, commit) and not on_branch(plain, commit, run)

    # Detached (mid-rebase, say) with no record: read for its marker, never written.
    git(plain, "config", "--unset", KEY)
    git(plain, "checkout", "-q", "--detach")
    detached = git(plain, "rev-parse", "HEAD").strip()
    again = write(capsys, plain, "Second contact")
    assert on_branch(plain, again) and record(plain) == "main"
    assert git(plain, "rev-parse", "HEAD").strip() == detached


def test_a_branch_the_person_renamed_is_found_again_and_recorded(
        clones: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, a, _ = clones
    git(a, "branch", "-m", "main", "memory")
    commit = write(capsys, a, "After the rename")
    assert record(a) == "memory" and on_branch(a, commit, "memory")
    code, doctor = call(capsys, "doctor", "--store", str(a), "--json")
    assert code == 0, doctor
    [finding] = [f for f in doctor["findings"] if f["path"] == MARKER]
    assert "memhtml init" in finding["message"]
    assert call(capsys, "init", str(a), "--json")[0] == 0
    assert 'branch = "memory"' in git(a, "show", f"memory:{MARKER}")


# -- no door writes a sleep run's branch -------------------------------------------------------


def test_every_way_of_naming_a_run_branch_is_refused(
        clones: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    remote, a, _ = clones
    run_branch = sleep_branch(capsys, a)
    before = local_branches(a)

    def refused(*tokens: str) -> str:
        code, answer = call(capsys, *tokens, "--json")
        assert code == 1, (tokens, answer)
        assert answer["code"] == "ERR_BRANCH_REFUSED", (tokens, answer)
        return str(answer["error"])

    write_tokens = ("write", "--title", "X", "--claim", "Y.", "--store", str(a))
    for name in (run_branch, "Sleep/2026-01-01", "sleep", "HEAD", "refs/tags/v1"):
        monkeypatch.setenv("MEMHTML_BRANCH", name)
        assert "MEMHTML_BRANCH" in refused(*write_tokens)
    monkeypatch.delenv("MEMHTML_BRANCH")
    assert "sleep run" in refused("mcp", "--branch", run_branch, "--store", str(a))

    git(a, "config", KEY, run_branch)
    said = refused(*write_tokens)
    assert f"git config {KEY}" in said and "--unset" in said
    git(a, "config", KEY, "main")
    assert local_branches(a) == before

    fresh = tmp_path / "fresh"
    refused("init", str(fresh), "--branch", "sleep/2026-01-01")
    assert git(fresh, "for-each-ref") == "" and not (fresh / ".memhtml").exists()
    on_run = tmp_path / "on-run"
    git(tmp_path, "init", "-q", "-b", "sleep/2026-01-01", str(on_run))
    refused("init", str(on_run))
    assert git(on_run, "for-each-ref") == "" and not (on_run / ".memhtml").exists()
    refused("clone", str(remote), str(tmp_path / "c"), "--branch", run_branch)
    assert not (tmp_path / "c").exists()


# -- the MCP server ---------------------------------------------------------------------------


def test_the_mcp_server_keeps_writing_its_clone_s_branch_while_it_pulls(
        clones: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Started after a hostile pull, and pulling another before each call, the server
    writes where its clone writes."""
    remote, a, b = clones
    run_branch = sleep_branch(capsys, a)
    push_files(b, {CONFIG: f'branch = "{run_branch}"\n'}, "before the server")
    sync(capsys, a)
    sync_env = {"MEMHTML_SYNC_REMOTE": "origin", "MEMHTML_SYNC_SECONDS": "0.01"}

    async def scenario(session: ClientSession) -> list[str]:
        commits = []
        for n, value in enumerate(("evil", run_branch, "HEAD")):
            push_files(b, {CONFIG: f'branch = "{value}"\n', MARKER: marker_naming(value)},
                       f"while serving {n}")
            await asyncio.sleep(0.05)
            written = data(await session.call_tool("memory_write", {
                "title": f"Served {n}", "claim": f"Served fact {n} holds."}))
            commits.append(str(written["commit"]))
            status = data(await session.call_tool("memory_status", {}))
            assert status["branch"] == "main", status
        return commits

    async def main() -> list[str]:
        async with served(a, sync_env) as session:
            return await scenario(session)

    commits = asyncio.run(asyncio.wait_for(main(), SCENARIO_TIMEOUT_S))
    assert all(on_branch(a, commit) for commit in commits)
    assert tip(a, run_branch) is not None and not any(
        on_branch(a, commit, run_branch) for commit in commits)
    sync(capsys, a)
    assert all(on_branch(remote, commit) for commit in commits)
