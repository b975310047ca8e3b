"""A memory's tables on its readable page: rows of header and data cells, each cell one
line of escaped text, and the stylesheets that draw them."""

from __future__ import annotations

from pathlib import Path

import lxml.html

from memhtml.format import NewMemoryInput, check_memory, render_template
from memhtml.store.site import STYLESHEET, render_site, view_path
from memhtml.store.site_article import article_blocks
from tests.integration.publish.site_support import tag_balance, view_of_files

REPO_ROOT = Path(__file__).resolve().parents[3]
APP_CSS = REPO_ROOT / "src" / "memhtml" / "web" / "static" / "app.css"
TABLE_PATH = "areas/deploy/regions.html"
SITE_TAGS = {"p", "pre", "h3", "mark", "code", "strong", "em", "br", "a", "span", "table",
             "tbody", "tr", "th", "td"}


def _blocks(article: str, resolve: dict[str, str] | None = None) -> list[str]:
    links = resolve or {}
    return article_blocks(f"<article>{article}</article>", links.get)


def _balanced(blocks: list[str]) -> None:
    checked = tag_balance("".join(blocks))
    assert checked.problems == [], (blocks, checked.problems)
    assert {tag for tag, _ in checked.tags} <= SITE_TAGS, blocks


def test_a_table_is_drawn_as_rows_of_header_and_data_cells() -> None:
    blocks = _blocks(
        "<table><caption>Regions and their <em>owners</em></caption>"
        "<thead><tr><th>Region</th><th>Owner</th></tr></thead>"
        "<tbody><tr><td>eu-west-1</td><td>Laura</td></tr>"
        "<tr><td>us-east-1</td><td>Priya</td></tr></tbody>"
        "<tfoot><tr><td>2 regions</td><td></td></tr></tfoot></table>"
        "<p>After the table.</p>")
    assert blocks == [
        '<p class="caption">Regions and their <em>owners</em></p>',
        "<table><tbody><tr><th>Region</th><th>Owner</th></tr>"
        "<tr><td>eu-west-1</td><td>Laura</td></tr>"
        "<tr><td>us-east-1</td><td>Priya</td></tr>"
        "<tr><td>2 regions</td><td></td></tr></tbody></table>",
        "<p>After the table.</p>",
    ]
    _balanced(blocks)


def test_inline_markup_in_a_cell_is_kept_and_its_blocks_run_on_as_one_line() -> None:
    blocks = _blocks(
        "<table><tr><td><code>drain --vip</code> then <strong>wait</strong>, see "
        '<a href="/areas/deploy/canary-gate.html">the gate</a> and '
        '<a href="https://example.org/x">the docs</a></td>'
        "<td><p>one</p><p>two</p><ul><li>three</li><li>four</li></ul></td>"
        "<td>line<br>break</td></tr></table>",
        {"/areas/deploy/canary-gate.html": "../gate/index.html"})
    assert blocks == [
        "<table><tbody><tr>"
        '<td><code>drain --vip</code> then <strong>wait</strong>, see '
        '<a href="../gate/index.html">the gate</a> and the docs (https://example.org/x)</td>'
        "<td>one two three four</td><td>line<br>break</td>"
        "</tr></tbody></table>"]
    _balanced(blocks)


def test_a_nested_table_runs_on_as_its_cells_text() -> None:
    blocks = _blocks(
        "<table><tr><th>Outer</th><td>before <table><tr><td>a</td><td>b</td></tr>"
        "<tr><th>c</th><td>d</td></tr></table> after</td></tr></table>")
    assert blocks == [
        "<table><tbody><tr><th>Outer</th>"
        "<td>before a | b <strong>c</strong> | d after</td></tr></tbody></table>"]
    _balanced(blocks)
    caption = _blocks("<table><caption>Key: <table><tr><td>x</td><td>y</td></tr></table>"
                      "</caption><tr><td>z</td></tr></table>")
    assert caption == ['<p class="caption">Key: x | y</p>',
                       "<table><tbody><tr><td>z</td></tr></tbody></table>"]


def test_a_hostile_cell_stays_text() -> None:
    blocks = _blocks(
        "<table><tr><td>&lt;script&gt;window.__pwned=1&lt;/script&gt;</td>"
        '<td>" onmouseover="x" &amp; &lt;img src=x onerror=alert(1)&gt;</td></tr></table>')
    assert blocks == [
        "<table><tbody><tr><td>&lt;script&gt;window.__pwned=1&lt;/script&gt;</td>"
        '<td>" onmouseover="x" &amp; &lt;img src=x onerror=alert(1)&gt;</td>'
        "</tr></tbody></table>"]
    # Even markup the format check would refuse is read for its words only.
    raw = _blocks('<table><tr><td onclick="x()"><script>alert(1)</script>'
                  '<img src=x onerror="alert(2)">ok</td></tr></table>')
    assert "<script" not in "".join(raw) and "<img" not in "".join(raw)
    assert "onclick" not in "".join(raw) and "onerror" not in "".join(raw)
    _balanced(raw)


def test_a_table_of_whitespace_cells_yields_nothing() -> None:
    assert _blocks("<table><tr><td> </td><td>\n\t</td></tr><tr><th></th></tr></table>") == []
    # A row with nothing in it is left out; the others stay.
    assert _blocks("<table><tr><td> </td></tr><tr><td>kept</td></tr></table>") == [
        "<table><tbody><tr><td>kept</td></tr></tbody></table>"]


def test_a_table_inside_inline_markup_leaves_every_block_balanced() -> None:
    blocks = _blocks("<p><strong>before <table><tr><td>x <em>y</em></td></tr></table>"
                     " after</strong></p>")
    assert blocks == ["<p><strong>before</strong></p>",
                      "<table><tbody><tr><td>x <em>y</em></td></tr></tbody></table>",
                      "<p><strong>after</strong></p>"]
    _balanced(blocks)


def test_words_outside_the_cells_are_kept_before_the_table() -> None:
    assert _blocks("<table>loose <tr><td>x</td></tr> tail</table>") == [
        "<p>loose tail</p>", "<table><tbody><tr><td>x</td></tr></tbody></table>"]


def test_a_caption_in_a_numbered_item_does_not_take_the_items_number() -> None:
    blocks = _blocks("<ol><li><table><caption>Cap</caption><tr><td>x</td></tr></table>"
                     "words</li></ol>")
    assert blocks == ['<p class="caption">Cap</p>',
                      "<table><tbody><tr><td>x</td></tr></tbody></table>",
                      '<p class="item depth-1"><span class="marker">1.</span> words</p>']


def test_a_memory_with_a_table_publishes_it_as_a_table() -> None:
    html = render_template(NewMemoryInput(
        title="Regions", claim="", memory_type="semantic", at="2026-08-03T10:00:00Z",
        article_html=("<p><mark>Two regions serve checkout.</mark></p>\n"
                      "<table><caption>Owners</caption><thead><tr><th>Region</th>"
                      "<th>Owner</th></tr></thead><tbody><tr><td><code>eu-west-1</code></td>"
                      "<td>Laura &lt;script&gt;</td></tr></tbody></table>"),
        detect=lambda _code: None))
    assert check_memory(html).ok
    site = render_site(view_of_files({TABLE_PATH: html}), [TABLE_PATH])
    text = site[view_path(TABLE_PATH)].decode("utf-8")
    assert tag_balance(text).problems == []
    article = lxml.html.document_fromstring(text).xpath("//article")[0]
    assert [[cell.tag for cell in row] for row in article.xpath(".//tr")] == [
        ["th", "th"], ["td", "td"]]
    assert [cell.text_content() for cell in article.xpath(".//td")] == [
        "eu-west-1", "Laura <script>"]
    assert article.xpath("string(p[@class='caption'])") == "Owners"
    assert {el.tag for el in article.iter()} <= SITE_TAGS | {"article"}
    assert {name for el in article.iter() for name in el.attrib} <= {"class", "href"}


def test_the_stylesheets_draw_tables_with_borders_padding_and_header_weight() -> None:
    for sheet in (STYLESHEET, APP_CSS.read_text(encoding="utf-8")):
        rules = {line.split("{")[0].strip(): line for line in sheet.splitlines() if "{" in line}
        assert "border-collapse: collapse" in rules[".memory-text table"]
        cells = rules[".memory-text th, .memory-text td"]
        assert "border: 1px solid" in cells and "padding:" in cells
        assert "font-weight: 600" in rules[".memory-text th"]
