"""Markdown memories as memory files: a pure conversion, one file at a time.

A markdown memory is a file with an optional frontmatter block (``name``,
``description``, ``type``) and paragraphs separated by blank lines. It becomes a
memory whose title is the frontmatter name (else a leading ``# heading``, else the
file name), whose claim is the description (else the first paragraph), and whose
body is the remaining paragraphs, verbatim; a fenced code paragraph becomes a code
figure. Each result is rendered and parsed once here, so a file the write door
would refuse is reported with its reasons instead of failing the whole import.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from returns.result import Failure, Result

from memhtml.contracts.vocabulary import MemoryType, is_memory_type
from memhtml.format import (
    NewMemoryInput,
    block_tag_in_run,
    fenced_block_of,
    parse_memory,
    render_template,
    split_paragraphs,
)
from memhtml.store.errors import describe
from memhtml.store.inputs import WriteInput
from memhtml.store.layout import normalize_directory, slug_of
from memhtml.store.paths import Names, Spellings, new_memory_path, spelled

MARKDOWN_SUFFIX = ".md"
CHECK_AT = "2026-01-01T00:00:00Z"
"""The stamp the validation render uses; the door stamps the real write time."""
TYPE_ALIASES: dict[str, MemoryType] = {
    "user": "user_preference",
    "feedback": "user_preference",
    "preference": "user_preference",
    "project": "semantic",
    "reference": "semantic",
    "fact": "semantic",
    "insight": "agent_insight",
    "howto": "procedural",
    "event": "episodic",
}
"""Frontmatter types other tools write, mapped to the nearest memory type; a type
that is already a memory type is kept, anything else becomes ``semantic``."""

_FENCE = "---"
_HEADING = re.compile(r"#{1,6}[ \t]+(.+?)[ \t#]*")
_WS = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Frontmatter:
    name: str | None = None
    description: str | None = None
    type: str | None = None


@dataclass(frozen=True, slots=True)
class ImportedMemory:
    """One converted file: where it came from and what the write door gets."""

    source: str
    data: WriteInput


@dataclass(frozen=True, slots=True)
class NotConverted:
    source: str
    reason: str


@dataclass(frozen=True, slots=True)
class MarkdownImport:
    memories: tuple[ImportedMemory, ...]
    skipped: tuple[NotConverted, ...]


def _unquoted(raw: str) -> str | None:
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1].strip()
    return value or None


def split_frontmatter(text: str) -> tuple[Frontmatter, str]:
    """The frontmatter's three fields and the text after it. A file whose first line is
    not ``---``, or whose block never closes, has none and keeps all its text."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != _FENCE:
        return Frontmatter(), text
    fields: dict[str, str | None] = {}
    for index, line in enumerate(lines[1:], start=1):
        if line.startswith(_FENCE):
            front = Frontmatter(fields.get("name"), fields.get("description"),
                                fields.get("type"))
            return front, "\n".join(lines[index + 1:])
        key, sep, value = line.partition(":")
        key = key.strip()
        if sep and key in {"name", "description", "type"} and key not in fields:
            fields[key] = _unquoted(value)
    return Frontmatter(), text


def memory_type_of(raw: str | None) -> MemoryType:
    if raw is None:
        return "semantic"
    name = raw.strip().lower().replace("-", "_")
    if is_memory_type(name):
        return name
    return TYPE_ALIASES.get(name, "semantic")


def one_line(text: str) -> str:
    return _WS.sub(" ", text).strip()


def target_path(source: str, directory: str) -> str:
    """``<directory>/<source's directories, slugged>/<slug of the stem>.html``."""
    parent, name = posixpath.split(source)
    stem = name[: -len(MARKDOWN_SUFFIX)] if name.endswith(MARKDOWN_SUFFIX) else name
    folders = [slug_of(part) for part in parent.split("/") if part]
    return normalize_directory("/".join([directory.strip("/"), *folders])) + \
        f"{slug_of(stem)}.html"


def _title_of(source: str, front: Frontmatter, paragraphs: list[str]) -> str:
    if front.name:
        return front.name
    if paragraphs:
        heading = _HEADING.fullmatch(paragraphs[0].strip())
        if heading and "\n" not in paragraphs[0].strip():
            paragraphs.pop(0)
            return heading.group(1).strip()
    stem = posixpath.basename(source)
    stem = stem[: -len(MARKDOWN_SUFFIX)] if stem.endswith(MARKDOWN_SUFFIX) else stem
    return one_line(stem.replace("-", " ").replace("_", " ")) or "memory"


def convert_markdown(source: str, raw: bytes, directory: str, tags: Sequence[str] = ()
                     ) -> Result[WriteInput, str]:
    """One markdown file as a write request, or why it cannot be one."""
    try:
        text = raw.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return Failure("not UTF-8 text")
    front, rest = split_frontmatter(text.removeprefix("\ufeff"))
    paragraphs = [p.strip() for p in split_paragraphs(rest) if p.strip()]
    title = _title_of(source, front, paragraphs)
    if front.description:
        claim = one_line(front.description)
    elif paragraphs and fenced_block_of(paragraphs[0]) is None:
        claim = one_line(paragraphs.pop(0))
    elif paragraphs:
        return Failure("the first paragraph is code and there is no frontmatter description "
                       "to take the claim from")
    else:
        return Failure("no text: nothing to take a claim from")
    problems = []
    for label, value in [("title", title), ("claim", claim),
                         *((f"paragraph {i}", p) for i, p in enumerate(paragraphs, start=1)
                           if fenced_block_of(p) is None)]:
        hit = block_tag_in_run(value)
        if hit is not None:
            problems.append(f"{label} holds raw HTML ({hit.tag} at offset {hit.offset})")
    if problems:
        return Failure("; ".join(problems))
    data = WriteInput(title=title, claim=claim, memory_type=memory_type_of(front.type),
                      body=tuple(paragraphs), tags=tuple(tags),
                      path=target_path(source, directory))
    rendered = render_template(NewMemoryInput(
        title=data.title, claim=data.claim, memory_type=data.memory_type, at=CHECK_AT,
        body=data.body, tags=data.tags))
    return parse_memory(rendered, data.path or source).map(lambda _: data).alt(
        lambda error: "; ".join(error.violations) or error.reason)


def convert_tree(
    files: Iterable[tuple[str, bytes]],
    directory: str,
    tags: Sequence[str] = (),
    taken: Iterable[str] = (),
    on_file: Callable[[str], None] | None = None,
) -> MarkdownImport:
    """Every file of a tree, in path order: converted, or reported with its reason.

    ``taken`` lists store paths already holding a memory; a file that would land on
    one, or on a path an earlier file of the import took, is reported rather than
    renamed, so a second import of the same directory adds nothing silently. So is
    one whose path the write door would refuse as a new name (a Windows device name
    such as ``con.md``, a name too long, one that differs from a taken path or
    directory only by case or Unicode normalization), so one such file cannot sink
    the whole import's commit. Each path is spelled as the door will store it.
    """
    used = set(taken)
    names = Names((Spellings.of(used),))
    memories: list[ImportedMemory] = []
    skipped: list[NotConverted] = []
    for source, raw in sorted(files):
        if on_file is not None:
            on_file(source)
        if not source.endswith(MARKDOWN_SUFFIX):
            skipped.append(NotConverted(source, "not a markdown (.md) file"))
            continue
        converted = convert_markdown(source, raw, directory, tags)
        data = converted.value_or(None)
        if data is None:
            skipped.append(NotConverted(source, converted.swap().value_or("not converted")))
            continue
        path = spelled(data.path or "", names)
        if path in used:
            skipped.append(NotConverted(source, f"would land on {path}, which another "
                                                 "memory already holds"))
            continue
        refused = new_memory_path(path, names).swap().value_or(None)
        twin = names.twin(path)
        if refused is not None or twin is not None:
            why = describe(refused) if refused is not None else f"path {path!r}: {twin}"
            skipped.append(NotConverted(source, f"would land on a refused path: {why}"))
            continue
        used.add(path)
        memories.append(ImportedMemory(source, replace(data, path=path)))
    return MarkdownImport(tuple(memories), tuple(skipped))
