"""Glob patterns over slash paths, with ``path.Match`` semantics.

``*`` matches any run of characters except ``/`` and ``?`` one such character,
so ``notes/*.md`` never reaches into ``notes/old/``. ``[...]`` is a character
class (``[^...]`` negated, ``a-z`` ranges) and ``\\`` escapes the next
character. There is no ``**``: a pattern names its depth, as the verify checks
expect their layout to be stated rather than guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from returns.result import Failure, Result, Success

from memhtml.mdindex.errors import BadGlob

GlobMatcher = Callable[[str], bool]


def _class(pattern: str, start: int) -> tuple[str, int] | str:
    """Translate the class opening at ``start``; the regex and the index after it, or a reason."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] == "^"
    if negate:
        i += 1
    body: list[str] = []
    while i < len(pattern) and (pattern[i] != "]" or not body):
        char = pattern[i]
        if char == "\\":
            i += 1
            if i == len(pattern):
                return "unterminated escape in character class"
            char = pattern[i]
        if char == "-" and body and i + 1 < len(pattern) and pattern[i + 1] != "]":
            body.append("-")
        else:
            body.append(re.escape(char))
        i += 1
    if i == len(pattern):
        return "unterminated character class"
    return ("[^/" if negate else "[") + "".join(body) + "]", i + 1


def compile_glob(pattern: str) -> Result[GlobMatcher, BadGlob]:
    """A matcher for whole slash paths, or why the pattern is malformed."""
    if not pattern:
        return Failure(BadGlob(pattern, "empty pattern"))
    parts: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            parts.append("[^/]*")
        elif char == "?":
            parts.append("[^/]")
        elif char == "[":
            translated = _class(pattern, i)
            if isinstance(translated, str):
                return Failure(BadGlob(pattern, translated))
            parts.append(translated[0])
            i = translated[1]
            continue
        elif char == "\\":
            i += 1
            if i == len(pattern):
                return Failure(BadGlob(pattern, "trailing backslash"))
            parts.append(re.escape(pattern[i]))
        else:
            parts.append(re.escape(char))
        i += 1
    try:
        compiled = re.compile("".join(parts), re.DOTALL)
    except re.error as error:
        return Failure(BadGlob(pattern, str(error)))
    return Success(lambda path: compiled.fullmatch(path) is not None)


def glob_files(pattern: str, paths: Iterable[str]) -> Result[tuple[str, ...], BadGlob]:
    """The paths the pattern matches, sorted."""
    return compile_glob(pattern).map(lambda match: tuple(sorted(p for p in paths if match(p))))
