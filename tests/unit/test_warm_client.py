"""The warm path's reading of a command line: only ``recall`` and ``brief`` with the
options it knows become a request, each option read as the CLI reads it."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhtml.cli import warm
from memhtml.cli.warm import _parsed

TOKENS = st.sampled_from(["recall", "brief", "--json", "--store", "/s", "--hook",
                          "claude-code", "--limit", "3", "0", "--budget", "--items",
                          "--branch", "main", "words", "--help", "--store=/t", "-x"])


@given(st.lists(TOKENS, max_size=8))
def test_a_request_is_made_only_of_what_the_cli_would_read_the_same(argv: list[str]) -> None:
    found = _parsed(argv)
    if found is None:
        return
    assert argv[0] == found["op"]
    assert not any(t in argv for t in ("--branch", "--help", "-x", "0"))
    assert all(v >= 1 for k, v in found.items() if k in ("limit", "budget", "items"))
    if found["op"] == "brief":
        assert "--limit" not in argv and not found["words"]
    else:
        assert "--items" not in argv
    if found["hook"]:
        assert not found["json"] and not found["words"]


def test_the_usual_hook_lines_are_requests() -> None:
    assert _parsed(["recall", "--hook", "claude-code", "--store", "/s"]) == {
        "op": "recall", "limit": 5, "budget": 800, "json": False, "hook": True,
        "store": "/s", "words": []}
    assert _parsed(["brief", "--store=/s", "--budget", "200"])["budget"] == 200  # type: ignore[index]
    assert _parsed(["recall", "deploy", "window", "--json"])["words"] == [  # type: ignore[index]
        "deploy", "window"]
    assert _parsed(["recall", "--hook", "gemini"]) is None
    assert _parsed(["write", "x"]) is None


def _stdin(data: bytes, errors: str) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BufferedReader(io.BytesIO(data)), encoding="utf-8",
                            errors=errors, newline="\n")


@pytest.mark.parametrize(("data", "errors"), [
    (b"standup " + "\u00e9".encode() * (2 * 1024 * 1024 + 100), "strict"),
    (b"standup \xff team\r\n", "surrogateescape"),
])
def test_stdin_the_warm_path_gives_back_reads_as_the_cold_command_would_find_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data: bytes, errors: str) -> None:
    expected = _stdin(data, errors).read()
    monkeypatch.setattr(sys, "stdin", _stdin(data, errors))
    monkeypatch.setattr(warm, "_socket_path", lambda _store: tmp_path / "warm.sock")
    monkeypatch.setattr(warm, "_ours", lambda _path: True)
    monkeypatch.setattr(warm, "_ask", lambda _path, _request: None)
    assert warm._answered(warm._parsed(["recall", "--json"])) is None  # type: ignore[arg-type]
    assert sys.stdin.read() == expected
