"""The fenced-code grammar, and only the grammar.

There is one copy because two callers need the same answer: the template renders
a fenced paragraph as a figure, and the write doors split prose into paragraphs
keeping a fence whole. Two answers to "is this a fence?" would let the splitter
keep a block the template then fails to recognize.

Backtick fences only, as CommonMark defines them: three or more backticks open,
a run at least as long closes, and the info string holds no backtick. Tilde
fences are left out on purpose; agents write backticks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LANG_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+#.\-]{0,31}")
"""A language name in an info string: covers ts, c++, c#, objective-c and python3,
and admits no whitespace or markup character, so a ``data-lang`` value is always
safe in view-source and safe to promote to a ``lang:`` entity."""

_OPENING = re.compile(r" {0,3}(`{3,})([^`]*)")
_CLOSING = re.compile(r" {0,3}(`{3,})[ \t]*")


@dataclass(frozen=True, slots=True)
class FencedBlock:
    """One fenced block: the code verbatim, and the info string's language if any."""

    code: str
    lang: str | None = None


def fence_opening_of(line: str) -> str | None:
    """The backtick run opening a fence on this line, or None. Its length is what a
    closing line must reach."""
    match = _OPENING.fullmatch(line.rstrip("\r"))
    return match.group(1) if match else None


def closes_fence(line: str, opening: str) -> bool:
    """True when ``line`` closes a fence opened by ``opening``: a run as long or
    longer, and nothing else on the line."""
    match = _CLOSING.fullmatch(line.rstrip("\r"))
    return match is not None and len(match.group(1)) >= len(opening)


def info_lang(line: str) -> str | None:
    """The first info-string token of an opening line, lowercased, when it is a
    well-formed language token."""
    match = _OPENING.fullmatch(line.rstrip("\r"))
    if match is None:
        return None
    words = match.group(2).split()
    if not words or LANG_TOKEN.fullmatch(words[0]) is None:
        return None
    return words[0].lower()


def fenced_block_of(paragraph: str) -> FencedBlock | None:
    """The paragraph as a fenced block, or None when it is not one, whole.

    Prose sharing a paragraph with a fence is not a fence, and neither is an
    unterminated fence: rendering either as code would commit markup the author may
    not have finished, while escaping it as text keeps the file saying exactly what
    the author typed.
    """
    lines = paragraph.replace("\r\n", "\n").split("\n")
    if len(lines) < 2:
        return None
    opening = fence_opening_of(lines[0])
    if opening is None or not closes_fence(lines[-1], opening):
        return None
    body = lines[1:-1]
    if any(closes_fence(line, opening) for line in body):
        return None
    return FencedBlock("\n".join(body), info_lang(lines[0]))


def split_paragraphs(text: str) -> list[str]:
    """Split prose on blank lines, keeping a fenced block whole even when its code
    holds blank lines."""
    out: list[str] = []
    current: list[str] = []
    opening: str | None = None
    for line in text.replace("\r\n", "\n").split("\n"):
        if opening is not None:
            current.append(line)
            if closes_fence(line, opening):
                opening = None
            continue
        if not line.strip():
            if current:
                out.append("\n".join(current))
                current = []
            continue
        if not current:
            opening = fence_opening_of(line)
        current.append(line)
    if current:
        out.append("\n".join(current))
    return out
