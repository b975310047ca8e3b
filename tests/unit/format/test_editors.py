"""The head editors, by example: each failure the regex splicer had, and the
behaviour every caller relies on (in-place replacement, META_ORDER insertion,
idempotence, whole-line cuts, refusal by returning the input)."""

from __future__ import annotations

import pytest

from memhtml.contracts.record import Link
from memhtml.format import (
    add_link,
    add_meta,
    content_hash,
    read_links,
    read_meta,
    remove_link,
    remove_meta,
    set_meta,
)

FILE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>@@TITLE@@</title>
@@HEAD@@<meta name="memhtml-type" content="semantic">
<meta name="memhtml-status" content="active">
<meta name="memhtml-created" content="2026-01-09T09:09:09Z">
<meta name="memhtml-updated" content="2026-01-09T09:09:09Z">
<meta name="memhtml-tag" content="@@TAG@@">
<link rel="memhtml-supports" href="/a/b.html">
</head>
<body>
<article>
<p><mark>Billing targets an RPO of five minutes.</mark></p>
</article>
</body>
</html>
"""


def memory(title: str = "RPO for billing", head: str = "", tag: str = "reliability") -> str:
    return FILE.replace("@@TITLE@@", title).replace("@@HEAD@@", head).replace("@@TAG@@", tag)


NOW = "2030-01-01T00:00:00Z"
HOSTILE_TAGS = ["</head>", "<body>", "<article>", "</head><body><article>", "x --> y",
                "<!-- x", "</title>"]
COMMENTED = ('<!-- <meta name="memhtml-updated" content="old">\n'
             '<link rel="memhtml-supports" href="/a/b.html">\n'
             '<link rel="memhtml-supports" href="/c/d.html"> -->\n')
IN_TITLE = ('about <meta name="memhtml-updated" content="old"> and '
            '<link rel="memhtml-supports" href="/c/d.html"> and </head><body><article>')


def assert_only_head_changed(before: str, after: str) -> None:
    assert content_hash(after) == content_hash(before)
    assert after[after.rindex("</head>"):] == before[before.rindex("</head>"):]


# --- the failures of the regex splicer --------------------------------------------------

@pytest.mark.parametrize("tag", HOSTILE_TAGS)
def test_tag_like_text_in_a_meta_value_does_not_end_the_head(tag: str) -> None:
    html = memory(tag=tag)
    assert read_meta(html, "memhtml-tag") == tag
    assert add_link(html, "supports", "/a/b.html") == html  # no duplicated edge
    assert read_links(remove_link(html, "supports", "/a/b.html")) == ()
    assert read_meta(remove_meta(html, "memhtml-status"), "memhtml-status") is None
    stamped = set_meta(html, "memhtml-updated", NOW)
    assert read_meta(stamped, "memhtml-updated") == NOW
    assert read_meta(stamped, "memhtml-tag") == tag
    assert_only_head_changed(html, stamped)


def test_set_meta_edits_the_meta_not_its_commented_out_copy() -> None:
    html = memory(head=COMMENTED)
    stamped = set_meta(html, "memhtml-updated", NOW)
    assert COMMENTED in stamped
    assert read_meta(stamped, "memhtml-updated") == NOW
    assert stamped == html.replace('content="2026-01-09T09:09:09Z">\n<meta name="memhtml-tag"',
                                   f'content="{NOW}">\n<meta name="memhtml-tag"')


def test_a_commented_out_link_is_not_an_edge() -> None:
    html = memory(head=COMMENTED)
    added = add_link(html, "supports", "/c/d.html")
    assert read_links(added) == (Link("supports", "/a/b.html"), Link("supports", "/c/d.html"))
    assert COMMENTED in added
    removed = remove_link(html, "supports")
    assert read_links(removed) == ()
    assert COMMENTED in removed


def test_a_commented_out_meta_is_not_removed_or_counted() -> None:
    html = memory(head=COMMENTED)
    assert COMMENTED in remove_meta(html, "memhtml-updated")
    assert read_meta(remove_meta(html, "memhtml-updated"), "memhtml-updated") is None
    assert add_meta(html, "memhtml-tag", "reliability") == html


def test_meta_text_inside_the_title_is_title_text() -> None:
    html = memory(title=IN_TITLE)
    stamped = set_meta(html, "memhtml-updated", NOW)
    assert read_meta(stamped, "memhtml-updated") == NOW
    assert f"<title>{IN_TITLE}</title>" in stamped
    assert_only_head_changed(html, stamped)
    added = add_link(html, "supports", "/c/d.html")
    assert read_links(added) == (Link("supports", "/a/b.html"), Link("supports", "/c/d.html"))
    assert f"<title>{IN_TITLE}</title>" in added


@pytest.mark.parametrize("title", ["How <body> works", "<article> vs <section>",
                                   "</head> in a title", "<!-- not a comment -->"])
def test_a_title_mentioning_markup_is_edited_not_refused(title: str) -> None:
    html = memory(title=title)
    stamped = set_meta(html, "memhtml-confidence", "0.50")
    assert read_meta(stamped, "memhtml-confidence") == "0.50"
    assert f"<title>{title}</title>" in stamped
    assert_only_head_changed(html, stamped)


@pytest.mark.parametrize("opener", ["<!-->", "<!--->"])
def test_an_abruptly_closed_comment_hides_nothing(opener: str) -> None:
    """``<!-->`` is a whole (empty) comment, so the meta after it is real, and the
    ``-->`` meant to close it is stray text that ends the head."""
    html = memory(head=f'{opener}<meta name="memhtml-confidence" content="0.9">-->\n')
    assert read_meta(html, "memhtml-confidence") == "0.9"
    lowered = set_meta(html, "memhtml-confidence", "0.10")
    assert read_meta(lowered, "memhtml-confidence") == "0.10"
    assert content_hash(lowered) == content_hash(html)


# --- behaviour kept -----------------------------------------------------------------

def test_set_meta_replaces_in_place_and_leaves_an_equal_value_alone() -> None:
    html = memory()
    stamped = set_meta(html, "memhtml-updated", NOW)
    assert stamped == html.replace("<meta name=\"memhtml-updated\" "
                                   "content=\"2026-01-09T09:09:09Z\">",
                                   f'<meta name="memhtml-updated" content="{NOW}">')
    assert set_meta(stamped, "memhtml-updated", NOW) is stamped
    spelled = html.replace('<meta name="memhtml-status" content="active">',
                           "<META content=active NAME='memhtml-status'>")
    assert set_meta(spelled, "memhtml-status", "active") is spelled


def test_set_meta_inserts_in_meta_order() -> None:
    html = memory()
    lines = set_meta(html, "memhtml-confidence", "0.50").split("\n")
    at = lines.index('<meta name="memhtml-confidence" content="0.50">')
    assert lines[at - 1] == '<meta name="memhtml-updated" content="2026-01-09T09:09:09Z">'


def test_set_meta_inserts_after_the_title_when_the_head_has_no_metas() -> None:
    html = "<html><head>\n<title>x</title>\n</head><body><article><p>a</p></article></body>"
    assert set_meta(html, "memhtml-type", "semantic") == html.replace(
        "<title>x</title>\n", '<title>x</title>\n<meta name="memhtml-type" content="semantic">\n')


def test_an_unknown_name_is_refused() -> None:
    html = memory()
    assert set_meta(html, "memhtml-colour", "red") is html
    assert add_meta(html, "memhtml-updated", NOW) is html  # a scalar is set_meta's


def test_add_meta_appends_after_the_last_value_and_is_idempotent() -> None:
    html = memory()
    added = add_meta(html, "memhtml-tag", "billing")
    assert ('<meta name="memhtml-tag" content="reliability">\n'
            '<meta name="memhtml-tag" content="billing">\n') in added
    assert add_meta(added, "memhtml-tag", "billing") is added


def test_remove_meta_cuts_whole_lines_by_name_or_value() -> None:
    html = add_meta(memory(), "memhtml-tag", "billing")
    one = remove_meta(html, "memhtml-tag", "reliability")
    assert one == html.replace('<meta name="memhtml-tag" content="reliability">\n', "")
    assert read_meta(remove_meta(html, "memhtml-tag"), "memhtml-tag") is None
    assert remove_meta(html, "memhtml-tag", "absent") == html


def test_link_editors_accept_every_spelling_of_a_rel() -> None:
    html = memory(head='<link rel="memhtml-about-person" href="/people/ann.html">\n')
    assert add_link(html, "about_person", "/people/ann.html") == html
    assert read_links(remove_link(html, "about_person")) == (Link("supports", "/a/b.html"),)


def test_add_then_remove_link_restores_the_file() -> None:
    html = memory()
    added = add_link(html, "leads_to", "/x/y.html")
    assert '<link rel="memhtml-leads-to" href="/x/y.html">' in added
    assert remove_link(added, "leads_to", "/x/y.html") == html


def test_a_hostile_value_is_written_escaped() -> None:
    html = memory()
    value = '"><body><article>x</article><meta content="'
    stamped = set_meta(html, "memhtml-prompt", value)
    assert read_meta(stamped, "memhtml-prompt") == value
    assert_only_head_changed(html, stamped)


def test_crlf_files_keep_their_line_ending() -> None:
    html = memory().replace("\n", "\r\n")
    stamped = set_meta(html, "memhtml-confidence", "0.50")
    assert '<meta name="memhtml-confidence" content="0.50">\r\n' in stamped
    assert "\r\n\n" not in stamped and "\n\n" not in stamped


# --- totality ---------------------------------------------------------------------

@pytest.mark.parametrize(
    "html",
    ["", "plain text", "<p>a fragment</p>", '<html><head><meta name="memhtml-type"',
     "<html><head><title>never closed", "<html><head><!-- never closed </head><body>",
     "<html><head><meta charset=utf-8>", "\x00", "\ud800<head></head>"],
)
def test_without_a_head_to_edit_every_editor_returns_its_input(html: str) -> None:
    assert set_meta(html, "memhtml-updated", NOW) == html
    assert add_meta(html, "memhtml-tag", "x") == html
    assert remove_meta(html, "memhtml-tag") == html
    assert add_link(html, "supports", "/a/b.html") == html
    assert remove_link(html, "supports") == html
