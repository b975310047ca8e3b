"""A markdown file's YAML frontmatter, read with a real YAML parser and nothing lost.

Agent memory folders, Obsidian vaults and basic-memory notes all open a file with a
``---`` block of YAML. This module reads the block into plain mappings, lists and
strings; ``markdown_fields`` sorts the fields into the memory's places.

A memory folder is input from outside, so the block is read as data and within
bounds. Only the parser's events are used: no constructor runs, so no tag can build
an object, and keys and scalars stay the text written (YAML 1.1 would read ``1:`` and
``true:`` as two keys that hash alike, and ``no`` as False). A scalar written quoted
or as a block (``'1.10'``, ``|``) comes back as ``Quoted``, a ``str`` that remembers
it, so the export can write it the way it was and another YAML reader keeps reading
``version: "1.10"`` as text. Aliases are refused where the parser meets them (nine
nested ``&a [*a, ...]`` lines stand for 387 million values), and so is nesting, a
count of values or a block past its cap: a refusal costs the parse up to that point
and names the note.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeAlias

import yaml
from returns.result import Failure, Result, Success

from memhtml.store.errors import (
    FrontmatterDuplicateField,
    FrontmatterOverLimit,
    FrontmatterRefused,
)

_FAST_LOADER: type[yaml.CSafeLoader] | None = getattr(yaml, "CSafeLoader", None)
"""libyaml's parser, when PyYAML was built with it: its events are the pure parser's,
made several times faster, which an import of thousands of notes pays once a note."""


_PURE_ONLY = re.compile(r"[\t\ufeff]|(?<![^\s\[{,])[!|>]")
"""Where libyaml reads a block otherwise than the pure parser does, found by running
both over generated blocks: it takes a tab as a separator or a trailing blank (a tab
after ``key:``) that PyYAML refuses, drops a byte-order mark PyYAML keeps as text,
reads a bare ``!`` tag as an empty string rather than null, and takes ``|#`` as a
block scalar that PyYAML refuses. A block holding a tab, a byte-order mark, or a
``!``, ``|`` or ``>`` where a node may start goes to the pure parser; in the middle of
a word they are plain text to both."""

MAX_FRONT_CHARS = 32 * 1024
"""The largest frontmatter block read (characters between the fences). A note's
fields fit in a few hundred; the cap keeps the pure parser, which reads about 100 KB
a second of dense flow YAML, well under a second on any block."""
MAX_FRONT_NODES = 2048
"""The most values (scalars, lists, mappings, keys counted) one frontmatter holds."""
MAX_FRONT_DEPTH = 32
"""The deepest nesting of lists and mappings read (``edges`` is three deep)."""

_NULL = re.compile(r"~|null|Null|NULL|")
"""The plain scalars YAML reads as null: a field written with no value (or ``~``,
``null``) is absent, as it is to every YAML reader."""
_NULL_TAG = "tag:yaml.org,2002:null"


class FrontLimitError(Exception):
    """The block crossed one of the bounds above; raised while parsing, before any
    value past the bound is built."""

    def __init__(self, limit: str, line: int, reason: str) -> None:
        super().__init__(reason)
        self.limit, self.line, self.reason = limit, line, reason


class FrontShapeError(Exception):
    """The block is YAML but not the shape of a note's fields: a key that is a list or
    a mapping, or a second document."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(problem)
        self.line, self.problem = line, problem


class FrontDuplicateError(Exception):
    """A mapping names one key twice, as written."""

    def __init__(self, name: str, lines: tuple[int, int]) -> None:
        super().__init__(name)
        self.name, self.lines = name, lines


def _line(event: yaml.Event) -> int:
    """The 0-based line of the block an event starts on."""
    mark = getattr(event, "start_mark", None)
    return mark.line if mark is not None else 0


@dataclass(slots=True)
class _Open:
    """A list or mapping being read, and for a mapping the key waiting for its value
    and the line of each key read so far."""

    value: list[object] | dict[str, object]
    key: str | None = None
    keys: dict[str, int] = field(default_factory=dict)


class Quoted(str):
    """A scalar written quoted or as a block scalar: its text, and the fact that the
    writer did not leave it plain (so a reader typing scalars keeps it text)."""

    __slots__ = ()


def _scalar(event: yaml.ScalarEvent) -> str | None:
    """A scalar as the text written (quotes and escapes read, no type guessed): a
    plain null is None, a quoted or block one ``Quoted``, everything else its string.
    YAML 1.1 would turn ``1.10`` into ``1.1``, ``012`` into ``10``, ``12:30`` into
    ``750`` and ``no`` into ``False``; a note's field is text to its writer, so it is
    kept as they wrote it."""
    if event.tag == _NULL_TAG:
        return None
    if event.tag in (None, "!") and event.implicit[0] and _NULL.fullmatch(event.value):
        return None
    return Quoted(event.value) if event.style else str(event.value)


def _put(top: _Open, value: object, event: yaml.Event) -> None:
    """Place ``value`` in the open list or mapping: appended, taken as the next key
    (never one read before), or stored under the waiting key."""
    if isinstance(top.value, list):
        top.value.append(value)
    elif top.key is None:
        key = str(value)
        if key in top.keys:
            raise FrontDuplicateError(key, (top.keys[key], _line(event)))
        top.keys[key] = _line(event)
        top.key = key
    else:
        top.value[top.key] = value
        top.key = None


def _key_of(event: yaml.ScalarEvent) -> str:
    """A key as written: ``1``, ``true``, ``null`` and ``2024-01-01`` are the names
    a person typed, never an int, a bool, None or a date (two of which would hash
    alike and collide)."""
    return str(event.value)


def _built(events: Iterator[yaml.Event]) -> object:
    """The value a block's events describe, built without recursion and refused at
    the first alias, or past ``MAX_FRONT_DEPTH`` or ``MAX_FRONT_NODES``: a refusal
    happens as the parser reaches it, so nothing past a bound is ever built."""
    stack: list[_Open] = []
    root: object = None
    nodes = documents = 0
    for event in events:
        if isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise FrontShapeError(_line(event), (
                    "a second document begins here; a frontmatter is one mapping of "
                    "fields"))
            continue
        if isinstance(event, yaml.AliasEvent):
            raise FrontLimitError("alias", _line(event), (
                f"the frontmatter uses an alias (*{event.anchor}); aliases are not read "
                "in frontmatter, since a few of them can stand for billions of values: "
                "write the value out"))
        if isinstance(event, yaml.CollectionEndEvent):
            done = stack.pop()
            if stack:
                _put(stack[-1], done.value, event)
            else:
                root = done.value
            continue
        if not isinstance(event, yaml.NodeEvent):
            continue
        nodes += 1
        if nodes > MAX_FRONT_NODES:
            raise FrontLimitError("nodes", _line(event), (
                f"the frontmatter holds more than {MAX_FRONT_NODES} values; a note's "
                "fields are a few: move the rest into the note's text"))
        awaiting_key = bool(stack) and isinstance(stack[-1].value, dict) \
            and stack[-1].key is None
        if isinstance(event, yaml.ScalarEvent):
            value = _key_of(event) if awaiting_key else _scalar(event)
            if stack:
                _put(stack[-1], value, event)
            else:
                root = value
            continue
        if awaiting_key:
            raise FrontShapeError(_line(event),
                                  "a field name must be text, not a list or a mapping")
        if len(stack) >= MAX_FRONT_DEPTH:
            raise FrontLimitError("depth", _line(event), (
                f"the frontmatter nests lists or mappings more than {MAX_FRONT_DEPTH} "
                "deep; write its fields flat"))
        opened: list[object] | dict[str, object] = \
            [] if isinstance(event, yaml.SequenceStartEvent) else {}
        stack.append(_Open(opened))
    return root


def load_front(block: str) -> object:
    """The block's value, every scalar and key as written, within the bounds above.

    libyaml parses it when it reads the block as PyYAML's own parser does; a block it
    would read differently (``_PURE_ONLY``), or does not accept at all (invalid YAML,
    a lone surrogate it cannot encode), is parsed again by the pure parser, so a
    refusal carries the message and line the pure parser gives. Both feed the one
    builder, so a bound is met the same way on either path, and a bound crossed is
    final (``FrontLimitError``, ``FrontDuplicateError``, ``FrontShapeError``)."""
    if len(block) > MAX_FRONT_CHARS:
        raise FrontLimitError("size", 0, (
            f"the frontmatter is {len(block)} characters, over the {MAX_FRONT_CHARS} read; "
            "move long text into the note's body"))
    if _FAST_LOADER is not None and _PURE_ONLY.search(block) is None:
        try:
            return _built(yaml.parse(block, Loader=_FAST_LOADER))
        except (yaml.YAMLError, UnicodeError):
            pass
    return _built(yaml.parse(block, Loader=yaml.SafeLoader))


_FENCE = re.compile(r"---[ \t]*")
_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*")


FrontFailure: TypeAlias = str | FrontmatterRefused
"""Why a note's frontmatter cannot be read: a bound or a repeated field as a typed
error (``file`` left empty for the caller to name), anything else in words."""


def split_front(text: str) -> Result[tuple[dict[str, object] | None, str], FrontFailure]:
    """The frontmatter mapping and the text after it. No ``---`` first line means no
    frontmatter (None); an opened block that never closes, or one that is not a YAML
    mapping, is refused: taking it as prose would make ``--- title: x`` a claim."""
    lines = text.split("\n")
    if not lines or _FENCE.fullmatch(lines[0]) is None:
        return Success((None, text))
    for index, line in enumerate(lines[1:], start=1):
        if _CLOSE.fullmatch(line):
            block = "\n".join(lines[1:index])
            try:
                loaded = load_front(block) if block.strip() else {}
            except FrontLimitError as error:
                # Block line 0 is the note's line 2 (after the opening fence).
                return Failure(FrontmatterOverLimit(
                    "", error.limit, error.line + 2 if error.limit != "size" else 1,
                    error.reason))
            except FrontDuplicateError as error:
                first, again = (n + 2 for n in error.lines)
                return Failure(FrontmatterDuplicateField("", error.name, (first, again), (
                    f"the frontmatter names the field {error.name!r} twice (lines {first} "
                    f"and {again}); keep one, so neither value is dropped")))
            except FrontShapeError as error:
                return Failure(f"the frontmatter is not valid YAML at line {error.line + 2}: "
                               f"{error.problem}")
            except yaml.YAMLError as error:
                mark = getattr(error, "problem_mark", None)
                where = f" at line {mark.line + 2}" if mark is not None else ""
                return Failure(f"the frontmatter is not valid YAML{where}: "
                               f"{getattr(error, 'problem', None) or error}")
            if not isinstance(loaded, dict):
                return Failure("the frontmatter is not a YAML mapping of fields "
                               f"(it reads as {_kind_of(loaded)})")
            return Success((loaded, "\n".join(lines[index + 1:])))
    return Failure("the frontmatter opened on line 1 with --- never closes; add a "
                   "closing --- line after its fields")


def _kind_of(value: object) -> str:
    """What a block that is no mapping reads as, in YAML's words."""
    if value is None:
        return "nothing"
    return "a list" if isinstance(value, list) else "text"


_TIMESTAMP = yaml.constructor.SafeConstructor.timestamp_regexp
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


def _yaml_instant(written: str) -> dt.date | None:
    """A YAML timestamp ISO parsing does not take (``2001-12-14 21:59:43.10 -5``), as
    YAML reads it, or None."""
    if _TIMESTAMP.match(written) is None:
        return None
    try:
        built = yaml.constructor.SafeConstructor().construct_yaml_timestamp(
            yaml.ScalarNode(_TIMESTAMP_TAG, written))
    except (ValueError, OverflowError):
        return None
    return built if isinstance(built, dt.date) else None


_DAY_FIRST = re.compile(r"\d{4}-\d\d-\d\d")


def instant_of(value: object) -> str | None:
    """A date or an instant, written as ISO 8601 or as a YAML timestamp, as a UTC
    instant, else None. A bare date is midnight UTC of that day; a naive time is
    taken as UTC. Only text opening with a ``YYYY-MM-DD`` day is read as one, so a
    number (``20240301``) stays a number."""
    if isinstance(value, str):
        written = value.strip()
        if _DAY_FIRST.match(written) is None:
            return None
        try:
            value = dt.datetime.fromisoformat(written)
        except ValueError:
            value = _yaml_instant(written)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.replace(microsecond=0).isoformat() + "Z"
    if isinstance(value, dt.date):
        return f"{value.isoformat()}T00:00:00Z"
    return None


_ASCII_RUN = re.compile(r"[ \t\n\r\f\v]+")


def ascii_collapsed(text: str) -> str:
    """``text`` with each run of ASCII whitespace as one space, trimmed of it."""
    return _ASCII_RUN.sub(" ", text).strip(" ")
