"""An index read line by line is the index the block parse reads.

``markdown_convert._index_article`` tells an index (a ``MEMORY.md``) from a note: for
the plain shape, headings and one-line bullet items of links, it reads the lines
(``_plain_index``) instead of parsing the blocks. Over generated bodies mixing that
shape with every line that would change the blocks (other markers and spacings,
ordered items, task boxes, indented and lazy lines, rules, setext underlines, quotes,
fences, raw HTML, headings with closing sequences, blank lines of tabs or of a
no-break space), the line reading either steps aside or gives the block parse's
article, title included.
"""

from __future__ import annotations

from hypothesis import event, given, settings
from hypothesis import strategies as st

from memhtml.store.markdown_convert import _index_article, _parsed_index, _plain_index

_LINKS = ("[Deploy](deploy.md)", "[[deploy]]", "[[a|b]]", "[a\\]b](x.md)", "[x](<a b.md>)",
          "[ ] task", "[x]", "[a]: /u", "[x](y", "[[", "<http://a.b>", "text", "")
_TAILS = ("", ": the window", " \\", "  ", "\t", " #", " [b](c.md)", " `[x](y)`")
_PLAIN = st.one_of(
    st.builds(lambda m, link, tail: f"{m} {link}{tail}", st.sampled_from("-*+"),
              st.sampled_from(_LINKS), st.sampled_from(_TAILS)),
    st.builds(lambda level, text: "#" * level + text, st.integers(1, 7),
              st.sampled_from(("", " Memory", " Memory #", " Memory ##", "  Spaced  ", " #",
                               " *Emph* index", "Memory", " \\#"))),
)
_OTHER = st.sampled_from((
    "", "   ", "\t", "\u00a0", "---", "***", "===", "- - -", "1. [a](b.md)", "2) [[x]]",
    "-  [a](b.md)", "-\t[a](b.md)", "- ", "-", "  - [a](b.md)", "    [a](b.md)",
    "lazy continuation", "> [a](b.md)", "```", "~~~", "<div>", "<!-- x -->", "| a | b |",
    "[x]: /url", "Setext", "- # heading in an item", "-    [a](b.md)", "+ [x](y.md)",
))
_ITEM = st.builds(lambda m, link, tail: f"{m} {link}{tail}", st.sampled_from("-*+"),
                  st.sampled_from(_LINKS[:5]), st.sampled_from(_TAILS))
_LINES = st.one_of(
    st.lists(st.one_of(_ITEM, _ITEM, _ITEM, _PLAIN, st.sampled_from(("", "  "))),
             min_size=1, max_size=12),
    st.builds(lambda lines, other, at: [*lines[:at], other, *lines[at:]],
              st.lists(_ITEM, min_size=1, max_size=8), _OTHER, st.integers(0, 8)),
    st.lists(st.one_of(_PLAIN, _PLAIN, _OTHER), min_size=1, max_size=12),
)


@settings(max_examples=400, deadline=None)
@given(_LINES, st.booleans())
def test_the_line_reading_is_the_block_parse_or_steps_aside(lines: list[str],
                                                            trailing: bool) -> None:
    text = "\n".join(lines) + ("\n" if trailing else "")
    fast = _plain_index(text)
    event("read by lines" if fast is not None else "left to the parse")
    parsed = _parsed_index(text)
    if fast is not None:
        assert fast == parsed, (text, fast, parsed)
    assert _index_article(text) == parsed
