"""The functional core's seams: containers are run only at the edges, and a Python
caller gets a failure as a typed value with a line a person can read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from returns.io import IOFailure, IOSuccess
from returns.result import Failure, Success

import memhtml
from memhtml.compose import MemhtmlError, explain, perform, value_of
from memhtml.contracts.errors import GitFailure, InvalidMemory
from memhtml.store import Refused

SRC = Path(memhtml.__file__).parent
EDGES = ("cli", "mcp", "compose")
RUNS_IO = re.compile(r"\bunsafe_perform_io\b")


def test_io_is_run_only_at_the_edges() -> None:
    """``unsafe_perform_io`` appears in the CLI, the MCP server and the composition
    root, and nowhere in the core: pure rooms chain containers instead."""
    offenders = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if path.relative_to(SRC).parts[0] not in EDGES
        and RUNS_IO.search(path.read_text(encoding="utf-8"))
    )
    assert offenders == []


def test_value_of_gives_the_value() -> None:
    assert value_of(IOSuccess(3)) == 3


def test_value_of_raises_the_typed_error_with_every_violation() -> None:
    error = Refused("the memory was not written", ("title: empty", "claim: empty"))
    with pytest.raises(MemhtmlError) as raised:
        value_of(IOFailure(error))
    assert raised.value.error is error
    assert str(raised.value) == "the memory was not written: title: empty; claim: empty"


def test_perform_turns_an_io_result_into_a_plain_result() -> None:
    assert perform(IOSuccess("a")) == Success("a")
    failure = GitFailure("commit", "disk full")
    assert perform(IOFailure(failure)) == Failure(failure)


@pytest.mark.parametrize(("error", "line"), [
    (GitFailure("commit", "disk full"), "git commit failed: disk full"),
    (InvalidMemory("a.html", "bad", ("no mark", "no title")),
     "a.html is not a valid memory (2 violations): no mark; no title"),
    (Refused("no memory at x.html"), "no memory at x.html"),
])
def test_explain_reads_as_one_line(error: object, line: str) -> None:
    assert explain(error) == line
