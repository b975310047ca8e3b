"""``memhtml recall`` and ``brief`` answered by a running ``memhtml mcp`` over its local
socket: the same bytes the cold command prints, a commit made meanwhile seen, and a
declined or broken socket falling back to the cold command."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.warm_cli import memhtml

PROMPT = '{"prompt": "when is the team standup", "hook_event_name": "UserPromptSubmit"}'


def run(env: dict[str, str], *tokens: str, stdin: str = "", warm: str = "1"
        ) -> subprocess.CompletedProcess[str]:
    """The installed command as a hook runs it: a process of its own."""
    return subprocess.run([sys.executable, "-m", "memhtml", *tokens], input=stdin,
                          env={**env, "MEMHTML_WARM": warm}, capture_output=True, text=True,
                          timeout=120, check=False)


def _wait_for(path: Path, alive: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not path.is_socket():
        assert alive.poll() is None, alive.stderr.read() if alive.stderr else ""
        assert time.monotonic() < deadline, "the server made no socket"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("warm")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMHTML_")}
    env.update(HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "config"),
               MEMHTML_EMBEDDER="none", GIT_AUTHOR_NAME="Ada", GIT_AUTHOR_EMAIL="a@x.org",
               GIT_COMMITTER_NAME="Ada", GIT_COMMITTER_EMAIL="a@x.org")
    store = root / "store"
    done = memhtml("demo", "--dir", str(store), env=env)
    assert done.returncode == 0, done.stderr
    server = subprocess.Popen([sys.executable, "-m", "memhtml", "mcp", "--store", str(store)],
                              env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    sock = store / ".git" / "memhtml" / "warm.sock"
    try:
        _wait_for(sock, server)
        yield {"env": {**env, "MEMHTML_STORE": str(store)}, "store": store, "sock": sock,
               "server": server}
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.parametrize("tokens", [
    ("recall", "when", "is", "the", "team", "standup"),
    ("recall", "standup", "--json", "--limit", "2"),
    ("recall", "nothing", "about", "kubernetes", "helm", "charts"),
    ("brief",),
    ("brief", "--json", "--budget", "200", "--items", "3"),
])
def test_a_running_server_answers_what_the_cold_command_prints(
        served: dict[str, Any], tokens: tuple[str, ...]) -> None:
    warm = run(served["env"], *tokens, warm="only")
    cold = run(served["env"], *tokens, warm="0")
    assert warm.returncode == cold.returncode == 0, (warm.stderr, cold.stderr)
    assert warm.stdout == cold.stdout
    assert warm.stdout.strip()


@pytest.mark.parametrize(("tokens", "stdin"), [
    (("recall", "--hook", "claude-code"), PROMPT),
    (("brief", "--hook", "claude-code"), '{"hook_event_name": "SessionStart"}'),
    (("recall",), "when is the team standup"),
])
def test_hook_input_on_stdin_is_answered_the_same(
        served: dict[str, Any], tokens: tuple[str, ...], stdin: str) -> None:
    warm = run(served["env"], *tokens, stdin=stdin, warm="only")
    cold = run(served["env"], *tokens, stdin=stdin, warm="0")
    assert warm.returncode == cold.returncode == 0, (warm.stderr, cold.stderr)
    assert warm.stdout == cold.stdout


def test_what_the_warm_path_cannot_read_goes_to_the_cold_command_whole(
        served: dict[str, Any]) -> None:
    for stdin in ("not json", '{"no": "prompt"}', "[1, 2]"):
        done = run(served["env"], "recall", "--hook", "claude-code", stdin=stdin)
        assert done.returncode == 1
        assert "memhtml UserPromptSubmit hook:" in done.stderr
    usage = run(served["env"], "recall", "--limit", "0", "x")
    assert usage.returncode != 0 and "at least 1" in usage.stderr


def test_a_commit_made_meanwhile_is_in_the_next_warm_answer(served: dict[str, Any]) -> None:
    claim = "The quarterly zebrafish audit happens every Wednesday."
    wrote = memhtml("write", "--title", "Zebrafish audit", "--claim", claim,
                    env=served["env"])
    assert wrote.returncode == 0, wrote.stderr
    found = run(served["env"], "recall", "quarterly", "zebrafish", "audit", warm="only")
    assert found.returncode == 0, found.stderr
    assert "Zebrafish audit" in found.stdout


def test_other_settings_are_declined_and_answered_cold(served: dict[str, Any]) -> None:
    other = {**served["env"], "MEMHTML_EMBEDDER": "hashing"}
    declined = run(other, "recall", "standup", warm="only")
    assert declined.returncode == 1
    assert "no running server answered" in declined.stderr
    assert run(other, "recall", "standup").returncode == 0


def test_options_the_warm_path_does_not_know_run_cold(served: dict[str, Any]) -> None:
    for tokens in (("recall", "--help"), ("brief", "--branch", "main"),
                   ("recall", "standup", "--items", "2")):
        only, cold = (run(served["env"], *tokens, warm=w) for w in ("only", "0"))
        assert "no running server answered" not in only.stderr
        assert (only.returncode, only.stdout) == (cold.returncode, cold.stdout)


def test_a_stale_or_foreign_socket_is_not_trusted_and_a_new_server_takes_over(
        tmp_path: Path, served: dict[str, Any]) -> None:
    store = tmp_path / "copy"
    shutil.copytree(served["store"], store, ignore=shutil.ignore_patterns("warm.sock"))
    env = {**served["env"], "MEMHTML_STORE": str(store)}
    sock = store / ".git" / "memhtml" / "warm.sock"
    sock.write_text("not a socket")
    assert run(env, "recall", "standup", warm="only").returncode == 1
    sock.unlink()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(os.fspath(sock))
    stale.close()
    assert run(env, "recall", "standup", warm="only").returncode == 1
    assert run(env, "recall", "standup").returncode == 0
    server = subprocess.Popen([sys.executable, "-m", "memhtml", "mcp"], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while run(env, "brief", warm="only").returncode != 0:
            assert server.poll() is None
            assert time.monotonic() < deadline, "the new server did not take the socket"
            time.sleep(0.2)
    finally:
        assert server.stdin is not None
        server.stdin.close()  # the client hangs up: the server ends and takes its socket
        server.wait(timeout=60)
    assert not sock.exists()
    assert oct(os.stat(served["sock"]).st_mode & 0o777) == "0o600"


def test_memhtml_serve_answers_too_and_a_sigterm_stops_it_cleanly(
        tmp_path: Path, served: dict[str, Any]) -> None:
    from tests.integration.web.conftest import start_server

    store = tmp_path / "copy"
    shutil.copytree(served["store"], store, ignore=shutil.ignore_patterns("warm.sock"))
    env = {**served["env"], "MEMHTML_STORE": str(store)}
    app = start_server(store, env, tmp_path / "serve.log")
    sock = store / ".git" / "memhtml" / "warm.sock"
    try:
        _wait_for(sock, app.process)
        warm, cold = (run(env, "recall", "standup", warm=w) for w in ("only", "0"))
        assert warm.returncode == 0, warm.stderr
        assert warm.stdout == cold.stdout
    finally:
        app.process.terminate()
        code = app.process.wait(timeout=60)
    # Stopped, not killed by the signal: the gate closed and the socket went with it.
    assert code == 0
    assert not sock.exists()


def test_with_scopes_configured_the_cold_command_answers(
        tmp_path: Path, served: dict[str, Any]) -> None:
    """A spanning recall reads stores the server does not hold: it is declined and the
    cold command spans them."""
    config = Path(served["env"]["XDG_CONFIG_HOME"]) / "memhtml" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    team = tmp_path / "team"
    done = memhtml("init", str(team), env=served["env"])
    assert done.returncode == 0, done.stderr
    config.write_text(f'[scopes]\nteam = "{team}"\n')
    try:
        declined = run(served["env"], "recall", "standup", warm="only")
        assert declined.returncode == 1
        assert "no running server answered" in declined.stderr
        spanned = run(served["env"], "recall", "standup", "--json")
        assert spanned.returncode == 0, spanned.stderr
    finally:
        config.unlink()
    assert run(served["env"], "recall", "standup", warm="only").returncode == 0


@pytest.mark.parametrize("warm", ["1", "0"])
def test_no_stdin_and_an_odd_event_name_are_one_line_not_a_crash(
        served: dict[str, Any], warm: str) -> None:
    closed = subprocess.run(
        [sys.executable, "-m", "memhtml", "recall", "--hook", "claude-code"],
        env={**served["env"], "MEMHTML_WARM": warm}, stdin=None, capture_output=True,
        text=True, timeout=120, check=False, preexec_fn=lambda: os.close(0))
    assert closed.returncode == 1, closed.stderr
    assert "Traceback" not in closed.stderr and "no stdin" in closed.stderr
    odd = run(served["env"], "recall", "--hook", "claude-code", warm=warm,
              stdin='{"prompt": "checkout canary gate error rate", "hook_event_name": ["x"]}')
    assert odd.returncode == 0, odd.stderr
    assert '"hookEventName": "UserPromptSubmit"' in odd.stdout
