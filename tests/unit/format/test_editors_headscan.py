"""The head tokenizer the editors splice by: each rule, by example.

Where the project's parser (lxml over libxml2, whose tokenizer follows HTML5) can
answer the same question, the expected value is checked against it too, so a rule
here cannot drift from what ``read_meta``/``parse_memory`` see.
"""

from __future__ import annotations

import pytest

from memhtml.format.headscan import Token, attribute_value, iter_tokens, scan_head
from memhtml.format.tree import find_first, parse_html


def kinds(html: str) -> list[tuple[str, str]]:
    """Each token as (kind, source text)."""
    return [(t.kind, html[t.start:t.end]) for t in iter_tokens(html)]


def starts(html: str) -> list[Token]:
    return [t for t in iter_tokens(html) if t.kind == "start"]


def lxml_head_metas(html: str) -> list[dict[str, str]]:
    root, _ = parse_html(html)
    assert root is not None
    head = find_first(root, "head")
    return [] if head is None else [dict(m.attrib) for m in head.iter("meta")]


META = '<meta name="memhtml-updated" content="2026-01-01T00:00:00Z">'


# --- comments -------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("html", "comment"),
    [
        ("<!-- a -->", "<!-- a -->"),
        ("<!---->", "<!---->"),
        ("<!-->x", "<!-->"),  # abruptly closed, empty
        ("<!--->x", "<!--->"),  # likewise
        ("<!-- a --!>x", "<!-- a --!>"),  # closed, wrongly
        ("<!-- a -- >x-->", "<!-- a -- >x-->"),  # "-- >" does not close
        ("<!-- <!-- nested -->x", "<!-- <!-- nested -->"),
        ("<!-- a ---->x", "<!-- a ---->"),
        ("<!-- a --!-->x", "<!-- a --!-->"),
        ("<!-- unclosed <meta>", "<!-- unclosed <meta>"),  # runs to the end
        ("<!x>y", "<!x>"),  # bogus comment: to the first ">"
        ("<?php echo 1 ?>y", "<?php echo 1 ?>"),
        ("</ x>y", "</ x>"),
        ("<![CDATA[ a ]]>y", "<![CDATA[ a ]]>"),  # in HTML content, a bogus comment
    ],
)
def test_comments_end_where_the_standard_ends_them(html: str, comment: str) -> None:
    assert kinds(html)[0] == ("comment", comment)


def test_a_meta_inside_a_comment_is_not_a_tag() -> None:
    html = f"<!-- {META} -->{META}"
    assert [html[t.start:t.end] for t in starts(html)] == [META]


@pytest.mark.parametrize("opener", ["<!-->", "<!--->"])
def test_an_abruptly_closed_comment_leaves_the_meta_after_it_real(opener: str) -> None:
    html = f"<html><head>{opener}{META}--></head><body></body></html>"
    assert [t.name for t in starts(html)] == ["html", "head", "meta", "body"]
    assert lxml_head_metas(html) == [{"name": "memhtml-updated",
                                      "content": "2026-01-01T00:00:00Z"}]


# --- raw text ------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("html", "raw"),
    [
        (f"<title>{META}</title>", META),
        ("<title>a </titlex> b</title>", "a </titlex> b"),  # not its end tag
        ("<title>a</TITLE >", "a"),
        ('<title>a</title foo="x>y">', "a"),  # an end tag's attributes are skipped whole
        ("<style>p > a { }</style>", "p > a { }"),
        ("<textarea><b></textarea>", "<b>"),
        ("<noframes><meta></noframes>", "<meta>"),
        ("<script>if (a < b) x = '</s' + 'cript>';</script>", "if (a < b) x = '</s' + 'cript>';"),
    ],
)
def test_raw_text_runs_to_its_own_end_tag(html: str, raw: str) -> None:
    tokens = list(iter_tokens(html))
    assert tokens[1].kind == "raw"
    assert html[tokens[1].start:tokens[1].end] == raw
    assert tokens[2].kind == "end"


@pytest.mark.parametrize(
    ("script", "content"),
    [
        ("<script><!--</script>", "<!--"),
        ("<script><!--<script></script>x</script>-->", "<!--<script></script>x"),
        ("<script><!--<script>--></script>", "<!--<script>-->"),
        ("<script><!--></script>", "<!-->"),
        ("<script><!-- --> <script></script>", "<!-- --> <script>"),
    ],
)
def test_script_data_follows_the_escape_states(script: str, content: str) -> None:
    tokens = list(iter_tokens(script))
    assert script[tokens[1].start:tokens[1].end] == content
    root, _ = parse_html(f"<html><head>{script}</head><body></body></html>")
    assert root is not None
    assert [s.text for s in root.iter("script")] == [content]


def test_an_unclosed_title_swallows_the_rest() -> None:
    tokens = list(iter_tokens(f"<title>x {META}"))
    assert [t.kind for t in tokens] == ["start", "raw"]


# --- tags and attributes -------------------------------------------------------------

@pytest.mark.parametrize(
    ("tag", "attrs"),
    [
        ('<meta name="a" content="x>y">', {"name": "a", "content": "x>y"}),
        ("<meta name='a' content='say \"hi\"'>", {"name": "a", "content": 'say "hi"'}),
        ("<meta name=a content=b/>", {"name": "a", "content": "b/"}),
        ("<meta name=a content=b />", {"name": "a", "content": "b"}),
        ('<META NAME="a" Content="b">', {"name": "a", "content": "b"}),
        ('<meta name="a" name="b">', {"name": "a"}),  # the first wins
        ('<meta name="a"content="b">', {"name": "a", "content": "b"}),
        ("<meta ==x name=a>", {"=": "x", "name": "a"}),
        ("<meta name=a content= >", {"name": "a", "content": ""}),
        ("<meta/name=a/content=b>", {"name": "a/content=b"}),  # "/" is data unquoted
        ('<meta name="a" content="b"<body>', {"name": "a", "content": "b", "<body": ""}),
        ('<meta content="</head><body><article>" name=a>',
         {"content": "</head><body><article>", "name": "a"}),
        ('<meta name="a\r\nb">', {"name": "a\nb"}),
    ],
)
def test_attributes_are_read_by_the_attribute_states(tag: str, attrs: dict[str, str]) -> None:
    (token,) = starts(tag)
    assert (token.start, token.end) == (0, len(tag))
    assert dict(token.attrs) == attrs
    assert lxml_head_metas(f"<html><head>{tag}</head></html>") == [attrs]


def test_tag_names_fold_ascii_only() -> None:
    kelvin = "<lin\u212a>"  # KELVIN SIGN lowercases to "k" in Unicode, never in HTML
    assert starts(kelvin)[0].name == "lin\u212a"


@pytest.mark.parametrize(
    "value",
    ["a&amp;b", "&copy=1", "&copy;", "&amp&lt", "&ampx", "&lt2", "&notit;", "&not=1",
     "&#x41&#65;", "&#0;", "&#xD800;", "&#150;", "&#x110000;", "&unknown;", "& a", "&#;",
     "&AMP;", "&Tab;&NewLine;"],
)
def test_character_references_decode_as_in_an_attribute(value: str) -> None:
    root, _ = parse_html(f'<html><head><meta content="{value}"></head></html>')
    assert root is not None
    meta = find_first(root, "meta")
    assert meta is not None
    assert attribute_value(value) == meta.get("content")


def test_input_ending_inside_a_tag_drops_the_tag() -> None:
    assert kinds('<meta name="a') == [("ignored", '<meta name="a')]
    assert kinds("<meta name=a") == [("ignored", "<meta name=a")]
    assert kinds("<meta name='a>") == [("ignored", "<meta name='a>")]
    assert kinds("<head></hea") == [("start", "<head>"), ("ignored", "</hea")]


@pytest.mark.parametrize("text", ["<", "a < b", "< p>", "<3", "</"])
def test_a_lone_less_than_is_text(text: str) -> None:
    assert kinds(text) == []


def test_an_empty_end_tag_is_ignored() -> None:
    assert kinds("</>") == [("ignored", "</>")]


# --- where the head ends --------------------------------------------------------------

def head_end(html: str) -> str:
    scan = scan_head(html)
    return html[scan.end:]


@pytest.mark.parametrize(
    ("html", "rest"),
    [
        ("<html><head><title>t</title></head><body>", "</head><body>"),
        ("<html><head><title>t</title><body>", "<body>"),
        ("<html><head><meta charset=utf-8><article>", "<article>"),
        ("<html><head><title>t</title>\n hello <meta>", "hello <meta>"),
        ("<html><head><title>t</title><p>x</p>", "<p>x</p>"),
        ("<html><head></body><meta>", "</body><meta>"),
        ("<html><head>&amp;<meta></head>", "&amp;<meta></head>"),
        ("<html><head>&#32;&Tab;<meta></head>", "</head>"),  # references to whitespace
        ("<html><head><title><body></title></head>", "</head>"),
        ("<html><head><!-- </head> --></head>", "</head>"),
        (f'<html><head><meta content="</head>">{META}</head>', "</head>"),
        ("<html><head></p></title></head>", "</head>"),  # other end tags are dropped
        ("\ufeff<html><head></head>", "</head>"),
    ],
)
def test_the_head_ends_by_the_in_head_rules(html: str, rest: str) -> None:
    assert head_end(html) == rest


ARTICLE = "<article><p>a</p></article>"


@pytest.mark.parametrize(
    ("html", "editable"),
    [
        (f"<html><head></head><body>{ARTICLE}", True),
        (f"<html><head><title>x</title>text{ARTICLE}", True),
        (f"<!-- c --><HTML><HEAD></HEAD>{ARTICLE}", True),
        (f"<html><head></head><body><div><section>{ARTICLE}", True),
        ("<html><head></head><body><p>no article</p>", False),
        # an implied head: the parser's tree changes when an edit creates or empties it
        (f"<meta charset=utf-8><body>{ARTICLE}", False),
        (f"<html><meta charset=utf-8></head>{ARTICLE}", False),
        (f"<html><title>x</title><head></head>{ARTICLE}", False),  # that <head> is ignored
        (ARTICLE, False),
        (f"<p>x</p>{ARTICLE}", False),
        ("plain text", False),
        ("", False),
        ("<html><head><meta charset=utf-8>", False),  # the input ran out in the head
        (f'<html><head><meta content="</head><body>{ARTICLE}', False),  # ...inside a tag
        (f"<html><head><title></head><body>{ARTICLE}", False),  # ...inside the title
        (f"<html><head><!-- </head><body>{ARTICLE}", False),  # ...inside a comment
        # the article is swallowed by raw text or a comment after the head
        (f"<html><head></head><body><textarea>{ARTICLE}", False),
        (f"<html><head><title>x</title>text<!-- {ARTICLE}", False),
        (f"<html><head></head><body><script>{ARTICLE}</script>", False),
    ],
)
def test_a_head_is_editable_when_a_real_token_closes_it_and_an_article_follows(
    html: str, editable: bool
) -> None:
    assert scan_head(html).editable is editable


def test_head_tokens_cover_everything_but_whitespace() -> None:
    html = f"<!doctype html>\n<html>\n<head>\n<!-- c -->\n<title>{META}</title>\n{META}\n</head>"
    scan = scan_head(html)
    covered = "".join(html[t.start:t.end] for t in scan.tokens)
    assert covered == html[:scan.end].replace("\n", "")
