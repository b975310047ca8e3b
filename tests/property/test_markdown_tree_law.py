"""The conversion's syntax tree is markdown-it's own.

``markdown_convert.syntax_tree`` builds the tree the conversion walks from the token
stream, in place of markdown-it's ``SyntaxTreeNode``: over generated markdown (every
construct the conversion maps, and the characters that make or break them), both give
the same nodes, in the same order, with the same type, tag, attributes, content, info
string and hidden flag, for the full parser and for the blocks-only one.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it.tree import SyntaxTreeNode

from memhtml.store.markdown_convert import _BLOCK_PARSER, _PARSER, _Node, syntax_tree

_PIECES = st.sampled_from([
    "a", "word", " ", "\n", "\n\n", "*", "**", "_", "`", "``", "[", "]", "(", ")", "[[x]]",
    "[[a|b]]", "[t](x.md)", "[t](http://a.b \"title\")", "![i](p.png)", "<http://a.b>",
    "\\", "\\#", "&amp;", "&#35;", "#tag", "# ", "## ", "- ", "* ", "+ ", "1. ", "2) ", "> ",
    "    ", "\t", "```", "```py\n", "~~~", "---", "===", "<kbd>", "</kbd>", "<div>",
    "</div>", "<!-- c -->", "| a | b |\n|---|:-:|\n| 1 | 2 |\n", "[x]: /u", "  \n", "ä",
])
_TEXTS = st.lists(_PIECES, max_size=30).map("".join)


def _same(node: _Node, theirs: SyntaxTreeNode) -> bool:
    return (node.type == theirs.type and node.tag == theirs.tag
            and node.attrs == theirs.attrs and node.content == theirs.content
            and node.info == theirs.info and node.hidden == theirs.hidden
            and len(node.children) == len(theirs.children)
            and all(_same(a, b) for a, b in zip(node.children, theirs.children, strict=True)))


@settings(max_examples=400, deadline=None)
@given(_TEXTS)
def test_the_tree_is_markdown_its_tree(text: str) -> None:
    for parser in (_PARSER, _BLOCK_PARSER):
        tokens = parser.parse(text)
        ours, theirs = syntax_tree(tokens), SyntaxTreeNode(tokens).children
        assert len(ours) == len(theirs)
        assert all(_same(a, b) for a, b in zip(ours, theirs, strict=True)), text
