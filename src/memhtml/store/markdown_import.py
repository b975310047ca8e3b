"""A folder of markdown memories as memory files, and the ops that keep it in step.

Each file is converted on its own (``convert_markdown``: frontmatter by
``markdown_front``, body by ``markdown_convert``) into a whole memory file, so the
frontmatter's ``created``/``updated`` survive as the memory's stamps instead of the
import's time. Links between notes are resolved only once every file has its store
path, and become ``relates_to`` edges (or the rel a basic-memory relation names).

Every imported memory carries ``memhtml-source`` (its file's path under the folder)
and ``memhtml-source-sha256`` (that file's bytes' digest), and, when its note links
other notes, ``memhtml-source-links`` (the targets the note named). They are what
makes a second import of the same folder a sync rather than a refusal: an unchanged
file is skipped, a changed one lands through ``correct`` (the old version archived),
one whose file is gone is archived, and all of it is one batch, so one commit. What
the person decided in the store since is kept (``markdown_decisions``).

A file whose body is only lists of links (an index such as ``MEMORY.md``) has no
fact of its own: it becomes no memory but an index page (``markdown_index``), the
same markdown committed beside the memories with each link to a note pointing at the
memory it became, kept in step by a re-import like the notes are.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from returns.result import Failure, Result, Success

from memhtml.contracts.paths import to_document_path, to_tree_path
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.vocabulary import MemoryType
from memhtml.format import (
    NewMemoryInput,
    escape_text,
    new_memory_doc,
    parse_memory,
    serialize_memory,
)
from memhtml.store.deps import Detector
from memhtml.store.errors import FrontmatterRefused, describe
from memhtml.store.inputs import BArchive, BatchOp, BCorrect, BLink, BUnlink, BWrite, WriteInput
from memhtml.store.layout import normalize_directory, slug_of
from memhtml.store.markdown_convert import Article, Target, convert_body
from memhtml.store.markdown_decisions import (
    DIGEST_FACET,
    LINKS_FACET,
    SOURCE_FACET,
    Carried,
    Kept,
    Known,
    LinkKey,
    NoteTarget,
    carried_links,
    digest_of,
    import_needs,
    targets_facet,
    targets_of,
)
from memhtml.store.markdown_front import (
    Front,
    FrontFailure,
    ascii_collapsed,
    memory_type_of,
    read_front,
    split_front,
)
from memhtml.store.markdown_history import ImportHistory, import_home
from memhtml.store.markdown_index import index_page
from memhtml.store.paths import Names, Spellings, new_memory_path, spelled

MARKDOWN_SUFFIX = ".md"

__all__ = [
    "DIGEST_FACET",
    "SOURCE_FACET",
    "Carried",
    "Converted",
    "ImportPlan",
    "ImportedMemory",
    "Kept",
    "MarkdownImport",
    "NotConverted",
    "convert_markdown",
    "convert_tree",
    "digest_of",
    "import_needs",
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
    kept: tuple[Kept, ...] = ()
    """Each note whose memory the store archived or corrected, left so."""
    revived: tuple[tuple[str, str], ...] = ()
    """(source, store path) of each kept note brought back by ``revive``."""
    carried: tuple[Carried, ...] = ()
    """What each changed note's new version carries from the store's live version."""


def now_instant() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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


def convert_markdown(source: str, raw: bytes, tags: Sequence[str] = (),
                     detect: Detector | None = None) -> Result[Converted, FrontFailure]:
    """One markdown file, converted, or why it cannot be a memory; ``detect`` guesses
    the language of a code block written without one (None: no guess)."""
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
                           description=front.description, detect=detect)
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


def _facets_html(converted: Converted, targets: tuple[NoteTarget, ...]) -> str:
    pairs = [*converted.front.facets, (SOURCE_FACET, converted.source),
             (DIGEST_FACET, converted.digest)]
    if targets:
        pairs.append((LINKS_FACET, targets_facet(targets)))
    rows = "".join(f"<dt>{escape_text(k)}</dt><dd>{escape_text(v)}</dd>" for k, v in pairs)
    return f"<dl>{rows}</dl>"


def render_file(converted: Converted, links: tuple[Link, ...], at: str,
                entities: tuple[str, ...] = (), targets: tuple[NoteTarget, ...] | None = None
                ) -> str:
    """The whole memory file: the article, the facets (the note's link ``targets``
    among them: by default each as written, unresolved), the edges, the labels the
    store gave an earlier version (the import itself writes none), and the stamps the
    frontmatter gave (``at``, the import's time, for those it did not)."""
    article = converted.article
    parts = [] if article.claim_marked else [f"<p><mark>{escape_text(converted.claim)}</mark></p>"]
    named = targets if targets is not None else tuple(
        (t.rel, t.name, t.is_path, None) for t in _targets(converted))
    parts += [article.html, _facets_html(converted, named)]
    created = converted.front.created or at
    updated = converted.front.updated or created
    doc = new_memory_doc(NewMemoryInput(
        title=converted.title, claim=converted.claim, memory_type=converted.memory_type,
        at=created, article_html="\n".join(p for p in parts if p), tags=converted.tags,
        aliases=converted.front.aliases, links=links, entities=entities))
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


def _targets(converted: Converted) -> list[Target]:
    """Every link target the note names: in its text, then in its ``edges`` field."""
    named = [Target(name, False, rel) for rel, name in converted.front.edges]
    return [*converted.article.targets, *named]


def _note_targets(converted: Converted, notes: _Resolver) -> tuple[NoteTarget, ...]:
    """The note's targets as its memory records them: each with the note it resolves
    to now (``notes`` resolves to notes, not paths)."""
    return tuple((t.rel, t.name, t.is_path, notes(t.name, t.is_path))
                 for t in _targets(converted))


def _links(converted: Converted, resolve: _Resolver, own: str,
           unresolved: list[tuple[str, str]]) -> tuple[Link, ...]:
    out: dict[tuple[str, str], Link] = {}
    for target in _targets(converted):
        path = resolve(target.name, target.is_path)
        if path is None:
            unresolved.append((converted.source, target.name))
        elif path != own:
            href = to_document_path(path)
            out.setdefault((target.rel, href), Link(target.rel, href))
    return tuple(out.values())


def _free(path: str, taken: set[str]) -> str:
    """``path``, or ``<stem>-2.html``, ``-3`` ...: the first name no memory holds."""
    if path not in taken:
        return path
    stem = path.removesuffix(".html")
    n = 2
    while f"{stem}-{n}.html" in taken:
        n += 1
    return f"{stem}-{n}.html"


@dataclass(slots=True)
class _Read:
    """The folder's files read: converted, index texts, left out, every name seen."""

    converted: dict[str, Converted] = field(default_factory=dict)
    indexes: dict[str, str] = field(default_factory=dict)
    left_out: list[NotConverted] = field(default_factory=list)
    present: set[str] = field(default_factory=set)


def _read(files: Iterable[tuple[str, bytes]], tags: Sequence[str],
          refused: Iterable[tuple[str, str]], on_file: Callable[[str], None] | None,
          detect: Detector | None = None) -> _Read:
    read = _Read()
    for source, why in refused:
        read.left_out.append(NotConverted(source, why))
        read.present.add(source)
    for source, raw in sorted(files):
        if on_file is not None:
            on_file(source)
        read.present.add(source)
        result = convert_markdown(source, raw, tags, detect)
        if isinstance(result, Failure):
            read.left_out.append(not_converted(source, result.failure()))
            continue
        one = result.unwrap()
        if one.article.is_index:
            read.indexes[source] = raw.decode("utf-8")
        read.converted[source] = one
    return read


def _placement_refusal(path: str, used: set[str], names: Names) -> str | None:
    """Why a new memory may not land at ``path``, or None."""
    if path in used:
        return f"would land on {path}, which another memory already holds"
    refused_path = new_memory_path(path, names).swap().value_or(None)
    twin = names.twin(path)
    if refused_path is not None or twin is not None:
        return "would land on a refused path: " + (
            describe(refused_path) if refused_path is not None else f"path {path!r}: {twin}")
    return None


def plan_import(
    files: Iterable[tuple[str, bytes]],
    directory: str,
    tags: Sequence[str] = (),
    records: Iterable[MemoryRecord] = (),
    taken: Iterable[str] = (),
    at: str | None = None,
    refused: Iterable[tuple[str, str]] = (),
    on_file: Callable[[str], None] | None = None,
    history: ImportHistory | None = None,
    revive: Collection[str] = (),
    detect: Detector | None = None,
) -> ImportPlan:
    """The batch that brings ``files`` in, or brings an earlier import of them up to date.

    ``records`` are the store's memories (archived ones included); those under
    ``directory`` (or archived from under it) with a ``memhtml-source`` facet are this
    folder's earlier import. ``taken`` lists every store path. A new file whose path
    another memory holds, or that the write door would refuse as a name, is reported
    rather than renamed.

    What the store decided since is kept (``markdown_decisions``): a note whose memory
    the store archived or corrected is left so unless ``revive`` names it, and a
    changed note's new version carries the live version's labels and store-side
    links and leaves out the note's links the person removed. ``history``
    (``markdown_history``) says which archives the import made itself when a note
    had gone; None: nothing known, so every archive counts as the store's.
    ``detect`` is the store's fence-language guess, asked only about a code block
    written without a language.
    """
    stamp = at or now_instant()
    known = Known.of(records, import_home(directory))
    managed = known.live
    used = set(taken)
    names = Names((Spellings.of(used),))
    read = _read(files, tags, refused, on_file, detect)
    converted, left_out = read.converted, read.left_out
    placed: dict[str, str] = {s: managed[s][0].path for s in converted if s in managed}
    fresh: list[str] = []
    changed: list[str] = []
    unchanged: list[str] = []
    kept: list[Kept] = []
    revived: list[str] = []
    for source, one in converted.items():
        if one.article.is_index:
            continue
        if source in managed:
            (changed if managed[source][1] != one.digest else unchanged).append(source)
            continue
        decided = known.decided(source, one.digest, history)
        if decided is not None and source not in revive:
            kept.append(decided)
            continue
        path = spelled(target_path(source, directory), names)
        if decided is not None:
            path = _free(path, used)
        why = _placement_refusal(path, used, names) or _check(one, path)
        if why is not None:
            left_out.append(NotConverted(source, why))
            continue
        used.add(path)
        placed[source] = path
        (revived if decided is not None else fresh).append(source)
    for source in changed:
        why = _check(converted[source], placed[source])
        if why is not None:
            left_out.append(NotConverted(source, why))
            continue
        new_path = _free(placed[source], used)
        used.add(new_path)
        placed[source] = new_path
    changed = [s for s in changed if s not in {n.source for n in left_out}]
    where = {**{k.source: k.by or k.path for k in kept}, **placed}
    resolve = _Resolver.of(where, converted)
    notes_now = _Resolver.of({s: s for s in where}, converted)
    notes_ever = _Resolver.of({s: s for s in (*where, *managed, *known.gone)}, converted)
    note_at = {**known.notes, **{path: s for s, path in where.items()}}

    def key(link: Link) -> LinkKey:
        return (link.rel, note_at.get(to_tree_path(link.href), link.href))

    unresolved: list[tuple[str, str]] = []
    ops: list[BatchOp] = []
    old_paths = {to_document_path(managed[s][0].path): s for s in changed}
    remap = {old: to_document_path(placed[s]) for old, s in old_paths.items()}
    new_targets = {to_document_path(placed[s]) for s in (*fresh, *revived)}
    relinks: list[BatchOp] = []
    for source in unchanged:
        unlinks, adds = _relinks(managed[source][0], _links(
            converted[source], resolve, managed[source][0].path, []), remap, new_targets)
        ops += unlinks
        relinks += adds
    pages, placed_pages = _index_pages(read, directory, used, resolve, left_out, unresolved)
    for source in (*fresh, *revived):
        html = render_file(converted[source], _links(
            converted[source], resolve, placed[source], unresolved), stamp,
            targets=_note_targets(converted[source], notes_now))
        ops.append(BWrite(WriteInput(file_html=html, path=placed[source])))
    carried: list[Carried] = []
    for source in changed:
        current = managed[source][0]
        note = _links(converted[source], resolve, placed[source], unresolved)
        before = _before(current, notes_ever)
        links, store_links, dropped = carried_links(
            current, note, before, {*fresh, *revived}, key, remap,
            to_document_path(placed[source]))
        if current.entities or store_links or dropped:
            carried.append(Carried(source, placed[source], current.entities, store_links,
                                   dropped))
        html = render_file(converted[source], links, stamp, current.entities,
                           _note_targets(converted[source], notes_now))
        ops.append(BCorrect(current.path, WriteInput(file_html=html, path=placed[source])))
    deleted = sorted(s for s in managed if s not in read.present)
    ops += [BArchive(managed[s][0].path) for s in deleted]
    ops += relinks
    return ImportPlan(
        ops=tuple(ops),
        added=tuple((s, placed[s]) for s in fresh),
        changed=tuple((s, managed[s][0].path, placed[s]) for s in changed),
        deleted=tuple((s, managed[s][0].path) for s in deleted),
        unchanged=tuple(unchanged), indexes=tuple(placed_pages), pages=pages,
        refused=tuple(sorted(left_out, key=lambda n: n.source)),
        unresolved=tuple(unresolved), kept=tuple(kept),
        revived=tuple((s, placed[s]) for s in revived), carried=tuple(carried))


def _before(current: MemoryRecord, notes: _Resolver) -> frozenset[LinkKey] | None:
    """The keys of the targets the live version's note named, each by the note it
    resolved to when written or, when it resolved to none then, now; None when the
    memory does not say (imported before it recorded its note's targets)."""
    recorded = targets_of(current)
    if recorded is None:
        return None
    keys = set()
    for rel, name, is_path, note in recorded:
        resolved = note or notes(name, is_path)
        if resolved is not None:
            keys.add((rel, resolved))
    return frozenset(keys)


def _relinks(record: MemoryRecord, wanted: Iterable[Link], remap: Mapping[str, str],
             new_targets: Collection[str]) -> tuple[list[BatchOp], list[BatchOp]]:
    """An unchanged note's memory kept in step: each of its links to a memory this
    import corrects moved to the new version (unlinked first, linked after), and a
    link its note makes to a memory this import writes anew added. A link to any
    other memory the file lacks is one the person removed, and stays removed."""
    unlinks: list[BatchOp] = []
    want: set[tuple[str, str]] = set()
    for link in record.links:
        moved = remap.get(link.href)
        if moved is not None:
            unlinks.append(BUnlink(record.path, link.rel, link.href))
            want.add((link.rel, moved))
    want |= {(link.rel, link.href) for link in wanted if link.href in new_targets}
    have = {(link.rel, link.href) for link in record.links if link.href not in remap}
    return unlinks, [BLink(record.path, rel, href) for rel, href in sorted(want - have)]


def _index_pages(read: _Read, directory: str, used: set[str], resolve: _Resolver,
                 left_out: list[NotConverted], unresolved: list[tuple[str, str]]
                 ) -> tuple[dict[str, bytes], list[tuple[str, str]]]:
    """Each index file as a page beside the memories, its links to notes pointed at
    the memories they became."""
    pages: dict[str, bytes] = {}
    placed_pages: list[tuple[str, str]] = []
    for source, text in read.indexes.items():
        page = page_path_of(source, directory)
        if page in used or page in pages:
            left_out.append(NotConverted(
                source, f"an index page would land on {page}, which is already taken"))
            continue
        built = index_page(text, source, page, resolve)
        unresolved += [(source, target) for target in built.unresolved]
        placed_pages.append((source, page))
        pages[page] = built.text.encode("utf-8")
    return pages, placed_pages


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
