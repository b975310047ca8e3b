"""Portable names: every class a new path is refused for, generated, each with its reason
named, and the near misses that must pass.

The laws: a segment of at most 255 UTF-8 bytes and a path of at most 4,096 pass the
length rules and one byte more does not; a Windows device stem refuses its segment in
any case, with any extension; ``check_store_path`` (what a read may name) accepts
everything ``check_portable_path`` accepts.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from returns.result import Failure, Success

from memhtml.contracts.paths import (
    MAX_PATH_BYTES,
    MAX_SEGMENT_BYTES,
    check_portable_path,
    check_store_path,
    check_tree_path,
    is_reserved_name,
    path_key,
)

DEVICES = ("CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
           *(f"{port}{n}" for port in ("COM", "LPT") for n in "123456789\u00b9\u00b2\u00b3"))
FORBIDDEN = '<>:"|?*'

# Name characters a file system holds, one to four UTF-8 bytes each, none of them a
# separator, a control character or one of Windows' forbidden seven.
_PLAIN = st.sampled_from("abcxyz019-_")
_WIDE = st.sampled_from("\u00e9\u00df\u0436\u4e2d\u6587\U0001f600\U00010348")
name_chars = st.one_of(_PLAIN, _WIDE)


def refused(path: str, *words: str) -> str:
    result = check_portable_path(path)
    assert isinstance(result, Failure), (path, result)
    reason: str = result.failure().reason
    for word in words:
        assert word in reason, (path, reason)
    return reason


def accepted(path: str) -> None:
    assert check_portable_path(path) == Success(path)
    assert check_store_path(path) == Success(path)


def _fill(prefix: str, size: int, char: str) -> str:
    """``prefix`` padded with ``char`` to exactly ``size`` UTF-8 bytes (pads the rest
    with ASCII when ``char`` does not divide it)."""
    room = size - len(prefix.encode())
    width = len(char.encode())
    return prefix + char * (room // width) + "a" * (room % width)


@given(char=name_chars)
def test_a_segment_of_255_bytes_passes_and_256_does_not(char: str) -> None:
    name = _fill("", MAX_SEGMENT_BYTES - len(b".html"), char) + ".html"
    assert len(name.encode()) == MAX_SEGMENT_BYTES
    accepted(f"areas/{name}")
    longer = _fill("", MAX_SEGMENT_BYTES + 1 - len(b".html"), char) + ".html"
    refused(f"areas/{longer}", "256 bytes", "255-byte")
    # The read side refuses it too: no checkout could hold the name.
    assert isinstance(check_store_path(f"areas/{longer}"), Failure)


@given(char=name_chars, width=st.integers(min_value=1, max_value=MAX_SEGMENT_BYTES))
def test_a_path_of_4096_bytes_passes_and_4097_does_not(char: str, width: int) -> None:
    folders = (MAX_PATH_BYTES - 6) // (width + 1)
    head = ("a" * width + "/") * folders
    room = MAX_PATH_BYTES - len(head)
    assume(len(b"x.html") <= room <= MAX_SEGMENT_BYTES)
    exact = head + _fill("", room - len(b".html"), char) + ".html"
    assert len(exact.encode()) == MAX_PATH_BYTES
    accepted(exact)
    over = head + _fill("", room + 1 - len(b".html"), char) + ".html"
    refused(over, "4097 bytes", "4096-byte")
    assert isinstance(check_store_path(over), Failure)


def _random_case(word: str, flips: list[bool]) -> str:
    return "".join(c.lower() if flip else c for c, flip in zip(word, flips, strict=False))


@given(device=st.sampled_from(DEVICES), flips=st.lists(st.booleans(), min_size=7, max_size=7),
       extension=st.sampled_from(["", ".html", ".d", ".tar.gz", ".HTML", "  .txt"]),
       where=st.sampled_from(["{}", "areas/{}/x.html", "a/b/{}"]))
def test_every_device_name_is_refused_in_any_case_with_any_extension(
        device: str, flips: list[bool], extension: str, where: str) -> None:
    segment = _random_case(device, flips) + extension
    assert is_reserved_name(segment)
    refused(where.format(segment), "Windows device name", device.upper())


@pytest.mark.parametrize("name", [
    "con2.html", "aux-notes.html", "null.html", "com10.html", "lpt0.html", "console.html",
    "prn_x.html", "x.con", "a.nul.html", "com.html", "lpt.html", "com\u2074.html",
    "conin.html", "nul-d/x.html",
])
def test_near_misses_of_device_names_pass(name: str) -> None:
    accepted(f"areas/{name}")


def test_a_device_name_as_a_directory_is_refused() -> None:
    refused("nul.d/x.html", "NUL")
    refused("areas/Aux/x.html", "AUX")
    refused("areas/con .html", "CON")


@given(prefix=st.text(name_chars, min_size=1, max_size=8), end=st.sampled_from(". "),
       where=st.sampled_from(["{}", "areas/{}/x.html"]))
def test_a_name_ending_in_a_dot_or_a_space_is_refused(prefix: str, end: str, where: str
                                                      ) -> None:
    refused(where.format(prefix + end), "dot" if end == "." else "space")


@given(char=st.sampled_from(FORBIDDEN), left=st.text(name_chars, max_size=5),
       right=st.text(name_chars, max_size=5))
def test_each_forbidden_character_is_refused(char: str, left: str, right: str) -> None:
    refused(f"areas/{left}{char}{right}.html", char, "Windows")


@given(flips=st.lists(st.booleans(), min_size=8, max_size=8),
       rest=st.sampled_from(["", "/x.html", "/deep/x.html"]))
def test_the_state_directory_is_refused_in_any_case(flips: list[bool], rest: str) -> None:
    state = "." + _random_case("MEMHTML", flips[1:])
    refused(state + rest, ".memhtml/", "state directory")


def test_the_exact_state_directory_is_refused_for_reads_but_other_cases_are_not() -> None:
    # A read names what exists: ``.MEMHTML/x.html`` could be a memory a Linux clone
    # committed, and it must stay readable; ``.memhtml/`` never holds one.
    assert isinstance(check_store_path(".memhtml/x.html"), Failure)
    assert check_store_path(".MEMHTML/x.html") == Success(".MEMHTML/x.html")
    assert check_store_path("areas/con.html") == Success("areas/con.html")
    assert check_store_path("areas/a:b.html") == Success("areas/a:b.html")
    # Not at the root, .memhtml is only a name.
    accepted("areas/.memhtml/x.html")


@pytest.mark.parametrize("path", ["/etc/passwd", "a/../b.html", "a\\b.html", ".git/config",
                                  "a//b.html", "x/.GIT/y"])
def test_the_tree_rules_still_come_first(path: str) -> None:
    assert isinstance(check_tree_path(path), Failure)
    assert check_portable_path(path).failure() == check_tree_path(path).failure()


@given(path=st.lists(st.text(name_chars, min_size=1, max_size=12), min_size=1, max_size=6)
       .map("/".join))
def test_a_read_accepts_whatever_a_new_name_may_be(path: str) -> None:
    if isinstance(check_portable_path(path), Success):
        assert check_store_path(path) == Success(path)


@given(name=st.text(st.sampled_from("aeouAEOUcC\u0301\u0308\u0327"), min_size=1, max_size=10))
def test_the_fold_key_ignores_case_and_normalization(name: str) -> None:
    nfc, nfd = unicodedata.normalize("NFC", name), unicodedata.normalize("NFD", name)
    assert path_key(nfc) == path_key(nfd) == path_key(nfd.upper()) == path_key(nfc.lower())
    assert path_key(path_key(name)) == path_key(name)


def test_leading_segments_that_exist_are_not_judged_again() -> None:
    # A directory the tree already has is not a new name; what follows it is.
    assert check_portable_path("areas/con/x.html", existing=2) == Success("areas/con/x.html")
    assert isinstance(check_portable_path("areas/con/x.html", existing=1), Failure)
    assert isinstance(check_portable_path("areas/con/nul.html", existing=2), Failure)
    # The state directory and the length limits hold whatever exists.
    assert isinstance(check_portable_path(".MEMHTML/x.html", existing=1), Failure)
    assert isinstance(check_portable_path("a/" + "b" * 256 + "/x.html", existing=2), Failure)
