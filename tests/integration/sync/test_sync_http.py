"""A team's memory on one remote over smart HTTP: git's ``git-http-backend`` behind
lighttpd on loopback with basic auth (``http_git_server``), credentials from git's own
credential helper, a read-only member whose pushes the server refuses with 403, a
member with no credential at all, a remote whose hook declines every push, and one
whose history someone rewound.

Each member is a person on a machine of their own: the tests point
``GIT_CONFIG_GLOBAL`` at that member's config (identity and credential helper) before
running their commands, so git finds their credentials and no one else's."""

from __future__ import annotations

import asyncio
import os
import random
import string
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import ClientSession
from returns.io import IOResult
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.clock import ManualClock
from memhtml.adapters.git_remote import GitRemotes
from memhtml.compose import value_of
from memhtml.compose.services import open_services
from memhtml.compose.settings import Settings
from memhtml.contracts.errors import PushRejected, RemoteError
from memhtml.contracts.services import Progress
from memhtml.sync.door import (
    MAX_ROUNDS,
    ROUND_PAUSE_BASE_SECONDS,
    ROUND_PAUSE_CAP_SECONDS,
    sync,
)
from tests.integration.cli.cli_support import call, call_text
from tests.integration.mcp.mcp_support import SCENARIO_TIMEOUT_S, served
from tests.integration.sync.http_git_server import (
    READER,
    WRITER,
    HttpGitServer,
    git_config_for,
    http_git,  # noqa: F401  (the server fixture)
)
from tests.integration.sync.sync_support import (
    forced_updates,
    git,
    main_tree,
    memory_claims,
)

REPO_ROOT = Path(__file__).resolve().parents[3]


class Member:
    """One person: their git config (credentials included) and their stores."""

    def __init__(self, server: HttpGitServer, who: tuple[str, str] | None, home: Path,
                 monkeypatch: pytest.MonkeyPatch) -> None:
        self.config = git_config_for(server, who, home)
        self._monkeypatch = monkeypatch

    def __enter__(self) -> Member:
        self._monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(self.config))
        return self

    def __exit__(self, *_: object) -> None:
        return None


@pytest.fixture(autouse=True)
def _no_system_git(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def _ok(capsys: pytest.CaptureFixture[str], *tokens: str) -> dict[str, Any]:
    code, answer = call(capsys, *tokens, "--json")
    assert code == 0, answer
    return dict(answer)


def _write(capsys: pytest.CaptureFixture[str], store: Path, title: str) -> str:
    answer = _ok(capsys, "write", "--title", title, "--claim", f"{title} is remembered.",
                 "--store", str(store))
    return str(answer["path"])


def _tip(root: Path) -> str:
    return git(root, "rev-parse", "refs/heads/main").strip()


def _team(server: HttpGitServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
          capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, Member]:
    """The served repository, and the writer's store that published to it."""
    bare = server.create("store.git")
    writer = Member(server, WRITER, tmp_path / "writer-home", monkeypatch)
    store = tmp_path / "writer"
    with writer:
        _ok(capsys, "init", str(store))
        git(store, "remote", "add", "origin", server.url("store.git"))
        _write(capsys, store, "Deploy day")
        assert _ok(capsys, "sync", "--store", str(store))["pushed"] is True
    return bare, store, writer


def test_two_writers_clone_sync_and_push_over_http_with_a_credential_helper(
        http_git: HttpGitServer, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    bare, first, writer = _team(http_git, tmp_path, monkeypatch, capsys)
    second = tmp_path / "second"
    with writer:
        _ok(capsys, "clone", http_git.url("store.git"), str(second))
        lunch = _write(capsys, second, "Lunch")
        assert _ok(capsys, "sync", "--store", str(second))["pushed"] is True
        _write(capsys, first, "Rota")
        synced = _ok(capsys, "sync", "--store", str(first))
        assert synced["action"] == "merged" and synced["pushed"] is True, synced
        _ok(capsys, "sync", "--store", str(second))
    assert main_tree(first) == main_tree(second) == main_tree(bare)
    assert lunch in memory_claims(first)
    assert sorted(memory_claims(first).values()) == sorted(
        f"{t} is remembered." for t in ("Deploy day", "Lunch", "Rota"))
    assert forced_updates(bare) == []
    # The credential lives in the helper's file; no config of the clones holds it.
    for store in (first, second):
        assert WRITER[1] not in (store / ".git" / "config").read_text()


def test_a_read_only_member_pulls_and_is_told_once_that_the_push_was_refused(
        http_git: HttpGitServer, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    bare, store, writer = _team(http_git, tmp_path, monkeypatch, capsys)
    reader = Member(http_git, READER, tmp_path / "reader-home", monkeypatch)
    mine = tmp_path / "reader"
    with reader:
        _ok(capsys, "clone", http_git.url("store.git"), str(mine))
        # Nothing of the reader's to push: a pull like any other, no note.
        assert _ok(capsys, "sync", "--store", str(mine))["push_refused"] is None
        local = _write(capsys, mine, "Reader's own note")
        before = _tip(mine)
        served = _tip(bare)
        synced = _ok(capsys, "sync", "--store", str(mine))
    assert synced["pushed"] is False and synced["ok"] is True, synced
    said = synced["push_refused"]
    assert f"origin ({http_git.url('store.git')}) refused the push to main" in said, said
    assert "403" in said and "write access" in said and "Nothing was lost" in said, said
    assert _tip(bare) == served and _tip(mine) == before
    assert local in memory_claims(mine)

    with writer:
        news = _write(capsys, store, "Release freeze")
        _ok(capsys, "sync", "--store", str(store))
    with reader:
        code, out, _ = call_text(capsys, "sync", "--store", str(mine))
    assert code == 0, out
    assert "not pushed (read-only)" in out and news in memory_claims(mine)
    assert local in memory_claims(mine)


def test_no_credential_and_no_terminal_fails_at_once_and_never_asks(
        http_git: HttpGitServer, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Every way git could ask a person is set up to record that it was asked and then
    wait for an hour: GIT_ASKPASS, core.askPass and SSH_ASKPASS. The sync, run as its
    own process, must end with a clear error and none of them run."""
    _bare, _store, _writer = _team(http_git, tmp_path, monkeypatch, capsys)
    asked = tmp_path / "asked"
    askpass = tmp_path / "askpass.sh"
    askpass.write_text(f"#!/bin/sh\necho \"$@\" >> {asked}\nsleep 3600\n")
    askpass.chmod(0o755)
    nobody = Member(http_git, None, tmp_path / "nobody-home", monkeypatch)
    with nobody.config.open("a") as config:
        config.write(f"[core]\n\taskPass = {askpass}\n")
    store = tmp_path / "nobody"
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(nobody.config), "GIT_ASKPASS": str(askpass),
           "SSH_ASKPASS": str(askpass), "DISPLAY": ":0",
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT / "src"), str(REPO_ROOT)])}
    with nobody:
        _ok(capsys, "init", str(store))
        git(store, "remote", "add", "origin", http_git.url("store.git"))
    ran = subprocess.run([sys.executable, "-m", "memhtml", "sync", "--store", str(store),
                          "--json"], capture_output=True, text=True, env=env, timeout=120,
                         stdin=subprocess.DEVNULL, check=False)
    assert ran.returncode != 0, ran.stdout
    assert "terminal prompts disabled" in ran.stdout, ran.stdout
    assert "credential helper" in ran.stdout, ran.stdout
    assert not asked.exists()


def test_a_remote_whose_hook_declines_every_push_is_one_clear_error_and_loses_nothing(
        http_git: HttpGitServer, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    bare, store, writer = _team(http_git, tmp_path, monkeypatch, capsys)
    calls = tmp_path / "hook-calls"
    hook = bare / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\necho run >> {calls}\n"
                    "echo 'pushes are frozen during the audit' >&2\nexit 1\n")
    hook.chmod(0o755)
    served = _tip(bare)
    with writer:
        path = _write(capsys, store, "Written during the freeze")
        before = _tip(store)
        code, answer = call(capsys, "sync", "--store", str(store), "--json")
    assert code != 0 and answer["code"] == "ERR_PUSH_DECLINED", answer
    said = answer["error"]
    assert f"origin ({http_git.url('store.git')}) declined the push to main" in said, said
    assert "pre-receive hook declined" in said and "frozen during the audit" in said, said
    assert "Nothing was lost" in said
    # Declined is final: one push, not a round per retry.
    assert calls.read_text().splitlines() == ["run"]
    assert _tip(bare) == served and _tip(store) == before
    assert path in memory_claims(store)


def test_a_remote_rewound_behind_this_clone_is_refused_and_never_pushed_over(
        http_git: HttpGitServer, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    bare, store, writer = _team(http_git, tmp_path, monkeypatch, capsys)
    with writer:
        second = _write(capsys, store, "Second fact")
        _ok(capsys, "sync", "--store", str(store))
        pushed = _tip(bare)
        # Someone force-pushes the server's main back one commit.
        git(bare, "update-ref", "refs/heads/main", f"{pushed}~1")
        rewound = _tip(bare)
        third = _write(capsys, store, "Third fact")
        before = _tip(store)
        for _ in range(2):  # refused again, not only the first time
            code, answer = call(capsys, "sync", "--store", str(store), "--json")
            assert code != 0 and answer["code"] == "ERR_REMOTE_REWOUND", answer
            assert f"it was at {pushed[:12]} and now is at {rewound[:12]}" in answer["error"]
            assert _tip(bare) == rewound and _tip(store) == before
        assert {second, third} <= set(memory_claims(store))

        # The person decides the rewind was a mistake: a fetch by hand, then sync puts
        # the history back as a fast-forward.
        git(store, "fetch", "origin")
        assert _ok(capsys, "sync", "--store", str(store))["pushed"] is True
    assert _tip(bare) == _tip(store)
    # The server's own account: the one rewind was the person's, every sync update
    # a fast-forward.
    forced = forced_updates(bare)
    assert len(forced) == 1 and forced[0].startswith(f"{pushed[:12]} -> {rewound[:12]}"), forced


def test_a_remote_rewritten_onto_another_history_is_refused(
        http_git: HttpGitServer, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    bare, store, writer = _team(http_git, tmp_path, monkeypatch, capsys)
    with writer:
        pushed = _tip(bare)
        other = git(bare, "commit-tree", f"{pushed}^{{tree}}", "-m", "history rewritten")
        git(bare, "update-ref", "refs/heads/main", other.strip())
        before = _tip(store)
        code, answer = call(capsys, "sync", "--store", str(store), "--json")
    assert code != 0 and answer["code"] == "ERR_REMOTE_REWOUND", answer
    assert _tip(store) == before and _tip(bare) == other.strip()


SECRETS = st.text(alphabet=string.ascii_letters + string.digits + "-._~", min_size=12,
                  max_size=32)
"""A password as a person might paste one into a URL: long enough that it cannot turn
up in output by chance, in characters a URL carries unescaped."""


def test_a_password_in_a_url_never_reaches_any_output(
        http_git: HttpGitServer, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Every path a URL with a password can take to the person's screen: a clone of it
    (refused before git records it), a sync pushing to it as a member who may only
    read (the refusal names the URL), a sync with a wrong password in it."""
    _bare, _store, writer = _team(http_git, tmp_path, monkeypatch, capsys)
    mine = tmp_path / "mine"
    with writer:
        _ok(capsys, "clone", http_git.url("store.git"), str(mine))
    nobody = Member(http_git, None, tmp_path / "nobody-home", monkeypatch)
    counter = iter(range(10_000))

    @settings(max_examples=8, deadline=None)
    @given(secret=SECRETS)
    def law(secret: str) -> None:
        n = next(counter)
        member = (f"reader-{n}", secret)
        http_git.add_user(member)
        seen: list[str] = []
        with nobody:
            target = tmp_path / f"clone-{n}"
            code, out, err = call_text(capsys, "clone", http_git.url("store.git", member),
                                       str(target), "--json")
            assert code != 0 and "password or token" in out, out
            assert not target.exists() or not any(target.iterdir())
            seen += [out, err]

            git(mine, "remote", "set-url", "origin", http_git.url("store.git", member))
            _write(capsys, mine, f"Note {n}")
            code, out, err = call_text(capsys, "sync", "--store", str(mine), "--json")
            assert code == 0 and "refused the push" in out, out
            seen += [out, err]
            code, out, err = call_text(capsys, "sync", "--store", str(mine))
            assert code == 0 and "refused the push" in out + err, out + err
            seen += [out, err]

            git(mine, "remote", "set-url", "origin",
                http_git.url("store.git", ("writer", secret)))
            code, out, err = call_text(capsys, "sync", "--store", str(mine), "--json")
            assert code != 0 and "Authentication failed" in out, out
            seen += [out, err]
        leaked = [text for text in seen if secret in text]
        assert not leaked, leaked

    law()


class Interloper:
    """The real remote, with another member's real push landing just before each of
    this clone's first ``times`` pushes: the race a busy team runs, on cue."""

    def __init__(self, remotes: GitRemotes, other: Path, times: int) -> None:
        self._remotes = remotes
        self._other = other
        self.left = times

    def remotes(self) -> IOResult[tuple[str, ...], RemoteError]:
        return self._remotes.remotes()

    def fetch(self, remote: str, branch: str, on_progress: Progress | None = None
              ) -> IOResult[str | None, RemoteError]:
        return self._remotes.fetch(remote, branch, on_progress)

    def push(self, remote: str, branch: str, sha: str, expected: str | None,
             on_progress: Progress | None = None) -> IOResult[None, RemoteError]:
        if self.left > 0:
            self.left -= 1
            git(self._other, "pull", "--quiet", "--ff-only", "origin", "main")
            git(self._other, "commit", "--quiet", "--allow-empty", "-m", "meanwhile")
            git(self._other, "push", "--quiet", "origin", "HEAD:main")
        return self._remotes.push(remote, branch, sha, expected, on_progress)

    def point_head(self, remote: str, branch: str, sha: str
                   ) -> IOResult[str | None, RemoteError]:
        return self._remotes.point_head(remote, branch, sha)


@pytest.mark.parametrize("losses", [3, MAX_ROUNDS])
def test_a_push_lost_to_other_members_is_retried_a_bounded_number_of_times_with_jitter(
        losses: int, http_git: HttpGitServer, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    bare, store, writer = _team(http_git, tmp_path, monkeypatch, capsys)
    other = tmp_path / "other"
    clock = ManualClock(datetime(2030, 1, 1, tzinfo=UTC))
    with writer:
        git(tmp_path, "clone", "--quiet", http_git.url("store.git"), str(other))
        _write(capsys, store, "Raced")
        services = value_of(open_services(Settings(store=store), clock=clock))
        assert isinstance(services.remote, GitRemotes)
        racer = Interloper(services.remote, other, losses)
        outcome = sync(services.store(), racer, "origin", "main", rng=random.Random(7))
    sleeps = clock.sleeps
    ceilings = [min(ROUND_PAUSE_CAP_SECONDS, ROUND_PAUSE_BASE_SECONDS * 2 ** n)
                for n in range(len(sleeps))]
    assert all(0.0 <= s <= c for s, c in zip(sleeps, ceilings, strict=True)), sleeps
    assert len(set(sleeps)) == len(sleeps)  # drawn, not fixed
    if losses < MAX_ROUNDS:
        done = value_of(outcome)
        assert done.pushed and done.rounds == losses + 1 and len(sleeps) == losses
        assert _tip(bare) == _tip(store)
    else:
        error = unsafe_perform_io(outcome.failure())
        assert isinstance(error, PushRejected)
        assert len(sleeps) == MAX_ROUNDS - 1
    assert forced_updates(bare) == []


def test_an_mcp_server_of_a_read_only_member_pulls_and_says_once_it_cannot_push(
        http_git: HttpGitServer, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _bare, store, writer = _team(http_git, tmp_path, monkeypatch, capsys)
    reader = Member(http_git, READER, tmp_path / "reader-home", monkeypatch)
    mine = tmp_path / "reader"
    with reader:
        _ok(capsys, "clone", http_git.url("store.git"), str(mine))
    env = {"GIT_CONFIG_GLOBAL": str(reader.config), "GIT_CONFIG_NOSYSTEM": "1",
           "MEMHTML_SYNC_REMOTE": "origin", "MEMHTML_SYNC_SECONDS": "0.3"}
    said: list[str] = []

    async def notes_until(session: ClientSession, seen: Callable[[], bool]) -> None:
        """Calls, each reply's notes kept, until ``seen`` or the bound."""
        for _ in range(60):
            result = await session.call_tool("memory_status", {})
            said.extend(str(getattr(b, "text", "")) for b in result.content[1:])
            if seen():
                return
            await asyncio.sleep(0.2)

    async def scenario() -> None:
        async with served(mine, env) as session:
            await session.call_tool("memory_write", {
                "title": "Reader note", "claim": "Read-only members write locally.",
                "type": "semantic"})
            await notes_until(session, lambda: any("refused the push" in n for n in said))
            with writer:
                news = _write(capsys, store, "Team news")
                _ok(capsys, "sync", "--store", str(store))
            await session.call_tool("memory_write", {
                "title": "Second reader note", "claim": "Still only local.",
                "type": "semantic"})
            await notes_until(session, lambda: news in memory_claims(mine))

    asyncio.run(asyncio.wait_for(scenario(), SCENARIO_TIMEOUT_S))
    refusals = [note for note in said if "refused the push" in note]
    assert len(refusals) == 1, said
    assert "sync with origin" in refusals[0] and "403" in refusals[0], refusals
    assert not any("failed" in note for note in said), said
    claims = memory_claims(mine).values()
    assert "Read-only members write locally." in claims and "Still only local." in claims
