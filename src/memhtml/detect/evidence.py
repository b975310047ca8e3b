"""Per-lexer evidence: how strongly one Pygments lexer claims a snippet.

Pygments token streams are built for highlighting, not for detection, so the
raw stream is filtered (each lexer's catch-all token types, common English and
identifier words, repeats) before it counts as evidence for a language.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pygments.lexer import Lexer
    from pygments.token import _TokenType

__all__ = ["candidate_lexers", "lexer_evidence"]

# Pygments aliases of the candidate lexers. Deliberately broader than the
# vocabulary: when a snippet's true grammar is absent, the closest present
# grammar wins unopposed and wins confidently, so the frequent confusers must be
# in the race to be runners-up. Order breaks exact ties, which is why each
# subset grammar precedes its echo (see _ECHOES in memhtml.detect.detector).
_CANDIDATES: Final[tuple[str, ...]] = (
    "javascript",
    "typescript",
    "python",
    "bash",
    "json",
    "postgresql",
    "sql",
    "yaml",
    "html",
    "toml",
    "css",
    "go",
    "rust",
    "c",
    "cpp",
    "java",
    "csharp",
    "php",
    "ruby",
    "perl",
    "kotlin",
    "swift",
    "scala",
    "lua",
    "r",
    "haskell",
    "powershell",
    "make",
    "docker",
    "ini",
    "markdown",
    "xml",
    "diff",
    "console",
    "pycon",
    "graphql",
    "nginx",
    "dart",
    "elixir",
)

# English function words and everyday identifier names. Some lexers carry
# enormous keyword lists (the SQL ones flag over half of these as keywords), so a
# hit on one of them says nothing about the grammar.
_COMMON_WORDS: Final = frozenset(
    """
    a an the to of in on at for with by as is be are was it this that and or not
    no yes if then else do new next before after wait time now end start stop run
    go make get set put add delete remove update change data key keys value values
    name names count user users text date day type types status file files path
    id ids result results list map item items size length level mode state option
    options config message error errors event node parent child total price limit
    offset page session owner created updated local global all any some each one
    two first last left right top bottom true false null none default public
    private open close read write load save show hide view link main test input
    output print log info debug warn version module package return
    """.split()
)

# Text built only from made-up words in common layouts. Any token type a lexer
# gives these words is a catch-all class for that lexer (the CSS lexer tags any
# word as a selector, the Lua lexer any identifier as a variable), so tokens of
# that type are no evidence that the text is in its language.
_NONSENSE_PROBE: Final = """zorbl quix fremb
Zorbl Quix Fremb
    zorbl quix(1, "blat");
zorbl = quix
zorbl: quix
zorbl.quix(fremb, 42)
Vlak(Plim) { fremb = 3.5 }
zorbl - quix / fremb, 'vlak'
ZORBL_QUIX = 7
"""

# Weights in the spirit of highlight.js relevance: closed-vocabulary words count,
# built-ins and markup tags count double, declared names and attributes count
# less. Repeats of an already-seen (type, word) add a quarter, so a long snippet
# is not confident merely for repeating itself. Each Error token costs one point.
_REPEAT_WEIGHT: Final = 0.25
_ERROR_COST: Final = 1.0

_WORD: Final = re.compile(r"\w+")


@functools.cache
def candidate_lexers() -> tuple[tuple[str, Lexer, frozenset[_TokenType]], ...]:
    """(alias, lexer, catch-all token types) per candidate, built on first use.

    Importing pygments.lexers here rather than at module import keeps the lexer
    registry out of every process that only reads memory files.
    """
    from pygments.lexers import get_lexer_by_name

    out = []
    for alias in _CANDIDATES:
        lexer = get_lexer_by_name(alias)
        catch_all = frozenset(
            ttype
            for _, ttype, text in lexer.get_tokens_unprocessed(_NONSENSE_PROBE)
            if text.strip()
        )
        out.append((alias, lexer, catch_all))
    return tuple(out)


@functools.cache
def _weight(ttype: _TokenType) -> float:
    from pygments import token as t

    def within(*parents: _TokenType) -> bool:
        return any(t.is_token_subtype(ttype, parent) for parent in parents)

    if within(t.Keyword, t.Operator.Word):
        return 1.0
    if within(t.Name.Builtin, t.Name.Tag):
        return 2.0
    if within(t.Name.Function, t.Name.Class, t.Name.Namespace, t.Name.Decorator):
        return 1.0
    if within(t.Name.Attribute, t.Name.Property, t.Name.Label, t.Generic):
        return 0.5
    return 0.0


def lexer_evidence(lexer: Lexer, catch_all: frozenset[_TokenType], code: str) -> float:
    """Weighted hits of ``lexer``'s tokens on ``code``, less a point per Error token."""
    from pygments.token import Error, is_token_subtype

    score = 0.0
    seen: set[tuple[_TokenType, str]] = set()
    for _, ttype, text in lexer.get_tokens_unprocessed(code):
        if is_token_subtype(ttype, Error):
            if text.strip():
                score -= _ERROR_COST
            continue
        if ttype in catch_all:
            continue
        weight = _weight(ttype)
        if weight == 0.0:
            continue
        word = "".join(_WORD.findall(text)).lower()
        if not word or word in _COMMON_WORDS:
            continue
        key = (ttype, word)
        if key in seen:
            score += weight * _REPEAT_WEIGHT
        else:
            seen.add(key)
            score += weight
    return score
