"""A markdown file's YAML frontmatter, read with a real YAML parser and nothing lost.

Agent memory folders, Obsidian vaults and basic-memory notes all open a file with a
``---`` block of YAML. Every field is kept: the few with a place in a memory file go
there (``name``/``title`` the title, ``description`` the claim, ``type`` the memory
type, ``tags`` and ``aliases`` the head's lists, ``created``/``updated`` the write
stamps), and every other field becomes a facet of the article, so nothing a person
wrote silently disappears. Only the safe constructor reads it: a memory folder is
input from outside, and the full loader would build arbitrary Python objects from it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass

import yaml
from returns.result import Failure, Result, Success

from memhtml.contracts.vocabulary import EdgeRel, MemoryType, is_edge_rel, is_memory_type

TYPE_MAP: dict[str, MemoryType] = {
    "user": "user_preference",
    "feedback": "agent_insight",
    "project": "arc",
    "reference": "semantic",
}
"""The agent-memory types, one to one onto memory types, so two never collapse:
``user`` (who the person is, what they prefer) is a user preference, ``feedback``
(how to work, learned from being corrected) an agent insight, ``project`` (ongoing
work and its course) an arc, ``reference`` (where things are) a semantic fact. A
type that already names a memory type is kept; any other becomes ``semantic``. The
original spelling always stays as the ``type`` facet, so nothing is lost either way."""

TITLE_KEYS = ("name", "title")
CLAIM_KEY = "description"
TYPE_KEY = "type"
TAG_KEYS = ("tags", "tag")
ALIAS_KEYS = ("aliases", "alias")
CREATED_KEYS = ("created", "created_at", "date")
UPDATED_KEYS = ("updated", "updated_at", "modified")
EDGE_KEY = "edges"
"""A mapping of edge rel to link targets (``[[name]]`` or a plain name), as
``memhtml export markdown`` writes it; a rel outside the vocabulary stays a facet."""
_WIKILINK = re.compile(r"^\[\[(.+?)\]\]$")
OWN_FACET_PREFIX = "memhtml-source"
"""Facets the import writes itself; a field of that name in the input is not copied,
so a re-import of an export cannot end with two source facets."""

_FAST_LOADER: type[yaml.CSafeLoader] | None = getattr(yaml, "CSafeLoader", None)
"""libyaml's parser under the same safe constructor and resolver as ``yaml.SafeLoader``
(plain data only), when PyYAML was built with it: about nine times faster on a small
block, which an import of thousands of notes pays once a note."""


_PURE_ONLY = re.compile(r"[\t\ufeff]|(?<![^\s\[{,])[!|>]")
"""Where libyaml reads a block otherwise than the pure parser does, found by running
both over generated blocks: it takes a tab as a separator or a trailing blank (a tab
after ``key:``) that PyYAML refuses, drops a byte-order mark PyYAML keeps as text,
reads a bare ``!`` tag as an empty string rather than null, and takes ``|#`` as a
block scalar that PyYAML refuses. A block holding a tab, a byte-order mark, or a
``!``, ``|`` or ``>`` where a node may start goes to the pure parser; in the middle of
a word they are plain text to both."""


def load_front(block: str) -> object:
    """``yaml.safe_load(block)``, through libyaml when that reads it the same.

    Both parsers feed the one safe constructor, so a block both accept loads to equal
    values. A block libyaml would read differently (``_PURE_ONLY``), or does not
    accept at all (invalid YAML, a lone surrogate it cannot encode), is read by the
    pure parser, so a refusal carries the very message and line ``yaml.safe_load``
    gives."""
    if _FAST_LOADER is not None and _PURE_ONLY.search(block) is None:
        try:
            return yaml.load(block, Loader=_FAST_LOADER)
        except (yaml.YAMLError, UnicodeError):
            pass
    return yaml.safe_load(block)


_FENCE = re.compile(r"---[ \t]*")
_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*")


@dataclass(frozen=True, slots=True)
class Front:
    """What the frontmatter says, split by where each field goes."""

    title: str | None = None
    description: str | None = None
    type: str | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    created: str | None = None
    updated: str | None = None
    facets: tuple[tuple[str, str], ...] = ()
    edges: tuple[tuple[EdgeRel, str], ...] = ()
    """(rel, target name) of each edge the ``edges`` field names."""


def split_front(text: str) -> Result[tuple[dict[str, object], str], str]:
    """The frontmatter mapping and the text after it. No ``---`` first line means no
    frontmatter; an opened block that never closes, or one that is not a YAML
    mapping, is refused: taking it as prose would make ``--- title: x`` a claim."""
    lines = text.split("\n")
    if not lines or _FENCE.fullmatch(lines[0]) is None:
        return Success(({}, text))
    for index, line in enumerate(lines[1:], start=1):
        if _CLOSE.fullmatch(line):
            block = "\n".join(lines[1:index])
            try:
                loaded = load_front(block) if block.strip() else {}
            except yaml.YAMLError as error:
                mark = getattr(error, "problem_mark", None)
                where = f" at line {mark.line + 2}" if mark is not None else ""
                return Failure(f"the frontmatter is not valid YAML{where}: "
                               f"{getattr(error, 'problem', None) or error}")
            except (ValueError, TypeError, AttributeError, OverflowError,
                    RecursionError) as error:
                # The safe constructor raises these, not a YAMLError, for a value its
                # resolver took for a date no calendar holds (``date: 2025-02-30``), a
                # ``!!timestamp`` that is none, or nesting past the interpreter's
                # depth: one note's frontmatter is refused, the import goes on.
                return Failure("the frontmatter is not valid YAML: a value cannot be "
                               f"read ({error})")
            if not isinstance(loaded, dict):
                return Failure("the frontmatter is not a YAML mapping of fields "
                               f"(it reads as {type(loaded).__name__})")
            return Success(({str(k): v for k, v in loaded.items()},
                            "\n".join(lines[index + 1:])))
    return Failure("the frontmatter opened on line 1 with --- never closes; add a "
                   "closing --- line after its fields")


def instant_of(value: object) -> str | None:
    """A YAML date or datetime (or an ISO string) as a UTC instant, else None. A bare
    date is midnight UTC of that day; a naive time is taken as UTC."""
    if isinstance(value, str):
        written = value.strip()
        try:
            value = dt.datetime.fromisoformat(written)
        except ValueError:
            try:
                value = dt.date.fromisoformat(written)
            except ValueError:
                return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, dt.date):
        return f"{value.isoformat()}T00:00:00Z"
    return None


_ASCII_RUN = re.compile(r"[ \t\n\r\f\v]+")


def ascii_collapsed(text: str) -> str:
    """``text`` with each run of ASCII whitespace as one space, trimmed of it."""
    return _ASCII_RUN.sub(" ", text).strip(" ")


def text_of(value: object) -> str:
    """A field's value as one line of text: scalars as written, a list of scalars
    joined by commas, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, list | tuple) and all(
            not isinstance(v, dict | list | tuple) for v in value):
        return ", ".join(text_of(v) for v in value)
    if isinstance(value, str | int | float):
        # ASCII whitespace only, as the store collapses a title or claim: a no-break
        # or ideographic space is text and stays.
        return ascii_collapsed(str(value))
    return json.dumps(value, default=str, ensure_ascii=False, sort_keys=True)


def words_of(value: object) -> tuple[str, ...]:
    """A tags or aliases field: a YAML list, or a string of comma- or space-separated
    words (Obsidian accepts both); a leading ``#`` is dropped."""
    if isinstance(value, str):
        items: list[object] = [w for w in re.split(r"[,\s]+", value) if w]
    elif isinstance(value, list | tuple):
        items = list(value)
    elif value is None:
        items = []
    else:
        items = [value]
    out: list[str] = []
    for item in items:
        word = text_of(item).strip().lstrip("#").strip()
        if word and word not in out:
            out.append(word)
    return tuple(out)


def _first(fields: dict[str, object], keys: tuple[str, ...]) -> tuple[str | None, object]:
    for key in keys:
        if key in fields and fields[key] is not None:
            return key, fields[key]
    return None, None


def _edges_of(value: object) -> tuple[tuple[EdgeRel, str], ...] | None:
    """The edges an ``edges`` mapping names, or None when it is not one this reads
    (then it is kept as a facet). A target is ``[[name]]`` (an alias after ``|`` and a
    heading after ``#`` are dropped) or a plain name."""
    if not isinstance(value, dict) or not all(is_edge_rel(str(k)) for k in value):
        return None
    out: list[tuple[EdgeRel, str]] = []
    for rel, targets in value.items():
        items = targets if isinstance(targets, list) else [targets]
        for item in items:
            if not isinstance(item, str):
                return None
            found = _WIKILINK.match(item.strip())
            name = (found.group(1) if found else item).split("|")[0].split("#")[0].strip()
            if name:
                out.append((str(rel), name))  # type: ignore[arg-type]
    return tuple(out)


def read_front(fields: dict[str, object]) -> Front:
    """The mapping sorted into the memory's places; every other field a facet."""
    used: set[str] = set()
    title_key, title = _first(fields, TITLE_KEYS)
    claim_key = CLAIM_KEY if fields.get(CLAIM_KEY) is not None else None
    type_key = TYPE_KEY if fields.get(TYPE_KEY) is not None else None
    tags_key, tags = _first(fields, TAG_KEYS)
    alias_key, aliases = _first(fields, ALIAS_KEYS)
    created_key, created = _first(fields, CREATED_KEYS)
    updated_key, updated = _first(fields, UPDATED_KEYS)
    created_at, updated_at = instant_of(created), instant_of(updated)
    for key, keep in ((title_key, True), (claim_key, True), (tags_key, True),
                      (alias_key, True), (created_key, created_at is not None),
                      (updated_key, updated_at is not None)):
        if key is not None and keep:
            used.add(key)
    edges = _edges_of(fields.get(EDGE_KEY))
    if edges is not None:
        used.add(EDGE_KEY)
    facets: list[tuple[str, str]] = []
    if type_key is not None:
        facets.append(("type", text_of(fields[type_key])))
        used.add(type_key)
    for key, value in fields.items():
        if key in used or key.startswith(OWN_FACET_PREFIX):
            continue
        facets.append((key, text_of(value)))
    return Front(
        title=text_of(title) or None if title_key else None,
        description=text_of(fields[claim_key]) or None if claim_key else None,
        type=text_of(fields[type_key]) if type_key else None,
        tags=words_of(tags), aliases=words_of(aliases),
        created=created_at, updated=updated_at, facets=tuple(facets),
        edges=edges or (),
    )


def memory_type_of(raw: str | None) -> MemoryType:
    """The memory type a frontmatter ``type`` maps to (see ``TYPE_MAP``)."""
    if raw is None:
        return "semantic"
    name = raw.strip().lower().replace("-", "_")
    if is_memory_type(name):
        return name
    return TYPE_MAP.get(name, "semantic")
