"""The shortcuts the parse takes on every file, each held to the longer way it skips.

Each shortcut answers "is there anything to do here?" before the full work runs, so
each is tested on the question alone: wherever the full work would find something,
the shortcut must say so too."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from memhtml.format import check_memory
from memhtml.format.datetimes import _is_valid_short, is_valid_datetime
from memhtml.format.limits import MAX_START_TAGS, bounds_violations
from memhtml.format.tree import (
    _CLOSED_BY,
    _CLOSES_P,
    _PARSER,
    HtmlElement,
    _has_implied_close,
    parse_html,
    tag_of,
)

_TAGS = ["p", "dd", "dt", "li", "ul", "dl", "div", "figure", "pre", "span", "b", "table",
         "section", "h2", "mark"]


def _closable_pairs(root: HtmlElement) -> int:
    """What the repair loop looks for, asked the way it asks: every element named in
    its walk whose parent a browser would have closed before opening it."""
    found = 0
    for el in root.iter("dd", "dt", "li", *_CLOSES_P):
        parent = el.getparent()
        if parent is None:
            continue
        tag = tag_of(el)
        if tag_of(parent) in _CLOSED_BY.get(tag, ()) or (tag in _CLOSES_P and
                                                           tag_of(parent) == "p"):
            found += 1
    return found


def _raw(markup: str) -> HtmlElement:
    """libxml2's tree before any repair."""
    root = etree.fromstring(f"<html><body><article>{markup}</article></body></html>".encode(),
                            _PARSER)
    assert root is not None
    return root


@given(st.lists(st.tuples(st.sampled_from(_TAGS), st.booleans()), max_size=10))
def test_implied_close_check_sees_every_pair_the_repair_would_move(
        tags: list[tuple[str, bool]]) -> None:
    markup = "".join(f"<{tag}>x" + (f"</{tag}>" if closed else "") for tag, closed in tags)
    root = _raw(markup)
    assert _has_implied_close(root) == (_closable_pairs(root) > 0)


def test_implied_close_check_on_the_cases_a_browser_repairs() -> None:
    # libxml2 nests these; a browser closes the first element before the second opens
    for markup in ("<dl><dt>a<dd>b<dd>c</dl>", "<p>a<figure>f</figure>"):
        assert _has_implied_close(_raw(markup)), markup
    # libxml2 already closes these itself, or nothing needs closing
    for markup in ("<ul><li>a<li>b</ul>", "<p>a<p>b", "<p>a <b>b</b></p>", "<pre>x</pre>",
                   "<ul><li>a<ul><li>b</ul></ul>"):
        assert not _has_implied_close(_raw(markup)), markup


def test_a_parsed_tree_has_nothing_left_to_close() -> None:
    root, _ = parse_html("<!doctype html><html><head><title>t</title></head><body><article>"
                         "<dl><dt>a<dt>b<dd>1<dd>2</dl><p>x<figure>f</figure><ul><li>a<li>b"
                         "</ul></article></body></html>")
    assert root is not None
    assert not _has_implied_close(root)
    assert _closable_pairs(root) == 0


@given(st.text(alphabet="0123456789-:TZ ", max_size=24) | st.text(max_size=30))
def test_datetime_length_rule_agrees_with_the_full_check(value: str) -> None:
    # The length gate in front of the cache must refuse only what the check refuses.
    assert is_valid_datetime(value) == _is_valid_short.__wrapped__(value)


def test_datetime_forms_still_judged() -> None:
    assert is_valid_datetime("2026-01-31")
    assert is_valid_datetime("2026-01-31T23:59:59Z")
    assert not is_valid_datetime("2026-02-30")
    assert not is_valid_datetime("2026-01-31T24:00:00Z")
    assert not is_valid_datetime("0000-01-01")
    assert not is_valid_datetime("2026-01-31 ")
    assert not is_valid_datetime("２０２６-01-31")


def test_start_tag_bound_counts_tags_not_angle_brackets() -> None:
    brackets = b"<p>" + b"1 < 2, " * (MAX_START_TAGS * 2) + b"</p>"
    assert bounds_violations(brackets) == ()
    tags = b"<b>x</b>" * (MAX_START_TAGS + 1)
    (found,) = bounds_violations(tags)
    assert f"{MAX_START_TAGS + 1:,} start tags" in found
    exactly = b"<b>x</b>" * MAX_START_TAGS
    assert bounds_violations(exactly) == ()


def test_plain_elements_skipped_by_the_safety_loop_still_warn_when_they_should() -> None:
    html = ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<title>T</title>\n<meta name=\"memhtml-type\" content=\"semantic\">\n"
            "<meta name=\"memhtml-status\" content=\"active\">\n"
            "<meta name=\"memhtml-created\" content=\"2026-01-01T00:00:00Z\">\n"
            "<meta name=\"memhtml-updated\" content=\"2026-01-01T00:00:00Z\">\n</head>\n"
            "<body>\n<article>\n<p><mark>A claim.</mark> <span>s</span> <blink>b</blink></p>\n"
            "<figure><div>d</div></figure>\n</article>\n</body>\n</html>\n")
    result = check_memory(html)
    assert result.violations == ()
    assert result.warnings == ("vocabulary: <span> outside a <figure>",
                               "vocabulary: <blink> is not in the memory vocabulary")
