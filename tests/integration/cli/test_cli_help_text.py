"""Every command's help shows its docstring's words as written: a word that looks
like markup (``<div>``, ``<mark>``, ``sleep/<YYYY-MM-DD>``, a code fence's backticks)
is a word like any other, and nothing is dropped or reordered."""

from __future__ import annotations

import inspect
import io
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
from cyclopts import App
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from memhtml.cli.app import app
from memhtml.cli.help_text import reflow

WIDE = 2000
"""Wide enough that no description wraps: each one is then a run of words on one line."""

_SECTION = re.compile(r"^Parameters\n-+$", re.MULTILINE)


def every_app(parent: App, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], App]]:
    """The root, each group and each command, from the app's own tree."""
    yield prefix, parent
    for name in parent:
        if not name.startswith("-"):
            yield from every_app(parent[name], (*prefix, name))


APPS = sorted(every_app(app), key=lambda item: item[0])


def described(command: App) -> str:
    """What the help describes the command with: the docstring's summary and
    description (above its Parameters section), or a group's own help."""
    function = command.default_command
    text = inspect.getdoc(function) if function is not None else command.help
    assert text, "no help text"
    return _SECTION.split(text)[0]


def parameter_texts(command: App) -> list[str]:
    """Each option's and argument's description, as the docstring (the function's
    Parameters section, or the attribute docstrings of a flattened dataclass) has it."""
    if command.default_command is None:  # a group: its help lists commands, no options
        return []
    arguments = command.assemble_argument_collection(parse_docstring=True)
    return [argument.parameter.help for argument in arguments
            if argument.parameter.help and argument.parameter.show is not False]


def words(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def shown_help(path: tuple[str, ...]) -> str:
    out = io.StringIO()
    app([*path, "--help"], console=Console(file=out, width=WIDE), result_action="return_value")
    return out.getvalue()


def test_every_command_group_and_the_root_is_walked() -> None:
    paths = {" ".join(path) for path, _ in APPS}
    assert {"", "correct", "sleep", "sleep run", "md query", "export markdown"} <= paths


@pytest.mark.parametrize(("path", "command"), APPS,
                         ids=[" ".join(path) or "memhtml" for path, _ in APPS])
def test_the_help_shows_the_docstring_as_written(path: tuple[str, ...], command: App) -> None:
    shown = words(shown_help(path))
    for text in [described(command), *parameter_texts(command)]:
        for paragraph in reflow(text).split("\n\n"):
            assert paragraph in shown, f"memhtml {' '.join(path)} --help lost: {paragraph}"


@pytest.mark.parametrize(("tokens", "written"), [
    (("correct", "--help"), ("<div>", "<mark>", "(```lang", "```)", "<ul><li>one</li></ul>")),
    (("sleep", "run", "--help"), ("sleep/<YYYY-MM-DD>",)),
    (("sleep", "--help"), ("sleep/<date>",)),
])
def test_markup_words_reach_the_terminal(tokens: tuple[str, ...], written: tuple[str, ...]) -> None:
    done = subprocess.run([sys.executable, "-m", "memhtml", *tokens], capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    shown = words(done.stdout)
    for word in written:
        assert word in shown, word


@given(st.text())
def test_reflow_keeps_every_word_in_order(text: str) -> None:
    assert reflow(text).split() == text.split()
