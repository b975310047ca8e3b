"""The warm path's reading of a command line: only ``recall`` and ``brief`` with the
options it knows become a request, each option read as the CLI reads it."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
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


def test_an_option_given_twice_goes_to_the_cold_command_which_refuses_it() -> None:
    for argv in (["recall", "x", "--limit", "3", "--limit=1"], ["recall", "x", "--json", "--json"],
                 ["brief", "--store", "/a", "--store=/b"],
                 ["recall", "--hook", "claude-code", "--hook=claude-code"]):
        assert _parsed(argv) is None, argv


def test_a_count_python_calls_a_digit_but_cannot_read_goes_to_the_cold_command() -> None:
    for value in ("\u00b2", "\u2460", "\u0663"):
        assert _parsed(["recall", "--limit", value, "x"]) is None
        assert _parsed(["brief", f"--items={value}"]) is None


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


def _server(path: Path, send: Callable[[socket.socket], None]) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.fspath(path))
    listener.listen(1)

    def serve() -> None:
        with contextlib.suppress(OSError):
            conn, _ = listener.accept()
            with conn:
                send(conn)

    threading.Thread(target=serve, daemon=True).start()
    return listener


def _trickle(conn: socket.socket) -> None:
    for _ in range(200):
        conn.sendall(b" ")
        time.sleep(0.05)


def _flood(conn: socket.socket) -> None:
    chunk = b"x" * 65536
    for _ in range(4096):
        conn.sendall(chunk)


@pytest.mark.parametrize("send", [_trickle, _flood])
def test_a_server_that_never_finishes_its_answer_is_given_up_on_in_time(
        monkeypatch: pytest.MonkeyPatch, send: Callable[[socket.socket], None]) -> None:
    monkeypatch.setattr(warm, "_TIMEOUT", 1.0)
    monkeypatch.setattr(warm, "ANSWER_MAX", 1024 * 1024)
    with tempfile.TemporaryDirectory(dir="/tmp") as where:
        path = Path(where) / "warm.sock"
        listener = _server(path, send)
        try:
            started = time.monotonic()
            assert warm._ask(path, {"op": "recall"}) is None
            assert time.monotonic() - started < 3
        finally:
            listener.close()


class _Full(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


def test_an_answer_that_cannot_be_written_is_one_line_on_stderr_as_cold_says_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(warm, "_socket_path", lambda _store: tmp_path / "warm.sock")
    monkeypatch.setattr(warm, "_ours", lambda _path: True)
    monkeypatch.setattr(warm, "_ask", lambda _path, _request: {"payload": {"text": "t"}})
    monkeypatch.setattr(sys, "stdout", _Full())
    assert warm._answered(warm._parsed(["brief"])) == 1  # type: ignore[arg-type]
    assert capsys.readouterr().err == (
        "memhtml: the output could not be written: [Errno 28] No space left on device\n")


@pytest.mark.parametrize("words", [[" "], [""], ["\t", "\u3000"]])
def test_blank_words_go_to_the_cold_command_which_asks_for_a_prompt(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, words: list[str]) -> None:
    asked: list[object] = []
    monkeypatch.setattr(warm, "_socket_path", lambda _store: tmp_path / "warm.sock")
    monkeypatch.setattr(warm, "_ours", lambda _path: True)
    monkeypatch.setattr(warm, "_ask", lambda _path, request: asked.append(request))
    assert warm._answered(warm._parsed(["recall", *words])) is None  # type: ignore[arg-type]
    assert asked == []
