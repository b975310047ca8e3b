"""Exit codes as the README states them: 0 done, 1 refused or failed, 2 a usage error.

Every command and subcommand is walked from the app itself, so a command added later
is held to the same rule without touching this file. A usage error is found before
anything runs, so it never needs a store; the refusals and successes run against a
real store made by ``memhtml init``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cyclopts import App

from memhtml.cli.app import app
from tests.integration.cli.cli_support import call, call_text, git_log


def commands(group: App = app, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command line the app answers to, groups included, help and version left
    out (they are the parser's own)."""
    for name in group:
        if name.startswith("-"):
            continue
        sub = group[name]
        yield (*prefix, name)
        yield from commands(sub, (*prefix, name))


ALL = sorted(commands())


def usage(capsys: pytest.CaptureFixture[str], *tokens: str) -> tuple[int, str, str]:
    """A command line the parser or the command rejects: its exit code, stdout, stderr.
    The parser exits by itself; a command's own check returns its code."""
    capsys.readouterr()
    try:
        code = app(list(tokens), result_action="return_value")
    except SystemExit as exited:
        code = exited.code
    captured = capsys.readouterr()
    assert isinstance(code, int), code
    return code, captured.out, captured.err


def test_the_walk_finds_every_command() -> None:
    assert {("write",), ("task", "add"), ("md", "verify"), ("eval", "gate"),
            ("sleep", "merge"), ("import", "markdown"), ("mcp",)} <= set(ALL)
    assert len(ALL) >= 35


@pytest.mark.parametrize("command", ALL, ids=" ".join)
def test_an_unknown_option_is_a_usage_error(
        command: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = usage(capsys, *command, "--no-such-option")
    assert code == 2, (out, err)
    assert out == ""
    # The parser may name a missing required option first; either way it says where
    # to read the command's options.
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert f"`memhtml {' '.join(command)} --help`" in err, err


@pytest.mark.parametrize("command", ALL, ids=" ".join)
def test_an_unknown_option_under_json_answers_json(
        command: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = usage(capsys, *command, "--no-such-option", "--json")
    assert code == 2
    answer = json.loads(out)
    assert answer["ok"] is False and answer["code"] == "ERR_USAGE", answer
    assert f"`memhtml {' '.join(command)} --help`" in answer["error"], answer
    assert answer["violations"] == []
    assert err == ""


@pytest.mark.parametrize("tokens", [
    ("read",),
    ("correct",),
    ("archive",),
    ("link", "areas/a.html", "relates_to"),
    ("task", "status", "areas/tasks/t.html"),
    ("md", "query", "words"),
    ("md", "verify"),
    ("eval", "gate", "HEAD"),
    ("eval", "beir", "corpus.jsonl"),
    ("import", "markdown"),
], ids=" ".join)
def test_a_missing_argument_is_a_usage_error(
        tokens: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = usage(capsys, *tokens)
    assert code == 2 and err.startswith("error: "), err


@pytest.mark.parametrize("tokens", [
    ("write", "--type", "fact", "--title", "t", "--claim", "c"),
    ("read", "areas/a.html", "--tier", "everything"),
    ("task", "status", "areas/tasks/t.html", "finished"),
    ("md", "query", "words", "--root", ".", "--channel", "vector"),
    ("embed", "--embedder", "magic"),
    ("eval", "beir", "c", "q", "r", "--arm", "dense"),
    ("sleep", "run", "--phase", "defragment"),
    ("sleep", "run", "--max-llm-calls", "-1"),
    ("search", "words", "--limit", "many"),
], ids=" ".join)
def test_a_value_off_its_list_is_a_usage_error(
        tokens: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = usage(capsys, *tokens)
    assert code == 2, err
    assert err.startswith("error: ") and "--help` for usage" in err, err


def test_a_usage_error_names_the_valid_values(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = usage(capsys, "write", "--type", "fact", "--json")
    assert code == 2
    error = json.loads(out)["error"]
    for name in ("episodic", "semantic", "procedural", "task"):
        assert f'"{name}"' in error, error


def test_a_commands_own_usage_checks_exit_2(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the parser cannot see (one of several options needed, a value not in its
    form) is still a usage error, in text and in JSON, and nothing is written."""
    before = git_log(store)
    s = ("--store", str(store))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("---\nname: a\n---\nA note.\n", encoding="utf-8")
    cases = [
        ("write", "--title", "No claim", *s),
        ("write", "--claim", "No title.", *s),
        ("md", "verify", "--root", str(notes)),
        ("md", "verify", "--root", str(notes), "--coverage", "no-colon"),
        ("sleep", "merge", "not-a-run", *s),
        ("sleep", "review", "2026-13-45x", *s),
    ]
    for tokens in cases:
        code, out, err = usage(capsys, *tokens)
        assert code == 2, (tokens, out, err)
        assert err.startswith("error: "), (tokens, err)
        code, out, _ = usage(capsys, *tokens, "--json")
        assert code == 2, (tokens, out)
        answer = json.loads(out)
        assert (answer["ok"], answer["code"]) == (False, "ERR_USAGE"), answer
    assert git_log(store) == before


def test_done_is_0_and_refused_is_1(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = ("--store", str(store), "--json")
    code, landed = call(capsys, "write", "--title", "Deploys", "--claim",
                        "We deploy on Tuesdays.", *s)
    assert code == 0, landed
    path = landed["path"]
    done: list[tuple[str, ...]] = [("read", path), ("search", "deploy"), ("status",),
                                   ("log", path), ("related", path), ("task", "list"),
                                   ("sleep", "status")]
    for tokens in done:
        code, answer = call(capsys, *tokens, *s)
        assert code == 0, (tokens, answer)
    refused: list[tuple[str, ...]] = [
        ("read", "areas/inbox/never-written.html"),
        ("archive", "areas/inbox/never-written.html"),
        ("link", path, "relates_to", "/areas/inbox/never-written.html"),
        ("read", path, "--at", "no-such-ref"),
        ("eval", "gate", "no-such-ref", "HEAD"),
        ("sleep", "merge"),
    ]
    for tokens in refused:
        code, answer = call(capsys, *tokens, *s)
        assert code == 1, (tokens, answer)
        assert answer["ok"] is False and answer["code"].startswith("ERR_"), (tokens, answer)
        assert answer["code"] != "ERR_USAGE", (tokens, answer)


def test_md_verify_exits_0_clean_and_1_with_findings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("---\nname: a\n---\nThe deploy notes live in [[b]].\n",
                                encoding="utf-8")
    code, _, _ = call_text(capsys, "md", "verify", "--root", str(notes), "--frontmatter")
    assert code == 0
    code, answer = call(capsys, "md", "verify", "--root", str(notes), "--wikilinks", "--json")
    assert code == 1 and answer["findings"], answer
    assert (answer["ok"], answer["code"]) == (False, "ERR_FINDINGS")


def test_the_console_script_exits_with_the_code(tmp_path: Path) -> None:
    """The installed entry point, not only the app object: a usage error is 2 from a
    real process, a refusal 1, and ``--help`` 0."""
    def run(*tokens: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "memhtml.cli.app", *tokens],
                              capture_output=True, text=True, cwd=tmp_path, check=False)

    assert run("--help").returncode == 0
    unknown = run("write", "--no-such-option")
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: "), unknown.stderr
    missing = run("md", "verify", "--json")
    assert missing.returncode == 2 and json.loads(missing.stdout)["code"] == "ERR_USAGE"
    refused = run("md", "stats", "--root", str(tmp_path / "absent"), "--json")
    assert refused.returncode == 1, refused
    assert json.loads(refused.stdout)["ok"] is False
