"""The global options (``Common``'s: ``--store``, ``--json``) go before the command as
well as after it: ``memhtml --store DIR status`` is ``memhtml status --store DIR``."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from memhtml.cli.app import app, run
from memhtml.cli.command_line import FLAGS, VALUED, read_command_line
from tests.integration.cli.cli_support import call
from tests.integration.cli.test_cli_help import COMMANDS


def run_json(capsys: pytest.CaptureFixture[str], tokens: list[str]) -> tuple[object, Any]:
    """The command line as ``main`` hands it on; its result and its JSON answer."""
    capsys.readouterr()
    code = run(tokens)
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def usage_error(capsys: pytest.CaptureFixture[str], tokens: list[str]) -> tuple[int, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        run(tokens)
    captured = capsys.readouterr()
    assert isinstance(exited.value.code, int)
    return exited.value.code, captured.out + captured.err


@pytest.fixture
def filled(store: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    code, answer = call(capsys, "write", "--title", "Deploy window", "--claim",
                        "Deploys happen on Tuesdays.", "--store", str(store), "--json")
    assert code == 0, answer
    return store


@pytest.mark.parametrize(("typed", "parsed"), [
    (["--store", "S", "status"], ["status", "--store", "S"]),
    (["--store=S", "--json", "status"], ["status", "--store=S", "--json"]),
    (["--json", "sleep", "--store", "S", "run", "--dry-run"],
     ["sleep", "run", "--json", "--store", "S", "--dry-run"]),
    (["--no-json", "search", "deploy", "window"], ["search", "--no-json", "deploy", "window"]),
    # A value that reads like a command is the option's value, and the command follows.
    (["--store", "status", "status"], ["status", "--store", "status"]),
    # After the command's own tokens begin, nothing moves.
    (["search", "deploy", "--store", "S"], ["search", "deploy", "--store", "S"]),
    (["write", "--body", "--json"], ["write", "--body", "--json"]),
    (["search", "--", "--json"], ["search", "--", "--json"]),
    # At the root or a group, they go last: --help still helps, a wrong name is named.
    (["--store", "S", "--help"], ["--help", "--store", "S"]),
    (["--json", "sleep", "--help"], ["sleep", "--help", "--json"]),
    (["--json", "bogus"], ["bogus", "--json"]),
    (["--store", "S", "--", "status"], ["--", "status", "--store", "S"]),
])
def test_where_the_global_options_go(typed: list[str], parsed: list[str]) -> None:
    assert read_command_line(app, typed).tokens() == parsed


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_takes_the_global_options(path: tuple[str, ...], command: object) -> None:
    out = io.StringIO()
    app([*path, "--help"], console=Console(file=out, width=400), result_action="return_value")
    shown = out.getvalue().split()
    assert set(shown) >= VALUED | FLAGS


LINES = (("status",), ("sleep", "status"), ("search", "deploy", "window"), ("log", "x.html"))


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.sampled_from(LINES), data=st.data())
def test_the_global_options_mean_the_same_wherever_they_stand(
        filled: Path, capsys: pytest.CaptureFixture[str], line: tuple[str, ...],
        data: st.DataObject) -> None:
    # The store is only read here, so one store serves every example.
    store = data.draw(st.sampled_from([["--store", str(filled)], [f"--store={filled}"]]))
    options = data.draw(st.permutations([store, ["--json"]]))
    # Each option's place: before the command, between a group and its command, or
    # after the command (before, between or after its own tokens).
    slots = [data.draw(st.integers(0, len(line))) for _ in options]
    typed: list[str] = []
    for at in range(len(line) + 1):
        typed += [token for option, slot in zip(options, slots, strict=True) if slot == at
                  for token in option]
        typed += line[at:at + 1]
    assert run_json(capsys, typed) == run_json(capsys, [*line, "--store", str(filled), "--json"])


def test_an_unknown_option_before_the_command_is_still_a_usage_error(
        filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, said = usage_error(capsys, ["--store", str(filled), "--bogus", "status"])
    assert code == 2
    assert '"--bogus"' in said
    code, said = usage_error(capsys, ["--store", str(filled), "status", "--bogus"])
    assert code == 2
    assert "--bogus" in said
    code, said = usage_error(capsys, ["--json", "status", "--store"])
    assert code == 2
    assert json.loads(said)["code"] == "ERR_USAGE"


@pytest.mark.parametrize("typed", [["--json"], ["--store", "S"], ["--json", "sleep"],
                                   ["sleep", "--store=S"]])
def test_global_options_without_a_command_are_a_usage_error(
        typed: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, said = usage_error(capsys, typed)
    assert code == 2
    assert "A command is needed" in said
    if "--json" in typed:
        assert json.loads(said)["code"] == "ERR_USAGE"


def test_the_console_command_takes_them_first(filled: Path) -> None:
    def memhtml(*tokens: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "memhtml", *tokens], capture_output=True,
                              text=True, check=False, timeout=120)

    done = memhtml("--store", str(filled), "--json", "search", "deploy", "window")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hits"][0]["path"] == "areas/inbox/deploy-window.html"
    done = memhtml(f"--store={filled}", "sleep", "status")
    assert done.returncode == 0, done.stderr
    done = memhtml("--store", str(filled), "--bogus", "status")
    assert done.returncode == 2
    assert 'Unknown command "--bogus"' in done.stderr
