"""Helpers for the tests that run the real ``memhtml`` command beside a person's git:
an environment free of the developer's own settings, the command as a subprocess, and
what a person sees through ``git status``, ``git ls-tree`` and ``memhtml doctor``."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from memhtml.cli.app import app
from tests.integration import warm_cli

PERSON = ("-c", "user.name=Person", "-c", "user.email=person@example.org")


class LostWorkError(AssertionError):
    """A check of what the person sees failed: a write reverted or lost, a change staged
    that nobody made, a checkout left behind. Raised (rather than a plain assertion) by
    the checks an ``xfail(raises=LostWorkError)`` stands on, so a failure of the test's own
    set-up still fails the test."""


def clean_env(home: Path) -> dict[str, str]:
    """The environment minus a developer's ``MEMHTML_*`` settings and their user config
    (``home`` stands in for it), with git's identity and system config pinned. The
    suite's ``MEMHTML_EMBEDDER`` stays (tests/conftest.py: lexical unless asked)."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("MEMHTML_", "GIT_")) or name == "MEMHTML_EMBEDDER"}
    home.mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="Person",
               GIT_AUTHOR_EMAIL="person@example.org", GIT_COMMITTER_NAME="Person",
               GIT_COMMITTER_EMAIL="person@example.org", OPENBLAS_NUM_THREADS="1")
    return env


def memhtml(env: dict[str, str], *tokens: str, timeout: float = 60
            ) -> subprocess.CompletedProcess[str]:
    """The ``memhtml`` command line as its own process (``python -m memhtml``), forked
    from a warm interpreter started under ``env`` (``warm_cli``)."""
    return warm_cli.memhtml(*tokens, env=env, timeout=timeout)


def git(root: Path, env: dict[str, str], *args: str, check: bool = True
        ) -> subprocess.CompletedProcess[str]:
    """A person's git in ``root``."""
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} exited {done.returncode}:\n"
                             f"{done.stdout}{done.stderr}")
    return done


def porcelain(root: Path, env: dict[str, str]) -> list[str]:
    """``git status --porcelain`` lines (untracked files listed one by one)."""
    out = git(root, env, "status", "--porcelain", "--untracked-files=all").stdout
    return [line for line in out.splitlines() if line]


def tree(root: Path, env: dict[str, str], rev: str = "HEAD") -> dict[str, str]:
    """Every path of ``rev``'s tree and its mode and blob (``<mode> <blob>``)."""
    out = git(root, env, "ls-tree", "-r", "--full-tree", rev).stdout
    found: dict[str, str] = {}
    for line in out.splitlines():
        meta, path = line.split("\t", 1)
        mode, _, blob = meta.split(" ")
        found[path] = f"{mode} {blob}"
    return found


def rev(root: Path, env: dict[str, str], name: str = "HEAD") -> str:
    return git(root, env, "rev-parse", name).stdout.strip()


def checkout_findings(root: Path) -> list[dict[str, str]]:
    """``memhtml doctor --json``'s findings of kind ``checkout``.

    Run in this process (the app called with tokens, as the CLI tests do): doctor only
    reads, and a fresh interpreter per call would double the crash suite's run time.
    The caller's environment must be clean of the developer's own settings
    (``clean_environment``)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = app(["doctor", "--store", str(root), "--json"], result_action="return_value")
    try:
        answer = json.loads(out.getvalue())
    except ValueError as exc:
        raise AssertionError(f"doctor printed no JSON (exit {code}):\n{out.getvalue()}"
                             f"{err.getvalue()}") from exc
    findings: list[dict[str, str]] = answer.get("findings", [])
    return [f for f in findings if f.get("kind") == "checkout"]


def clean_environment(monkeypatch: pytest.MonkeyPatch, home: Path) -> dict[str, str]:
    """This process's environment made as clean as ``clean_env``'s (for the in-process
    doctor); the environment for subprocesses."""
    env = clean_env(home)
    for name in list(os.environ):
        if name not in env:
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def hand_commit(root: Path, env: dict[str, str], path: str, text: str, message: str) -> None:
    """A person writes ``path``, stages it and commits the index, as plain git does (not
    ``git commit -- path``, whose index built from HEAD would hide a stale one)."""
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    git(root, env, "add", "--", path)
    git(root, env, *PERSON, "commit", "-q", "-m", message)
