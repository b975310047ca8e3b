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


TRASH_DIR = ".trash"
"""Where editors (Obsidian among them) move deleted notes: never part of a corpus."""


def hidden_or_trash(path: str) -> bool:
    """Whether the last segment of a slash path is hidden (``.obsidian``, ``.trash``)."""
    name = path.rsplit("/", 1)[-1]
    return name.startswith(".") or name == TRASH_DIR


def exclusion(patterns: Iterable[str], *, hidden: bool = True) -> Result[GlobMatcher, BadGlob]:
    """One ``Exclude`` from the caller's globs, hidden entries and ``.trash`` included.

    A pattern holding a ``/`` is matched against the whole slash path, as
    ``glob_files`` matches; one without is matched against the last segment, so
    ``drafts`` or ``*.tmp.md`` excludes at every depth, the way an ignore file
    reads. The exclusion is asked about directories and files alike, and a
    directory excluded takes everything below it along.
    """
    whole: list[GlobMatcher] = []
    named: list[GlobMatcher] = []
    for pattern in patterns:
        compiled = compile_glob(pattern)
        if not isinstance(compiled, Success):
            return compiled
        (whole if "/" in pattern else named).append(compiled.unwrap())

    def excluded(path: str) -> bool:
        name = path.rsplit("/", 1)[-1]
        return (
            (hidden and hidden_or_trash(path))
            or any(match(path) for match in whole)
            or any(match(name) for match in named)
        )

    return Success(excluded)
