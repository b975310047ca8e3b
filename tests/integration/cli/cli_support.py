"""Helpers for the CLI tests: call the app with tokens, read its JSON answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memhtml.cli.app import app


def call(capsys: pytest.CaptureFixture[str], *tokens: str) -> tuple[int, Any]:
    """Run one command in-process; its exit code and its stdout parsed as JSON."""
    capsys.readouterr()
    code = app(list(tokens), result_action="return_value")
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def call_text(capsys: pytest.CaptureFixture[str], *tokens: str) -> tuple[int, str, str]:
    """Run one command; its exit code, stdout and stderr as text."""
    capsys.readouterr()
    code = app(list(tokens), result_action="return_value")
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def usage_code(capsys: pytest.CaptureFixture[str], *tokens: str) -> int:
    """The exit code of a command line the parser rejects."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        app(list(tokens), result_action="return_value")
    capsys.readouterr()
    code = exited.value.code
    assert isinstance(code, int)
    return code


def git_log(root: Path) -> list[str]:
    import subprocess

    out = subprocess.run(["git", "log", "--format=%H %s"], cwd=root, check=True,
                         capture_output=True, text=True).stdout
    return out.splitlines()


def memhtml_process(store: Path, *tokens: str) -> subprocess.CompletedProcess[str]:
    """The command as a person runs it: a fresh ``python -m memhtml`` process (the
    console entry point, its own start-up and exit) on ``store``."""
    return subprocess.run([sys.executable, "-m", "memhtml", *tokens, "--store", str(store)],
                          capture_output=True, text=True, check=False, timeout=120)
