"""The closed vocabulary of fence languages, and folding a name into it.

A stamp becomes a ``lang:`` entity by exact string match, so every way of
naming a language (an info string, a lexer alias, a file extension) must fold
to one token before it is written.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = ["CANONICAL_LANGS", "CanonicalLang", "normalize_lang"]

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
