"""Language detection for unlabeled fenced code blocks.

An agent that writes a fence without a language gives the write path nothing to
stamp, and a wrong ``data-lang`` is worse than a missing one: it promotes to a
``lang:`` entity and misfiles the memory. So the detector abstains unless the
evidence for one language clearly beats the evidence for every real alternative.

How the score is built, and the measurements behind every constant here, are in
``docs/design.md`` and ``docs/benchmarks.md``; ``python -m bench.langdetect`` re-runs the sweep that
fixed DEPLOY_THRESHOLD.

Detection runs on the write path only. A stamp lands in the file, which is the
system of record, and nothing re-detects on rebuild, so the index never depends
on which Pygments happens to be installed.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, get_args

if TYPE_CHECKING:
    from pygments.lexer import Lexer
    from pygments.token import _TokenType

__all__ = [
    "CANONICAL_LANGS",
    "DEPLOY_THRESHOLD",
    "MAX_DETECT_CHARS",
    "CanonicalLang",
    "Detection",
    "detect",
    "detect_lang",
    "normalize_lang",
]

CanonicalLang = Literal[
    "typescript",
    "javascript",
    "python",
    "bash",
    "json",
    "sql",
    "yaml",
    "html",
    "toml",
    "css",
    "go",
    "rust",
]

# One lowercase token per language: data-lang becomes a lang: entity by exact
# string match, so two spellings of one language would be two entities.
CANONICAL_LANGS: Final[tuple[CanonicalLang, ...]] = get_args(CanonicalLang)

# Measured operating point on tests/data/langdetect (Pygments 2.20.0): the lowest
# threshold whose precision is still >= 95% is 0.6544 (96.77% precision, 23.66%
# coverage). Deployed as 0.66, rounded up, which is the safe direction because
# confidence is monotone in evidence: at 0.66 the eval set stamps 59 snippets,
# 58 of them correctly (98.31% precision, 22.52% coverage).
DEPLOY_THRESHOLD: Final = 0.66

# Every candidate lexer's cost grows with the input and the MCP server is a
# single process, so a large unlabeled fence abstains rather than stall it.
MAX_DETECT_CHARS: Final = 4096

_ALIASES: Final[dict[str, CanonicalLang]] = {
    # typescript
    "typescript": "typescript",
    "ts": "typescript",
    "tsx": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    # javascript
    "javascript": "javascript",
    "js": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "node": "javascript",
    "nodejs": "javascript",
    "ecmascript": "javascript",
    # python: a 2 vs 3 split is not a different entity
    "python": "python",
    "py": "python",
    "python3": "python",
    "py3": "python",
    "python2": "python",
    "py2": "python",
    "pyi": "python",
    "pyw": "python",
    # bash: POSIX-family shells and shell sessions. fish, PowerShell and
    # batch are different languages and stay out.
    "bash": "bash",
    "sh": "bash",
    "shell": "bash",
    "zsh": "bash",
    "ksh": "bash",
    "console": "bash",
    "shell-session": "bash",
    "shellsession": "bash",
    "sh-session": "bash",
    "bash-session": "bash",
    "terminal": "bash",
    # json: comment-tolerant JSON is still JSON at entity granularity
    "json": "json",
    "jsonc": "json",
    "json-object": "json",
    "geojson": "json",
    # sql: a dialect distinction is noise at entity granularity
    "sql": "sql",
    "postgresql": "sql",
    "postgres": "sql",
    "psql": "sql",
    "pgsql": "sql",
    "plpgsql": "sql",
    "mysql": "sql",
    "mariadb": "sql",
    "sqlite": "sql",
    "sqlite3": "sql",
    "tsql": "sql",
    "t-sql": "sql",
    "mssql": "sql",
    "plsql": "sql",
    "sql-server": "sql",
    # yaml
    "yaml": "yaml",
    "yml": "yaml",
    # html: xhtml is HTML. Plain "xml" is not: an info string or a lexer saying
    # xml means XML (a POM, an SVG), and stamping it html would misfile it.
    "html": "html",
    "htm": "html",
    "html5": "html",
    "xhtml": "html",
    # toml
    "toml": "toml",
    # css: Sass, SCSS and Less have their own syntax and stay out
    "css": "css",
    # go
    "go": "go",
    "golang": "go",
    # rust
    "rust": "rust",
    "rs": "rust",
}

_PREFIXES: Final = ("language-", "lang-")


def normalize_lang(raw: str) -> CanonicalLang | None:
    """Canonical token for a language name, or None when outside the vocabulary.

    Accepts what shows up in practice: detector lexer aliases, fence info strings
    (only the first word counts, so ``python title="x"`` works), ``language-``
    class prefixes, and file extensions with or without the leading dot.
    """
    words = raw.strip().split(maxsplit=1)
    if not words:
        return None
    name = words[0].lower().strip("{}").lstrip(".")
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    return _ALIASES.get(name)


@dataclass(frozen=True, slots=True)
class Detection:
    """What the detector concluded, before DEPLOY_THRESHOLD is applied.

    ``confidence`` is a monotone evidence score in [0, 1), not a calibrated
    probability; it means something only when compared with DEPLOY_THRESHOLD.
    ``lang`` is None when nothing scored or when the winning lexer is outside
    the vocabulary; confidence still reports how clearly that lexer won.
    """

    lang: CanonicalLang | None
    confidence: float


_ABSTAIN: Final = Detection(lang=None, confidence=0.0)

# Pygments aliases of the candidate lexers. Deliberately broader than the
# vocabulary: when a snippet's true grammar is absent, the closest present
# grammar wins unopposed and wins confidently, so the frequent confusers must be
# in the race to be runners-up. Order breaks exact ties, which is why each
# subset grammar precedes its echo (see _ECHOES).
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

# A winner's echo is a lexer that matches everything the winner matches: every
# JavaScript program is TypeScript, and the XML lexer tags HTML markup exactly
# as the HTML lexer does. The echo can only outscore the winner with evidence of
# its own (type annotations, an XML prolog), in which case it wins instead; a
# tie is not disagreement and must not cancel the winner's margin.
_ECHOES: Final[dict[str, frozenset[str]]] = {
    "javascript": frozenset({"typescript"}),
    "html": frozenset({"xml"}),
}

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

# Above this size the full race is too slow: every candidate scores a prefix of
# this many characters, and only the leaders are re-scored on the whole text.
_SCREEN_CHARS: Final = 300
_FINALISTS: Final = 3

_WORD: Final = re.compile(r"\w+")


@functools.cache
def _lexers() -> tuple[tuple[str, Lexer, frozenset[_TokenType]], ...]:
    """Candidate lexers with their catch-all token types, built on first use.

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


def _evidence(lexer: Lexer, catch_all: frozenset[_TokenType], code: str) -> float:
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


def _screen_prefix(code: str) -> str:
    cut = code.rfind("\n", 0, _SCREEN_CHARS)
    return code[: cut + 1] if cut > 0 else code[:_SCREEN_CHARS]


def _ranked(code: str) -> list[tuple[float, int, str]]:
    """(score, candidate index, alias), best first, ties to the earlier candidate."""
    lexers = _lexers()
    pool: Iterable[int] = range(len(lexers))
    if len(code) > _SCREEN_CHARS:
        prefix = _screen_prefix(code)
        screened = sorted((-_evidence(lexers[i][1], lexers[i][2], prefix), i) for i in pool)
        pool = sorted(i for _, i in screened[:_FINALISTS])
    scored = [(_evidence(lexers[i][1], lexers[i][2], code), i, lexers[i][0]) for i in pool]
    scored.sort(key=lambda row: (-row[0], row[1]))
    return scored


def _runner_up(ranked: Sequence[tuple[float, int, str]]) -> float:
    """Score of the closest competitor that disagrees about what to stamp."""
    _, _, winner = ranked[0]
    winner_lang = normalize_lang(winner)
    echoes = _ECHOES.get(winner, frozenset())
    for score, _, alias in ranked[1:]:
        if alias in echoes:
            continue
        lang = normalize_lang(alias)
        # A dialect duel (postgresql vs sql) is agreement on the token to stamp.
        if winner_lang is not None and lang == winner_lang:
            continue
        return max(score, 0.0)
    return 0.0


def detect(code: str) -> Detection:
    """Best language for an unlabeled fence and how clearly it won.

    confidence = 1 - exp(-(top - runner_up) / lines): the per-line evidence
    margin between the winning lexer and its closest real competitor. Per line,
    because raw evidence grows with length and would read "long" as "sure".
    """
    if len(code) > MAX_DETECT_CHARS or not code.strip():
        return _ABSTAIN
    if not code.endswith("\n"):
        code += "\n"
    ranked = _ranked(code)
    top, _, winner = ranked[0]
    if top <= 0.0:
        return _ABSTAIN
    margin = top - _runner_up(ranked)
    lines = max(1, len(code.strip("\n").splitlines()))
    confidence = 1.0 - math.exp(-max(margin, 0.0) / lines)
    return Detection(lang=normalize_lang(winner), confidence=confidence)


def detect_lang(code: str) -> CanonicalLang | None:
    """The language to stamp on an unlabeled fence, or None to stamp nothing.

    Two independent gates: the winner must be in the vocabulary, and it must
    have won by at least DEPLOY_THRESHOLD. A confident win by a lexer outside
    the vocabulary is still nothing to stamp.
    """
    found = detect(code)
    if found.lang is None or found.confidence < DEPLOY_THRESHOLD:
        return None
    return found.lang
