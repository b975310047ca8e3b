"""Which note a link names: the one rule ``import markdown`` and ``md verify`` share.

A ``.md`` path names the file at that path. A wikilink names a note by any name the
note answers to: its path without ``.md``, its file stem, its title, or one of its
aliases, compared case-insensitively with ASCII whitespace at the ends ignored, and
with a trailing ``.md`` dropped (``[[notes/a.md]]``). Where two notes answer to one
name, the first by path wins, so the answer never depends on the order files were
read in. A target written as a store's document path (``/areas/x.html``, the form an
export gives a link to a memory it did not write) names no note: it is a memory of a
store, kept as that address, so it is neither resolved here nor unresolved.

>>> names = NoteNames.of([("notes/deploy_window.md", "Deploy window", ("release day",)),
...                       ("people/priya.md", "Priya Raman", ())])
>>> names.resolve("Deploy Window"), names.resolve("release day"), names.resolve("priya")
('notes/deploy_window.md', 'notes/deploy_window.md', 'people/priya.md')
>>> names.resolve("notes/deploy_window"), names.resolve("deploy_window.md")
('notes/deploy_window.md', 'notes/deploy_window.md')
>>> names.resolve("nobody") is None, is_document_path("/archive/2026/areas/x.html")
(True, True)
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MARKDOWN_SUFFIX = ".md"
_ASCII_WS = " \t\n\r\f"

__all__ = ["NoteLinks", "NoteNames", "derived_title", "is_document_path", "name_key"]


@dataclass(frozen=True, slots=True)
class NoteLinks:
    """What resolving a folder's links needs of one note: its title and aliases, the
    wikilink targets it names, and whether it is a note a link can name (an index
    page, such as ``MEMORY.md``, becomes no memory, so nothing resolves to it)."""

    title: str | None
    aliases: tuple[str, ...]
    targets: tuple[str, ...]
    is_note: bool = True


def name_key(name: str) -> str:
    """A name as links compare it: trimmed of ASCII whitespace, case folded."""
    return name.strip(_ASCII_WS).lower()


def stem_of(path: str) -> str:
    name = posixpath.basename(path)
    return name[: -len(MARKDOWN_SUFFIX)] if name.endswith(MARKDOWN_SUFFIX) else name


def derived_title(path: str) -> str:
    """The title a note with no ``name``, ``title`` or leading ``# heading`` has: its
    file stem with ``-`` and ``_`` read as spaces."""
    return " ".join(stem_of(path).replace("-", " ").replace("_", " ").split())


def is_document_path(target: str) -> bool:
    """A store's document path (``/a/b.html``), which names a memory, not a note."""
    return target.startswith("/") and target.endswith(".html") and "//" not in target \
        and ".." not in target.split("/")


@dataclass(frozen=True, slots=True)
class NoteNames:
    """The names every note of a folder answers to."""

    by_path: dict[str, str]
    by_name: dict[str, str]

    @classmethod
    def of(cls, notes: Iterable[tuple[str, str | None, Sequence[str]]]) -> NoteNames:
        """From each note's path, title and aliases."""
        by_path: dict[str, str] = {}
        by_name: dict[str, str] = {}
        for path, title, aliases in sorted(notes, key=lambda note: note[0]):
            by_path[path] = path
            names = [path[: -len(MARKDOWN_SUFFIX)] if path.endswith(MARKDOWN_SUFFIX)
                     else path, stem_of(path), *([title] if title else []), *aliases]
            for name in names:
                by_name.setdefault(name_key(name), path)
        return cls(by_path, by_name)

    def resolve(self, name: str, is_path: bool = False) -> str | None:
        """The note ``name`` names (a ``.md`` path when ``is_path``), or None."""
        if is_path:
            return self.by_path.get(name)
        key = name_key(name)
        return self.by_name.get(key) or self.by_name.get(key.removesuffix(MARKDOWN_SUFFIX))
