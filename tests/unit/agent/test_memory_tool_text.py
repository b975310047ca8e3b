"""The memory tool's text: its edits and answers equal the SDK's own file-system
handler's on the same file, and a path that could leave ``/memories`` is refused."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from memhtml.agent.memory_tool import (
    MAX_FILE_BYTES,
    VIEW_MAX_CHARS,
    file_size,
    inserted,
    numbered,
    replaced,
    tool_path,
)

PATH = "/memories/notes.md"
TEXT = st.text(alphabet="ab \n-#x", max_size=60)
PIECE = st.text(alphabet="ab \nx", min_size=1, max_size=6)


_TMP = tempfile.TemporaryDirectory()
_SDK = BetaLocalFilesystemMemoryTool(base_path=_TMP.name)
_FILE = Path(_TMP.name) / "memories" / "notes.md"


def _reference(text: str, command: dict[str, object]) -> tuple[str, str | None]:
    """What the SDK's handler answers and leaves in the file, on a real file."""
    _FILE.write_bytes(text.encode())
    try:
        answer = str(_SDK.call({"path": PATH, **command}))
    except ToolError as error:
        return str(error), None
    return answer, _FILE.read_bytes().decode()


@settings(max_examples=80, deadline=None)
@given(TEXT, PIECE, st.text(alphabet="ab \nyz", max_size=6))
def test_str_replace_answers_and_leaves_what_the_sdk_handler_does(
        text: str, old: str, new: str) -> None:
    answer, after = _reference(text, {"command": "str_replace", "old_str": old,
                                      "new_str": new})
    match replaced(PATH, text, old, new):
        case Success((mine, said)):
            assert (said, mine) == (answer, after)
        case Failure(refused):
            assert after is None
            assert refused.reason == answer


@settings(max_examples=80, deadline=None)
@given(TEXT, st.integers(-2, 12), st.text(alphabet="ab \nyz", max_size=8))
def test_insert_answers_and_leaves_what_the_sdk_handler_does(
        text: str, line: int, insert: str) -> None:
    answer, after = _reference(text, {"command": "insert", "insert_line": line,
                                      "insert_text": insert})
    match inserted(PATH, text, line, insert):
        case Success((mine, said)):
            assert (said, mine) == (answer, after)
        case Failure(refused):
            assert after is None
            assert refused.reason == answer


@settings(max_examples=100, deadline=None)
@given(TEXT, st.one_of(st.none(), st.tuples(st.integers(1, 8), st.integers(-1, 12))))
def test_view_numbers_lines_as_the_sdk_handler_does(
        text: str, view_range: tuple[int, int] | None) -> None:
    lines = text.split("\n")
    valid = view_range is None or (view_range[0] <= len(lines) and (
        view_range[1] == -1 or view_range[1] >= view_range[0]))
    mine = numbered(PATH, text, None if view_range is None else list(view_range))
    if not valid:
        assert isinstance(mine, Failure)
        assert "view_range" in mine.failure().reason
        return
    command: dict[str, object] = {"command": "view"}
    if view_range is not None:
        command["view_range"] = list(view_range)
    answer, _ = _reference(text, command)
    assert mine.unwrap() == answer


def test_a_long_view_is_cut_and_says_which_range_shows_the_rest() -> None:
    text = "\n".join(f"line {n} " + "x" * 80 for n in range(1, 2001))
    shown = numbered(PATH, text).unwrap()
    assert len(shown) <= VIEW_MAX_CHARS
    last = shown.splitlines()[-1]
    assert last.startswith("[") and "view_range [" in last
    first_hidden = int(last.split("view_range [")[1].split(",")[0])
    assert f"line {first_hidden - 1} " in shown and f"line {first_hidden} " not in shown


def test_an_edit_past_the_file_limit_is_refused() -> None:
    big = "y" * MAX_FILE_BYTES
    refused = replaced(PATH, "a x b", "x", big)
    assert isinstance(refused, Failure)
    assert str(MAX_FILE_BYTES) in refused.failure().reason
    assert isinstance(inserted(PATH, "a\n", 1, big), Failure)


def test_a_string_found_everywhere_in_a_file_at_the_limit_is_answered_at_once() -> None:
    text = "a\n" * (MAX_FILE_BYTES // 2 - 1)
    started = time.monotonic()
    refused = replaced(PATH, text, "a", "b")
    assert time.monotonic() - started < 2
    assert isinstance(refused, Failure)
    assert ", ".join(map(str, range(1, MAX_FILE_BYTES // 2))) in refused.failure().reason


@pytest.mark.parametrize("size", [0, 1, 512, 1023, 1024, 1536, 4096, 1 << 20, 5 << 20])
def test_sizes_are_written_as_the_sdk_listing_writes_them(size: int) -> None:
    from anthropic.lib.tools._beta_builtin_memory_tool import _format_file_size

    assert file_size(size) == _format_file_size(size)


ESCAPES = ["..", ".", "%2e%2e", "%2E%2e%2f", "a\\..", "\x00", ".git", ".memhtml", "", "\n"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["notes", "a", "b.md", "x y", "ü", *ESCAPES]), max_size=4),
       st.sampled_from(["/memories", "/memories/", "/memory", "memories", "/Memories",
                        "/memories/../memories"]))
def test_a_path_is_inside_the_store_or_refused(parts: list[str], root: str) -> None:
    raw = root.rstrip("/") + "/" + "/".join(parts) if parts else root
    checked = tool_path(raw)
    rest = raw[len("/memories"):].strip("/")
    segments = rest.split("/") if rest else []
    bad = (not (raw == "/memories" or raw.startswith("/memories/"))
           or any(p in ESCAPES for p in segments)
           or "%" in raw or "\\" in raw or "\x00" in raw or "\n" in raw)
    match checked:
        case Success(path):
            assert not bad, raw
            if path.is_root:
                assert not segments
                return
            for part in path.memory.split("/"):
                assert part not in ("", ".", "..") and not part.startswith(".")
            assert path.memory.endswith(".html")
        case Failure(refused):
            assert bad, (raw, refused.reason)
            assert refused.reason


def test_one_memory_answers_to_each_suffix_of_its_name() -> None:
    names = {tool_path(f"/memories/a/notes{suffix}").unwrap().memory
             for suffix in ("", ".md", ".MD", ".txt", ".markdown", ".html")}
    assert names == {"a/notes.html"}
    assert tool_path("/memories/a/notes.json").unwrap().memory == "a/notes.json.html"
