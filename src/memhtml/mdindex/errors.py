"""The mdindex room's errors: one closed union, frozen dataclasses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias


@dataclass(frozen=True, slots=True)
class ReadFailure:
    """The reader could not list or read a path."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class EmptyCorpus:
    """A build found nothing to index.

    An index over nothing would answer every membership question "not known",
    confidently and wrongly, so an empty corpus is an error and never an empty
    index.
    """

    markdown_files: int
    reason: str


@dataclass(frozen=True, slots=True)
class BadGlob:
    """A glob pattern that cannot be matched (unterminated class, empty)."""

    pattern: str
    reason: str


@dataclass(frozen=True, slots=True)
class EmptyCheck:
    """A verify check whose glob matched no file.

    A check over nothing has verified nothing; reporting it as a pass would
    hide a wrong root or a mistyped pattern.
    """

    check: str
    patterns: tuple[str, ...]
    matched: tuple[int, ...]
    reason: str


@dataclass(frozen=True, slots=True)
class ChannelRefused:
    """A channel list that names an unknown channel, names one twice, or is empty."""

    name: str
    reason: str


MdIndexError: TypeAlias = ReadFailure | EmptyCorpus | BadGlob | EmptyCheck | ChannelRefused
