"""The generated hostile corpus, judged against HTML5 parsers as oracles.

Each input wraps a hostile payload (a script, an event-handler attribute, a
``javascript:`` URL) in one or more of the disguises that made a file pass the
checker while a browser ran it: nesting past libxml2's depth, a stray quote in a
second ``<body>`` or ``<html>`` start tag, a file with no literal ``<body>``, a text
node or attribute past the size bound, a foreign charset (declared, hidden where only
the browser's prescan reads it, or carried by ESC sequences), and content after
``</html>``. Harmless disguises (a comment, escaped text, a quoted attribute value)
are mixed in so the law is not vacuous.

The law: every input is either refused with a named violation, or no oracle finds
anything in its tree that would run script.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.unit.format.html5_oracle import dangers, oracles
from tests.unit.format.test_format_hostile import BASE

from memhtml.format import check_memory

NAMED = re.compile(r"^[a-z][a-z0-9 -]*: \S", re.IGNORECASE)
"""A violation names its rule before the colon, as every message here does."""

SCRIPTS = (
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "<script/src=data:,alert(1)></script>",
    "<svg><script>alert(1)</script></svg>",
    "<math><mtext><script>alert(1)</script></mtext></math>",
)
HANDLERS = (
    ' onclick="alert(1)"',
    " onload=alert(1)",
    " ONERROR='alert(1)'",
    "/onfocus=alert(1) autofocus",
    ' onmouseover = "alert(1)"',
)
URLS = (
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    "java\tscript:alert(1)",
    "&#106;avascript:alert(1)",
    " \x01javascript:alert(1)",
    "vbscript:msgbox(1)",
    "data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;",
)
SKELETON_TAGS = ("body", "html", "head")
STRAY_QUOTES = ('x"', "x'", '"', "'", 'x="', "x='")
NESTING_TAGS = ("div", "section", "span", "b", "em", "aside", "ul", "li", "table", "td", "a",
                "p", "details", "q")
CHARSETS = ("iso-2022-jp", "utf-7", "utf-16", "utf-16le", "windows-1252", "x-user-defined",
            "shift_jis", "euc-jp", "gb18030", "big5", "iso-2022-kr", "hz-gb-2312", "utf8",
            "latin1")


@st.composite
def payloads(draw: st.DrawFn) -> str:
    """One hostile fragment: a script, an element carrying a handler, or a scriptable URL."""
    kind = draw(st.sampled_from(("script", "handler", "url")))
    if kind == "script":
        return draw(st.sampled_from(SCRIPTS))
    if kind == "handler":
        tag = draw(st.sampled_from(("p", "em", "details", "a", "img", "body", "svg", "table")))
        return f"<{tag}{draw(st.sampled_from(HANDLERS))}>x</{tag}>"
    url = draw(st.sampled_from(URLS))
    return draw(st.sampled_from((
        f'<a href="{url}">x</a>', f"<a href={url.replace(' ', '')}>x</a>",
        f'<q cite="{url}">x</q>', f'<iframe src="{url}"></iframe>',
        f'<form action="{url}"><button>x</button></form>',
        f'<svg><a xlink:href="{url}"><text>x</text></a></svg>',
    )))


def _article(text: str, fragment: str) -> str:
    return text.replace("@@ARTICLE@@", fragment)


def _head(text: str, fragment: str) -> str:
    return text.replace("@@HEAD@@", fragment)


@st.composite
def disguised(draw: st.DrawFn) -> str:
    """A memory file carrying one payload in one or two disguises."""
    payload = draw(payloads())
    text = BASE
    for disguise in draw(st.lists(st.sampled_from((
        "plain", "deep", "stray-quote", "no-body", "oversized-text", "oversized-attribute",
        "charset", "prescan-charset", "esc", "after-html", "comment", "escaped", "quoted",
    )), min_size=1, max_size=2)):
        if disguise == "deep":
            tag = draw(st.sampled_from(NESTING_TAGS))
            depth = draw(st.sampled_from((40, 61, 62, 65, 200, 254, 255, 256, 257, 300, 1100)))
            payload = f"<{tag}>" * depth + payload
        elif disguise == "stray-quote":
            tag = draw(st.sampled_from(SKELETON_TAGS))
            quote = draw(st.sampled_from(STRAY_QUOTES))
            handler = draw(st.sampled_from(HANDLERS))
            payload = f"<{tag} {quote}{handler}>" + payload
        elif disguise == "no-body":
            text = text.replace("<body>\n", "").replace("</body>\n", "")
            payload = f"<body{draw(st.sampled_from(HANDLERS))}>" + payload
        elif disguise == "oversized-text":
            size = draw(st.sampled_from((1_000, 1_048_000, 1_048_600, 10_500_000)))
            payload = "<p>" + "x" * size + "</p>" + payload
        elif disguise == "oversized-attribute":
            size = draw(st.sampled_from((1_000, 1_048_600, 10_500_000)))
            payload = '<p title="' + "y" * size + '">z</p>' + payload
        elif disguise == "charset":
            label = draw(st.sampled_from(CHARSETS))
            text = text.replace('<meta charset="utf-8">', f'<meta charset="{label}">')
        elif disguise == "prescan-charset":
            label = draw(st.sampled_from(CHARSETS))
            where = draw(st.sampled_from(("title", "comment-unclosed", "attribute")))
            decoy = {
                "title": f'<title><meta charset="{label}"></title>',
                "comment-unclosed": f'<!-- a --!><meta charset="{label}">',
                "attribute": f'<p x=<meta charset="{label}">',
            }[where]
            text = text.replace("<!doctype html>\n", "<!doctype html>\n" + decoy + "\n")
        elif disguise == "esc":
            payload = "\x1b$B" + payload + "\x1b(B"
        elif disguise == "after-html":
            text = text.replace("</html>\n", "</html>\n" + payload)
            payload = ""
        elif disguise == "comment":
            payload = "<!-- " + payload.replace("-->", "") + " -->"
        elif disguise == "escaped":
            payload = "<p>" + payload.replace("&", "&amp;").replace("<", "&lt;") + "</p>"
        elif disguise == "quoted":
            quoted = payload.replace("&", "&amp;").replace('"', "&quot;")
            payload = f'<p title="{quoted}">q</p>'
    where = draw(st.sampled_from(("article", "head")))
    text = _head(text, payload) if where == "head" else _article(text, payload)
    return _head(_article(text, ""), "")


def _refused_or_harmless(text: str) -> None:
    violations = check_memory(text).violations
    if violations:
        unnamed = [v for v in violations if not NAMED.match(v)]
        assert not unnamed, f"violations without a rule name: {unnamed}"
        return
    data = text.encode("utf-8")
    for name, oracle in oracles():
        found = list(dangers(oracle(data)))
        assert not found, f"the check passed, but {name} builds a tree with {found}"


@settings(max_examples=300)
@given(disguised())
def test_a_disguised_payload_is_refused_or_harmless(text: str) -> None:
    _refused_or_harmless(text)


@settings(max_examples=200)
@given(payloads(), st.data())
def test_a_payload_spliced_anywhere_is_refused_or_harmless(payload: str, data: st.DataObject
                                                            ) -> None:
    # Anywhere includes the middle of a tag, an attribute value, a comment or the title.
    text = _head(_article(BASE, ""), "")
    at = data.draw(st.integers(0, len(text)))
    _refused_or_harmless(text[:at] + payload + text[at:])


def test_the_disguises_are_not_all_refused() -> None:
    """A harmless disguise of a hostile payload passes: the law is not won by refusing
    everything."""
    text = _head(_article(BASE, "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"
                                "<!-- <p onclick=alert(1)>x</p> -->"), "")
    assert check_memory(text).violations == ()
