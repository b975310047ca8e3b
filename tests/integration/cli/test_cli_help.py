"""Every registered command has help text and a --json form, and the README names it."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest
from cyclopts import App

from memhtml.cli import choices
from memhtml.cli.app import app
from memhtml.cli.common import Common

README = Path(__file__).resolve().parents[3] / "README.md"


def leaves(parent: App, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], App]]:
    for name in parent:
        if name.startswith("-"):
            continue
        child = parent[name]
        if child.default_command is not None:
            yield (*prefix, name), child
        yield from leaves(child, (*prefix, name))


COMMANDS = sorted(leaves(app), key=lambda item: item[0])


def test_the_command_list() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert names == {
        "init", "write", "correct", "archive", "link", "unlink", "label", "unlabel", "move",
        "restore", "list",
        "task add", "task status", "task list", "read", "search", "related", "status",
        "doctor", "log", "publish", "sync", "clone", "md query", "md verify", "md stats",
        "import markdown", "import mcp-memory", "import chatgpt", "import claude",
        "export markdown",
        "embed", "eval beir", "eval gate", "demo", "mcp", "serve", "brief", "recall", "capture",
        "hooks install", "hooks uninstall", "hooks show",
        "sleep run", "sleep resume", "sleep plan", "sleep status", "sleep review",
        "sleep merge", "sleep abort", "sleep reject",
    }


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_and_json(path: tuple[str, ...], command: App,
                       capsys: pytest.CaptureFixture[str]) -> None:
    function = command.default_command
    assert function is not None
    assert inspect.getdoc(function), f"{path} has no help text"
    parameters = inspect.signature(function).parameters
    assert parameters["common"].annotation in (Common, "Common")
    capsys.readouterr()
    app([*path, "--help"], result_action="return_value")
    shown = capsys.readouterr().out
    assert f"Usage: memhtml {' '.join(path)}" in shown
    assert "--json" in shown
    assert "--store" in shown


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_the_readme_covers_the_command(path: tuple[str, ...], command: App) -> None:
    assert f"memhtml {' '.join(path)}" in README.read_text(encoding="utf-8")


def test_the_parser_vocabularies_match_the_contracts() -> None:
    from memhtml.contracts.vocabulary import MEMORY_TYPES, TASK_STATUSES
    from memhtml.store.reads import TIERS

    assert get_args(choices.MemoryTypeName) == MEMORY_TYPES
    assert get_args(choices.TaskStatusName) == TASK_STATUSES
    assert set(get_args(choices.TierName)) == set(TIERS)
