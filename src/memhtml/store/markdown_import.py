"""A folder of markdown memories as memory files, and the ops that keep it in step.

Each file is converted on its own (``convert_markdown``: frontmatter by
``markdown_front``, body by ``markdown_convert``) into a whole memory file, so the
frontmatter's ``created``/``updated`` survive as the memory's stamps instead of the
import's time. Links between notes are resolved only once every file has its store
path, and become ``relates_to`` edges (or the rel a basic-memory relation names).

Every imported memory carries two facets: ``memhtml-source`` (its file's path under
the folder) and ``memhtml-source-sha256`` (that file's bytes' digest). They are what
makes a second import of the same folder a sync rather than a refusal: an unchanged
file is skipped, a changed one lands through ``correct`` (the old version archived),
one whose file is gone is archived, and all of it is one batch, so one commit.

A file whose body is only lists of links (an index such as ``MEMORY.md``) has no
fact of its own: it becomes no memory but an index page (``markdown_index``), the
same markdown committed beside the memories with each link to a note pointing at the
memory it became, kept in step by a re-import like the notes are.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from returns.result import Failure, Result, Success

from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.vocabulary import MemoryType
from memhtml.format import (
    NewMemoryInput,
    escape_text,
    new_memory_doc,
    parse_memory,
    serialize_memory,
)
from memhtml.store.errors import FrontmatterRefused, describe
from memhtml.store.inputs import BArchive, BatchOp, BCorrect, BLink, BUnlink, BWrite, WriteInput
from memhtml.store.layout import normalize_directory, slug_of
from memhtml.store.markdown_convert import Article, Target, convert_body
from memhtml.store.markdown_front import (
    Front,
    FrontFailure,
    ascii_collapsed,
    memory_type_of,
    read_front,
    split_front,
)
from memhtml.store.markdown_index import index_page
from memhtml.store.paths import Names, Spellings, new_memory_path, spelled

MARKDOWN_SUFFIX = ".md"
SOURCE_FACET = "memhtml-source"
DIGEST_FACET = "memhtml-source-sha256"

__all__ = [
    "DIGEST_FACET",
    "SOURCE_FACET",
    "Converted",
    "ImportPlan",
    "ImportedMemory",
    "MarkdownImport",
    "NotConverted",
    "convert_markdown",
    "convert_tree",
    "memory_type_of",
    "plan_import",
    "target_path",
]


@dataclass(frozen=True, slots=True)
class Converted:
    """One file, converted but not yet placed: its edges wait for every path."""

    source: str
    digest: str
    title: str
    claim: str
    memory_type: MemoryType
    front: Front
    article: Article
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ImportedMemory:
    """One placed file: where it came from and what the write door gets."""

    source: str
    data: WriteInput


@dataclass(frozen=True, slots=True)
class NotConverted:
    """A file left out of the import, and why; ``error`` is the typed error when the
    reason has one (a frontmatter past a bound, a field named twice)."""

    source: str
    reason: str
    error: FrontmatterRefused | None = None


def not_converted(source: str, why: FrontFailure) -> NotConverted:
    """The file left out for ``why``, a typed error naming the file when it is one."""
    if isinstance(why, str):
        return NotConverted(source, why)
    named = replace(why, file=source)
    return NotConverted(source, named.reason, named)


@dataclass(frozen=True, slots=True)
class MarkdownImport:
    memories: tuple[ImportedMemory, ...]
    skipped: tuple[NotConverted, ...]


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """What an import will do, as a batch and as the lists its summary counts."""

    ops: tuple[BatchOp, ...]
    added: tuple[tuple[str, str], ...] = ()
    """(source, store path) of each new memory."""
    changed: tuple[tuple[str, str, str], ...] = ()
    """(source, old path, new path) of each corrected memory."""
    deleted: tuple[tuple[str, str], ...] = ()
    """(source, path) of each memory archived because its file is gone."""
    unchanged: tuple[str, ...] = ()
    indexes: tuple[tuple[str, str], ...] = ()
    """(source, page path) of each index file, kept as a page beside the memories."""
    pages: Mapping[str, bytes] = field(default_factory=dict)
    """Each index page's bytes, by page path (the batch door leaves out those the
    store already holds)."""
    refused: tuple[NotConverted, ...] = ()
    unresolved: tuple[tuple[str, str], ...] = field(default=())
    """(source, target) of each link that names no imported file."""


def now_instant() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def digest_of(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def target_path(source: str, directory: str) -> str:
    """``<directory>/<source's directories, slugged>/<slug of the stem>.html``."""
    parent, name = posixpath.split(source)
    stem = name[: -len(MARKDOWN_SUFFIX)] if name.endswith(MARKDOWN_SUFFIX) else name
    folders = [slug_of(part) for part in parent.split("/") if part]
    return normalize_directory("/".join([directory.strip("/"), *folders])) + \
        f"{slug_of(stem)}.html"


_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,120}\.md")


def page_path_of(source: str, directory: str) -> str:
    """Where an index file's page goes: its folder placed as a note's would be, its
    name kept when it is a plain one (``MEMORY.md`` is a name agents look for),
    else slugged like a note's."""
    parent, name = posixpath.split(source)
    if _PLAIN_NAME.fullmatch(name) is None:
        return target_path(source, directory).removesuffix(".html") + MARKDOWN_SUFFIX
    folders = [slug_of(part) for part in parent.split("/") if part]
    return normalize_directory("/".join([directory.strip("/"), *folders])) + name


def _stem(source: str) -> str:
    name = posixpath.basename(source)
    return name[: -len(MARKDOWN_SUFFIX)] if name.endswith(MARKDOWN_SUFFIX) else name


def convert_markdown(source: str, raw: bytes, tags: Sequence[str] = ()
                     ) -> Result[Converted, FrontFailure]:
    """One markdown file, converted, or why it cannot be a memory."""
    if b"\x00" in raw:
        return Failure("binary (it holds NUL bytes), not markdown text")
    try:
        text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as error:
        return Failure(f"not UTF-8 text (byte {error.start} cannot be decoded); "
                       "re-save it as UTF-8")
    split = split_front(text.removeprefix("\ufeff"))
    if isinstance(split, Failure):
        failure = split.failure()
        return Failure(failure if isinstance(failure, str) else replace(failure, file=source))
    fields, body = split.unwrap()
    front = read_front(fields)
    article = convert_body(body, source, claim_given=front.description is not None,
                           description=front.description)
    title = front.title or article.title or " ".join(
        _stem(source).replace("-", " ").replace("_", " ").split()) or "memory"
    claim = front.description or article.claim
    if article.is_index:
        claim = claim or title
    if not claim:
        return Failure("no prose to take a claim from (no frontmatter description and "
                       "no paragraph of text)")
    all_tags = tuple(dict.fromkeys([*tags, *front.tags, *article.tags]))
    return Success(Converted(source, digest_of(raw), title, ascii_collapsed(claim),
                             memory_type_of(front.type), front, article, all_tags))


def _facets_html(converted: Converted) -> str:
    pairs = [*converted.front.facets, (SOURCE_FACET, converted.source),
             (DIGEST_FACET, converted.digest)]
    rows = "".join(f"<dt>{escape_text(k)}</dt><dd>{escape_text(v)}</dd>" for k, v in pairs)
    return f"<dl>{rows}</dl>"


def render_file(converted: Converted, links: tuple[Link, ...], at: str) -> str:
    """The whole memory file: the article, the facets, the edges, and the stamps the
    frontmatter gave (``at``, the import's time, for those it did not)."""
    article = converted.article
    parts = [] if article.claim_marked else [f"<p><mark>{escape_text(converted.claim)}</mark></p>"]
    parts += [article.html, _facets_html(converted)]
    created = converted.front.created or at
    updated = converted.front.updated or created
    doc = new_memory_doc(NewMemoryInput(
        title=converted.title, claim=converted.claim, memory_type=converted.memory_type,
        at=created, article_html="\n".join(p for p in parts if p), tags=converted.tags,
        aliases=converted.front.aliases, links=links))
    return serialize_memory(replace(doc, metas=replace(doc.metas, updated_at=updated)))


def _check(converted: Converted, path: str) -> str | None:
    """Why the rendered file would be refused, or None: a bad file is reported rather
    than sinking the whole import's commit."""
    html = render_file(converted, (), "2026-01-01T00:00:00Z")
    return parse_memory(html, path).map(lambda _: None).alt(
        lambda error: "; ".join(error.violations) or error.reason).swap().value_or(None)


@dataclass(slots=True)
class _Resolver:
    """Link targets to store paths: a ``.md`` path exactly, a wikilink by file stem,
    path without suffix, title or alias (case-insensitive)."""

    by_source: dict[str, str]
    by_name: dict[str, str]

    @classmethod
    def of(cls, placed: dict[str, str], converted: dict[str, Converted]) -> _Resolver:
        by_name: dict[str, str] = {}
        for source, path in sorted(placed.items()):
            c = converted.get(source)
            names = [source[: -len(MARKDOWN_SUFFIX)], _stem(source)]
            if c is not None:
                names += [c.title, *c.front.aliases]
            for name in names:
                by_name.setdefault(name.strip().lower(), path)
        return cls(dict(placed), by_name)

    def __call__(self, name: str, is_path: bool) -> str | None:
        if is_path:
            return self.by_source.get(name)
        key = name.strip().lower()
        return self.by_name.get(key) or self.by_name.get(key.removesuffix(".md"))


def _links(converted: Converted, resolve: _Resolver, own: str,
           unresolved: list[tuple[str, str]]) -> tuple[Link, ...]:
    out: dict[tuple[str, str], Link] = {}
    named = [Target(name, False, rel) for rel, name in converted.front.edges]
    for target in [*converted.article.targets, *named]:
        path = resolve(target.name, target.is_path)
        if path is None:
            unresolved.append((converted.source, target.name))
        elif path != own:
            href = to_document_path(path)
            out.setdefault((target.rel, href), Link(target.rel, href))
    return tuple(out.values())


def _source_of(record: MemoryRecord) -> tuple[str | None, str | None]:
    source = next((f.value for f in record.facets if f.name == SOURCE_FACET), None)
    digest = next((f.value for f in record.facets if f.name == DIGEST_FACET), None)
    return source, digest


def _free(path: str, taken: set[str]) -> str:
    """``path``, or ``<stem>-2.html``, ``-3`` ...: the first name no memory holds."""
    if path not in taken:
        return path
    stem = path.removesuffix(".html")
    n = 2
    while f"{stem}-{n}.html" in taken:
        n += 1
    return f"{stem}-{n}.html"


def plan_import(
    files: Iterable[tuple[str, bytes]],
    directory: str,
    tags: Sequence[str] = (),
    records: Iterable[MemoryRecord] = (),
    taken: Iterable[str] = (),
    at: str | None = None,
    refused: Iterable[tuple[str, str]] = (),
    on_file: Callable[[str], None] | None = None,
) -> ImportPlan:
    """The batch that brings ``files`` in, or brings an earlier import of them up to date.

    ``records`` are the store's active memories; those under ``directory`` with a
    ``memhtml-source`` facet are this folder's earlier import. ``taken`` lists every
    store path. A new file whose path another memory holds, or that the write door
    would refuse as a name, is reported rather than renamed.
    """
    stamp = at or now_instant()
    home = normalize_directory(directory.strip("/")) if directory.strip("/") else ""
    managed: dict[str, tuple[MemoryRecord, str | None]] = {}
    for record in records:
        source, digest = _source_of(record)
        if source is not None and record.path.startswith(home) and source not in managed:
            managed[source] = (record, digest)
    used = set(taken)
    names = Names((Spellings.of(used),))
    left_out = [NotConverted(s, r) for s, r in refused]
    converted: dict[str, Converted] = {}
    indexes: list[str] = []
    index_text: dict[str, str] = {}
    present: set[str] = {s for s, _ in refused}
    for source, raw in sorted(files):
        if on_file is not None:
            on_file(source)
        present.add(source)
        result = convert_markdown(source, raw, tags)
        if isinstance(result, Failure):
            left_out.append(not_converted(source, result.failure()))
            continue
        one = result.unwrap()
        if one.article.is_index:
            indexes.append(source)
            index_text[source] = raw.decode("utf-8")
        converted[source] = one
    placed: dict[str, str] = {s: managed[s][0].path for s in converted if s in managed}
    fresh: list[str] = []
    changed: list[str] = []
    unchanged: list[str] = []
    for source, one in converted.items():
        if one.article.is_index:
            continue
        if source in managed:
            (changed if managed[source][1] != one.digest else unchanged).append(source)
            continue
        path = spelled(target_path(source, directory), names)
        why: str | None = None
        if path in used:
            why = f"would land on {path}, which another memory already holds"
        else:
            refused_path = new_memory_path(path, names).swap().value_or(None)
            twin = names.twin(path)
            if refused_path is not None or twin is not None:
                why = "would land on a refused path: " + (
                    describe(refused_path) if refused_path is not None
                    else f"path {path!r}: {twin}")
        why = why or _check(one, path)
        if why is not None:
            left_out.append(NotConverted(source, why))
            continue
        used.add(path)
        placed[source] = path
        fresh.append(source)
    for source in changed:
        why = _check(converted[source], placed[source])
        if why is not None:
            left_out.append(NotConverted(source, why))
            continue
        new_path = _free(placed[source], used)
        used.add(new_path)
        placed[source] = new_path
    changed = [s for s in changed if s not in {n.source for n in left_out}]
    resolve = _Resolver.of(placed, converted)
    unresolved: list[tuple[str, str]] = []
    ops: list[BatchOp] = []
    relinks: list[BatchOp] = []
    old_paths = {to_document_path(managed[s][0].path): s for s in changed}
    for source in unchanged:
        record = managed[source][0]
        wanted = set(_links(converted[source], resolve, record.path, []))
        for link in record.links:
            moved = old_paths.get(link.href)
            if moved is not None:
                ops.append(BUnlink(record.path, link.rel, link.href))
                wanted.add(Link(link.rel, to_document_path(placed[moved])))
        have = {(link.rel, link.href) for link in record.links
                if link.href not in old_paths}
        relinks += [BLink(record.path, link.rel, link.href) for link in sorted(
            wanted, key=lambda k: (k.rel, k.href)) if (link.rel, link.href) not in have]
    pages: dict[str, bytes] = {}
    placed_pages: list[tuple[str, str]] = []
    for source in indexes:
        page = page_path_of(source, directory)
        if page in used or page in pages or page in {p for _, p in placed_pages}:
            left_out.append(NotConverted(
                source, f"an index page would land on {page}, which is already taken"))
            continue
        built = index_page(index_text[source], source, page, resolve)
        unresolved += [(source, target) for target in built.unresolved]
        placed_pages.append((source, page))
        pages[page] = built.text.encode("utf-8")
    for source in fresh:
        html = render_file(converted[source], _links(
            converted[source], resolve, placed[source], unresolved), stamp)
        ops.append(BWrite(WriteInput(file_html=html, path=placed[source])))
    for source in changed:
        html = render_file(converted[source], _links(
            converted[source], resolve, placed[source], unresolved), stamp)
        ops.append(BCorrect(managed[source][0].path,
                            WriteInput(file_html=html, path=placed[source])))
    deleted = sorted(s for s in managed if s not in present)
    ops += [BArchive(managed[s][0].path) for s in deleted]
    ops += relinks
    return ImportPlan(
        ops=tuple(ops),
        added=tuple((s, placed[s]) for s in fresh),
        changed=tuple((s, managed[s][0].path, placed[s]) for s in changed),
        deleted=tuple((s, managed[s][0].path) for s in deleted),
        unchanged=tuple(unchanged), indexes=tuple(placed_pages), pages=pages,
        refused=tuple(sorted(left_out, key=lambda n: n.source)),
        unresolved=tuple(unresolved))


def convert_tree(
    files: Iterable[tuple[str, bytes]],
    directory: str,
    tags: Sequence[str] = (),
    taken: Iterable[str] = (),
    on_file: Callable[[str], None] | None = None,
) -> MarkdownImport:
    """A first import's new memories, each a write request, and every file left out
    with its reason (a file that is not markdown among them)."""
    listed = list(files)
    others = [NotConverted(s, "not a markdown (.md) file") for s, _ in listed
              if not s.endswith(MARKDOWN_SUFFIX)]
    plan = plan_import([(s, b) for s, b in listed if s.endswith(MARKDOWN_SUFFIX)],
                       directory, tags, (), taken, on_file=on_file)
    sources = {p: s for s, p in plan.added}
    memories = tuple(ImportedMemory(sources[op.data.path or ""], op.data)
                     for op in plan.ops if isinstance(op, BWrite))
    return MarkdownImport(memories, tuple(sorted([*plan.refused, *others],
                                                 key=lambda n: n.source)))
