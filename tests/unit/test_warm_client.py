"""The warm path's reading of a command line: only ``recall`` and ``brief`` with the
options it knows become a request, each option read as the CLI reads it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

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
