"""Active memories as markdown files: a pure conversion, the whole store at once.

A store is exported so that another tool (an agent's markdown memory folder, an
Obsidian vault) can read it, and so that ``import markdown`` brings it back as it
was; the two are inverses both ways (docs/design.md, "Markdown interop"). Each
active memory becomes one file: an imported one at its note's own name
(``memhtml-source``) in its store folder, one written in the store at its store path
with ``.md``. The file is a YAML frontmatter block and the article as markdown
(``markdown_write``).

An imported memory is written the way its note was (``memhtml-source-shape``): its
keys in their order and spelling, each with the memory's value now, its other fields
in the style they were written, its claim where it stood, its links as it named them
while they still name the same file; then whatever the store has set since. A memory
written in the store gets the full frontmatter: title, claim, type, dates, every
other meta that is set, tags, entities, aliases, and the edges the body does not
already make, as ``[[wikilinks]]`` grouped by rel.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote

from returns.result import Success

from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.format.hash import collapse_ascii_whitespace
from memhtml.format.tree import HtmlElement, tag_of
from memhtml.mdindex.links import NoteNames, derived_title, is_document_path
from memhtml.store.layout import slug_of
from memhtml.store.markdown_convert import Article, convert_body
from memhtml.store.markdown_decisions import SOURCE_FACET, target_rows
from memhtml.store.markdown_fields import ROLE_KEYS, ROLES, memory_type_of, number_text
from memhtml.store.markdown_front import split_front
from memhtml.store.markdown_index import exported_index
from memhtml.store.markdown_shape import Shape, decode_shape
from memhtml.store.markdown_write import (
    Writing,
    article_markdown,
    article_root,
    code_fence,
    escape_inline,
    escape_text,
)
from memhtml.store.markdown_yaml import block, facet_block, key_of, mapping, scalar

MARKDOWN_SUFFIX = ".md"
HTML_SUFFIX = ".html"

DEFAULT_ORDER: tuple[str, ...] = (
    "title", "claim", "type", "created", "updated", "valid_from", "valid_until",
    "task_status", "due", "confidence", "importance", "author", "session", "prompt",
    "turn", "reprieves", "needs_revision", "tags", "entities", "aliases", "edges")
"""The places a memory written in the store fills, in this order, each when set; an
imported memory's fields the note did not have follow its own keys in this order."""
DEFAULT_KEYS: Mapping[str, str] = {**{role: keys[0] for role, keys in ROLE_KEYS},
                                   "title": "name"}


@dataclass(frozen=True, slots=True)
class MarkdownExport:
    """What an export produced: each file's text by its relative path, and counts."""

    files: dict[str, str] = field(default_factory=dict)
    memories: int = 0
    edges: int = 0
    dangling: int = 0
    """Edges whose target is not among the exported memories (archived or missing):
    kept as a wikilink to the target's document path, which no exported file answers
    and the import keeps as that address."""
    pages: int = 0
    """Markdown pages of the store (imported indexes) written beside the memories."""


def markdown_path(store_path: str) -> str:
    """A memory's store-path name: its tree path with ``.md`` in place of ``.html``."""
    tree = to_tree_path(store_path)
    stem = tree[: -len(HTML_SUFFIX)] if tree.endswith(HTML_SUFFIX) else tree
    return stem + MARKDOWN_SUFFIX


def restored_path(record: MemoryRecord) -> str | None:
    """An imported memory's export path: its store folder with the note's own folder
    names and file name in place of the slugged ones (when the folder still ends in
    them), or None for a memory that names no note."""
    source = record.source
    if not source or source.startswith("/") or ".." in source.split("/"):
        return None
    folder = posixpath.dirname(to_tree_path(record.path))
    note_folders = [p for p in posixpath.dirname(source).split("/") if p]
    parts = folder.split("/") if folder else []
    slugged = [slug_of(p) for p in note_folders]
    if note_folders and parts[len(parts) - len(slugged):] == slugged:
        parts = parts[:len(parts) - len(slugged)] + note_folders
    name = posixpath.basename(source)
    if not name.removesuffix(MARKDOWN_SUFFIX).strip("."):
        return None  # a source naming a folder or a bare suffix: no note's own name
    if not name.endswith(MARKDOWN_SUFFIX):
        name += MARKDOWN_SUFFIX
    return "/".join([*parts, name])


def export_paths(records: Iterable[MemoryRecord]) -> dict[str, str]:
    """Each record's export path, by store path. Every store-path name is claimed
    first; then, in store-path order, each imported memory takes its note's own name
    when no other file claims it (case aside), else keeps its store-path name."""
    ordered = sorted(records, key=lambda r: r.path)
    paths = {r.path: markdown_path(r.path) for r in ordered}
    claimed = {paths[r.path].casefold(): r.path for r in ordered}
    for record in ordered:
        restored = restored_path(record)
        if restored is None or restored == paths[record.path]:
            continue
        holder = claimed.get(restored.casefold())
        if holder is None:
            claimed[restored.casefold()] = record.path
            paths[record.path] = restored
    return paths


def _link_names(paths: Iterable[str]) -> dict[str, str]:
    """Each exported file's wikilink name: its stem when no other file shares it
    (case aside), else its path without the suffix, as Obsidian writes them."""
    stems: dict[str, int] = {}
    names = {}
    for path in paths:
        stem = posixpath.basename(path)[: -len(MARKDOWN_SUFFIX)]
        stems[stem.casefold()] = stems.get(stem.casefold(), 0) + 1
        names[path] = stem
    return {path: stem if stems[stem.casefold()] == 1 else path[: -len(MARKDOWN_SUFFIX)]
            for path, stem in names.items()}


@dataclass(frozen=True, slots=True)
class _Folder:
    """The exported files: each memory's path, each file's wikilink name, and the
    names every file answers to (so a link can keep the name its note wrote)."""

    paths: Mapping[str, str]
    names: Mapping[str, str]
    notes: NoteNames

    def target(self, href: str | None) -> str | None:
        """The exported file an ``href`` names, or None."""
        if not href or not href.startswith("/") or href.startswith("//"):
            return None
        return self.paths.get(to_tree_path(href))

    def resolve(self, name: str, is_path: bool) -> str | None:
        """The exported file a link names (a ``.md`` path already taken relative to the
        folder's root), as the import will resolve it."""
        return self.notes.resolve(name, is_path)


_WIKILINK_ESCAPES = re.compile(r"[\\`*<&\[\]]|(?<![^\W_])_|_(?![^\W_])")
"""What must be escaped inside a wikilink for markdown to leave it one run of text: an
escape, a code span, emphasis (``_`` only where it is not inside a word), raw HTML,
an entity, a bracket. Nothing else is, since other tools (Obsidian) read the name
inside ``[[...]]`` as written, escapes and all."""


def _raw(text: str) -> str:
    """A wikilink's name or label, escaped only where markdown would read markup."""
    return _WIKILINK_ESCAPES.sub(lambda hit: "\\" + hit.group(0), text)


def _shown(written: str) -> str:
    """The text the import shows for ``[[written]]``."""
    name, _, heading = written.partition("#")
    return written if name else heading


def _dest(href: str) -> str:
    return href.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def _title(el: HtmlElement) -> str:
    title = el.get("title")
    return f' "{title.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"' \
        if title else ""


def _link(folder: _Folder, own: str, el: HtmlElement, label: str) -> str:
    """An anchor as markdown: a wikilink as its note wrote it while that still names
    the same file, else by the file's name; a relative link recomputed when its file
    moved; a web link as it is."""
    href = el.get("href")
    target = folder.target(href)
    plain = collapse_ascii_whitespace("".join(el.itertext())).strip(" ")
    written = el.get("data-wikilink")
    md_href = el.get("data-md-href")
    if written is None and md_href is None and href and href.startswith("/"):
        written = folder.names[target] if target is not None else href
    if written is not None:
        name, _, heading = written.partition("#")
        use = written
        if target is not None and name and folder.resolve(name, False) != target:
            use = folder.names[target] + (f"#{heading}" if heading else "")
        elif target is None and href and is_document_path(href):
            use = href
        alias = "" if use == written and plain == _shown(written) else "|" + _raw(plain)
        return f"[[{_raw(use)}{alias}]]"
    if md_href is not None:
        dest = md_href
        path, hash_, fragment = md_href.partition("#")
        here = posixpath.dirname(own)
        if target is not None and posixpath.normpath(
                posixpath.join(here, unquote(path))) != target:
            dest = _dest(posixpath.relpath(target, here or ".")) + hash_ + fragment
        return f"[{label}]({dest or '<>'}{_title(el)})"
    if href:
        return f"[{label}]({_dest(href)}{_title(el)})"
    return label


def _front_dl(article: HtmlElement | None, shape: Shape
              ) -> tuple[HtmlElement, dict[str, list[str]]] | None:
    """The article's last block when it is the ``<dl>`` the import made of the note's
    other fields, with each key's values as written."""
    if article is None or shape.keys is None:
        return None
    blocks = [c for c in article if tag_of(c)]
    last = blocks[-1] if blocks else None
    if last is None or tag_of(last) != "dl" or (last.tail or "").strip():
        return None
    keys = [k for k, code in shape.keys if code not in ROLES or code == "type"]
    values: dict[str, list[str]] = {}
    order: list[str] = []
    for child in last:
        tag = tag_of(child)
        text = "".join(child.itertext())
        if tag == "dt":
            order.append(text)
            values[text] = []
        elif tag == "dd" and order:
            values[order[-1]].append(text)
        elif tag:
            return None
    expected = iter(keys)
    if len(set(order)) != len(order) or not all(k in expected for k in order):
        return None
    return last, values


def _lead_paragraph(article: HtmlElement | None) -> HtmlElement | None:
    """The claim's paragraph the import added: the article's first block, a ``<p>``
    holding only the mark."""
    first = next((c for c in article if tag_of(c)), None) if article is not None else None
    if first is None or tag_of(first) != "p" or (first.text or "").strip() or len(first) != 1:
        return None
    return first if tag_of(first[0]) == "mark" and not (first[0].tail or "").strip() else None


@dataclass(slots=True)
class _File:
    """One memory's file, as it is being written."""

    record: MemoryRecord
    own: str
    shape: Shape | None
    facets: dict[str, list[str]]
    body: str
    derived: Article
    """The body as the import will read it with no frontmatter: what it derives."""
    edges: dict[str, list[str]]
    dangling: int


def _edges(record: MemoryRecord, folder: _Folder, derived: Article
           ) -> tuple[dict[str, list[str]], int]:
    """The edges the frontmatter lists: every link the body does not already make
    (the import makes one for each link in the text), and those the note's own
    ``edges`` named, each by the name the note wrote while it names the same file."""
    implied: set[tuple[str, str]] = set()
    for target in derived.targets:
        if not target.is_path and is_document_path(target.name):
            implied.add((target.rel, target.name))
            continue
        found = folder.resolve(target.name, target.is_path)
        if found is not None:
            implied.add((target.rel, found))
    front: dict[tuple[str, str], str] = {}
    for (rel, name, is_path, _), in_front in target_rows(record) or ():
        found = folder.resolve(name, is_path) if in_front else None
        if found is not None:
            front.setdefault((rel, found), name)
    edges: dict[str, list[str]] = {}
    dangling = 0
    for link in record.links:
        exported = folder.target(link.href)
        if exported is None:
            dangling += 1
        key = (link.rel, exported if exported is not None else link.href)
        if key in implied and key not in front:
            continue
        name = front.get(key) or (folder.names[exported] if exported is not None
                                  else link.href)
        edges.setdefault(link.rel, []).append(f"[[{name}]]")
    return edges, dangling


def _values(file: _File) -> dict[str, str | list[str] | dict[str, list[str]] | None]:
    """What each place holds now, as the frontmatter writes it."""
    record, shape = file.record, file.shape
    type_written = next(iter(file.facets.get("type", ())), None)
    memory_type = type_written if type_written is not None and memory_type_of(
        type_written) == record.memory_type else record.memory_type
    tags = [t for t in record.tags
            if shape is None or (t not in shape.added and t not in shape.body_tags)]
    return {
        "title": record.title, "claim": collapse_ascii_whitespace(record.claim).strip(" "),
        "type": memory_type, "tags": tags, "aliases": list(record.aliases),
        "entities": list(record.entities), "created": record.created_at,
        "updated": record.updated_at,
        "confidence": None if record.confidence is None else number_text(record.confidence),
        "importance": None if record.importance is None else str(record.importance),
        "author": record.author, "session": record.session_id, "prompt": record.prompt_id,
        "turn": record.turn_uuid, "valid_from": record.valid_from,
        "valid_until": record.valid_until,
        "reprieves": None if record.reprieves is None else str(record.reprieves),
        "needs_revision": None if record.needs_revision is None else (
            "true" if record.needs_revision else "false"),
        "task_status": record.task_status, "due": record.due_at, "edges": file.edges or None,
    }


def _needed(role: str, file: _File, value: object) -> bool:
    """Whether a place the note did not have is written (the store set it since, or
    the import would not derive it again)."""
    record = file.record
    if value is None or value in ([], {}):
        return False
    if role == "title":
        return record.title != (file.derived.title or derived_title(file.own))
    if role == "claim":
        return file.derived.claim != value
    if role == "type":
        return value != "semantic"
    if role == "created":
        return False
    if role == "updated":
        return record.updated_at != record.created_at
    if role == "task_status":
        return value != "todo"
    return True


def _line(key: str, role: str, value: object) -> str:
    if role in ("tags", "aliases", "entities"):
        return block(key, value if isinstance(value, list) else [])
    if role == "edges":
        return mapping(key, value if isinstance(value, dict) else {})
    text = str(value)
    if role in ("confidence", "importance", "reprieves", "needs_revision"):
        return f"{key_of(key)}: {text}"
    return f"{key_of(key)}: {scalar(text)}"


def _frontmatter(file: _File) -> str:
    values = _values(file)
    lines: list[str] = []
    done: set[str] = set()
    shape = file.shape
    keys = shape.keys if shape is not None and shape.keys is not None else ()
    for key, code in keys:
        if code in ROLES:
            done.add(code)
            value = values.get(code)
            if value is None or (code != "tags" and not value):
                continue
            lines.append(_line(key, code, value))
        elif key in file.facets:
            lines.append(facet_block(key, code, file.facets[key]))
    for role in DEFAULT_ORDER:
        if role in done:
            continue
        value = values.get(role)
        if (shape is None and value not in (None, [], {})) or (
                shape is not None and _needed(role, file, value)):
            lines.append(_line(DEFAULT_KEYS[role], role, value))
    if not lines and (shape is None or shape.keys is None):
        return ""
    return "---\n" + "\n".join(lines) + ("\n" if lines else "") + "---\n"


def _file(record: MemoryRecord, folder: _Folder) -> _File:
    own = folder.paths[record.path]
    shape = decode_shape(record.source_shape) if record.source else None
    legacy = record.source is None and any(f.name == SOURCE_FACET for f in record.facets)
    article = article_root(record.html)
    skip: set[int] = set()
    facets: dict[str, list[str]] = {}
    if shape is not None:
        lead = _lead_paragraph(article) if shape.lead else None
        if lead is not None:
            skip.add(id(lead))
        found = _front_dl(article, shape)
        if found is not None:
            skip.add(id(found[0]))
            facets = found[1]
    writing = Writing(lambda el, label: _link(folder, own, el, label),
                      frozenset(record.tags), frozenset(skip), legacy)
    body = article_markdown(article, writing) if article is not None else ""
    if not body and shape is None:
        body = escape_text(collapse_ascii_whitespace(record.claim).strip(" "))
    derived = convert_body(body, own)
    edges, dangling = _edges(record, folder, derived)
    return _File(record, own, shape, facets, body, derived, edges, dangling)


def is_exported(record: MemoryRecord) -> bool:
    """Only active memories outside the archive are exported."""
    return record.status == "active" and not record.archived


def is_index_page(page: str, text: str) -> bool:
    """Whether a markdown file of the store is an index page as the import makes them
    (a body of only link lists): only those go out, since any other markdown (a
    README at the store's root) would come back from the import as a memory."""
    split = split_front(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    if not isinstance(split, Success):
        return False
    return convert_body(split.unwrap()[1], page).is_index


def export_markdown(records: Iterable[MemoryRecord],
                    pages: Mapping[str, str] | None = None) -> MarkdownExport:
    """Every active memory of ``records`` as a markdown file, by export path, and
    every index page of the store (``pages``: its markdown files by tree path; those
    that are not index pages stay behind) at its own path, its links to memories
    pointed at their exported files.

    An edge names its target as the note did, or by the target's wikilink name; a
    target that is not exported keeps its document path (``[[/archive/...html]]``),
    so nothing is dropped, and is counted as dangling. A page at a path a memory is
    exported to is left out: the memory is the fact."""
    chosen = sorted((r for r in records if is_exported(r)), key=lambda r: r.path)
    paths = export_paths(chosen)
    folder = _Folder(paths, _link_names(paths.values()),
                     NoteNames.of((paths[r.path], r.title, r.aliases) for r in chosen))
    files: dict[str, str] = {}
    edge_count = dangling = 0
    for record in chosen:
        file = _file(record, folder)
        edge_count += len(record.links)
        dangling += file.dangling
        front = _frontmatter(file)
        files[file.own] = (front + "\n" if front else "") + file.body + "\n"
    written = 0
    for page, text in sorted((pages or {}).items()):
        if page not in files and is_index_page(page, text):
            files[page] = exported_index(text, page, paths.get)
            written += 1
    return MarkdownExport(files, len(chosen), edge_count, dangling, written)


__all__ = [
    "MarkdownExport",
    "code_fence",
    "escape_inline",
    "escape_text",
    "export_markdown",
    "export_paths",
    "is_exported",
    "markdown_path",
    "restored_path",
]
