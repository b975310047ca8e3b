"""A folder of markdown memories as memory files, and the ops that keep it in step.

Each file is converted on its own (``markdown_note.convert_markdown``: frontmatter by
``markdown_front`` and ``markdown_fields``, body by ``markdown_convert``) into a
whole memory file, so the frontmatter's ``created``/``updated`` survive as the
memory's stamps instead of the import's time. Links between notes are resolved only
once every file has its store path (``mdindex.links``, the rule ``md verify`` uses
too): each becomes the ``href`` of its anchor in the article and an edge in the head.

Every imported memory carries its provenance as head metas (``memhtml-source``, the
note's path under the folder; ``memhtml-source-sha256``, its bytes' digest;
``memhtml-source-links``, the targets it named; ``memhtml-source-shape``, what it had
that the memory keeps elsewhere), never as article text, so search does not see them
and an export does not write them. They make a second import of the same folder a
sync: an unchanged file is skipped without being converted, a changed one lands
through ``correct`` (the old version archived), one whose file is gone is archived,
and all of it is one batch, so one commit. What the person decided in the store
since is kept (``markdown_decisions``).

Names: a note lands at the slug of its path; when a memory holds that name (or
another note of the same import took it first, in path order), at the first free of
``-2``, ``-3``... A changed note's new version counts from its own slug again, so
its names alternate rather than grow.

A file whose body is only lists of links (an index such as ``MEMORY.md``) has no
fact of its own: it becomes no memory but an index page (``markdown_index``).
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from returns.result import Failure, Result, Success

from memhtml.contracts.paths import to_document_path, to_tree_path
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.services import FanOut
from memhtml.head.lexical import TermCounts, term_counts
from memhtml.head.record import record_from
from memhtml.mdindex.links import NoteNames, is_document_path
from memhtml.store.deps import Detector
from memhtml.store.errors import describe
from memhtml.store.inputs import BArchive, BatchOp, BCorrect, BLink, BUnlink, BWrite, WriteInput
from memhtml.store.layout import normalize_directory, slug_of
from memhtml.store.markdown_decisions import (
    DIGEST_FACET,
    SOURCE_FACET,
    Carried,
    Kept,
    Known,
    LinkKey,
    NoteTarget,
    carried_links,
    digest_of,
    import_needs,
    targets_of,
)
from memhtml.store.markdown_fields import memory_type_of
from memhtml.store.markdown_front import FrontFailure
from memhtml.store.markdown_history import ImportHistory, import_home
from memhtml.store.markdown_index import index_page
from memhtml.store.markdown_note import (
    Converted,
    NotConverted,
    check_rendered,
    convert_markdown,
    not_converted,
    note_links,
    note_targets,
    render_file,
    written_targets,
)
from memhtml.store.markdown_shape import decode_shape
from memhtml.store.paths import Names, Spellings, new_memory_path, spelled

MARKDOWN_SUFFIX = ".md"
_In = TypeVar("_In")
_Out = TypeVar("_Out")

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
    "note_links",
    "plan_import",
    "render_file",
    "target_path",
]


@dataclass(frozen=True, slots=True)
class ImportedMemory:
    """One placed file: where it came from and what the write door gets."""

    source: str
    data: WriteInput


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
    read: tuple[tuple[MemoryRecord, TermCounts], ...] = ()
    """Each new memory's file read back through the format's check where it was
    rendered (only with a ``fan``), with its terms as the lexical index counts them:
    what the write door's own read of the same bytes at the same path gives, and
    what indexing that record counts (``head.record.read_ahead``,
    ``head.lexical.counted_ahead``)."""


@dataclass(frozen=True, slots=True)
class _Render:
    """One memory file to render, with everything its placing decided; ``read_at``:
    the path to read it back at (through the format's check), or None."""

    converted: Converted
    links: tuple[Link, ...]
    labels: tuple[str, ...]
    rows: tuple[NoteTarget, ...]
    hrefs: list[str | None]
    front_rows: tuple[NoteTarget, ...]
    read_at: str | None

    def done(self, at: str) -> tuple[str, tuple[MemoryRecord, TermCounts] | None]:
        """The file, and, when it is to be read back and the format takes it, its
        record and that record's term counts."""
        html = render_file(self.converted, self.links, at, self.labels, self.rows,
                           self.hrefs, self.front_rows)
        if self.read_at is None:
            return html, None
        record = record_from(html, self.read_at).value_or(None)
        return html, (record, term_counts(record)) if record is not None else None


def _fanned(fan: FanOut | None, fn: Callable[[_In], _Out], items: Sequence[_In]
            ) -> list[_Out]:
    """``fn`` over ``items``: through ``fan`` when given, else here."""
    return fan(fn, items) if fan is not None else [fn(item) for item in items]


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


@dataclass(slots=True)
class _Resolver:
    """Link targets to store paths, by the notes they name (``mdindex.links``)."""

    notes: NoteNames
    placed: dict[str, str]

    @classmethod
    def of(cls, placed: Mapping[str, str], named: Mapping[str, tuple[str, tuple[str, ...]]]
           ) -> _Resolver:
        """``placed``: note -> store path; ``named``: note -> its title and aliases."""
        entries = [(source, *named.get(source, (None, ()))) for source in placed]
        return cls(NoteNames.of(entries), dict(placed))

    def note(self, name: str, is_path: bool) -> str | None:
        return self.notes.resolve(name, is_path)

    def __call__(self, name: str, is_path: bool) -> str | None:
        note = self.notes.resolve(name, is_path)
        return self.placed.get(note) if note is not None else None


def _links(pairs: Iterable[tuple[str, str, bool]], resolve: _Resolver, own: str,
           unresolved: list[tuple[str, str]], source: str) -> tuple[Link, ...]:
    """The edges of (rel, name, is_path) targets: each to the memory its note became;
    a store's document path kept as that href; anything else unresolved."""
    out: dict[tuple[str, str], Link] = {}
    for rel, name, is_path in pairs:
        if not is_path and is_document_path(name):
            href = name
        else:
            path = resolve(name, is_path)
            if path is None:
                unresolved.append((source, name))
                continue
            if path == own:
                continue
            href = to_document_path(path)
        out.setdefault((rel, href), Link(rel, href))  # type: ignore[arg-type]
    return tuple(out.values())


def _note_links(converted: Converted, resolve: _Resolver, own: str,
                unresolved: list[tuple[str, str]]) -> tuple[Link, ...]:
    return _links(((t.rel, t.name, t.is_path) for t in note_targets(converted)), resolve, own,
                  unresolved, converted.source)


def _hrefs(converted: Converted, resolve: _Resolver) -> list[str | None]:
    """Each of the article's anchors' ``href``: the memory its note became (itself
    included: a note may link its own heading), a store path as written, or none."""
    out: list[str | None] = []
    for target in converted.article.targets:
        if not target.is_path and is_document_path(target.name):
            out.append(target.name)
            continue
        path = resolve(target.name, target.is_path)
        out.append(to_document_path(path) if path is not None else None)
    return out


FREE_NAMES_TRIED = 1000
"""How many ``-N`` names a note tries before its slug's own refusal is reported (a
directory that twins another's spelling refuses every name in it)."""


def _free(path: str, used: set[str], names: Names) -> str:
    """``path``, or ``<stem>-2.html``, ``-3`` ...: the first name no memory holds and
    none differs from only by case or normalization; ``path`` itself when none of the
    first ``FREE_NAMES_TRIED`` is (its refusal is then reported)."""
    stem = path.removesuffix(".html")
    candidate = path
    for n in range(2, FREE_NAMES_TRIED + 2):
        if candidate not in used and names.twin(candidate) is None:
            return candidate
        candidate = f"{stem}-{n}.html"
    return path


@dataclass(slots=True)
class _Read:
    """The folder's files read: converted, unchanged, index texts, left out, names."""

    converted: dict[str, Converted] = field(default_factory=dict)
    unchanged: list[str] = field(default_factory=list)
    raws: dict[str, bytes] = field(default_factory=dict)
    indexes: dict[str, str] = field(default_factory=dict)
    left_out: list[NotConverted] = field(default_factory=list)
    present: set[str] = field(default_factory=set)
    detect: Detector | None = None
    """The fence-language guess every conversion of this read asks, retries too."""


def _read(files: Iterable[tuple[str, bytes]], tags: Sequence[str],
          refused: Iterable[tuple[str, str]], on_file: Callable[[str], None] | None,
          digests: Mapping[str, str | None], plain_html: Collection[str] = (),
          detect: Detector | None = None, fan: FanOut | None = None) -> _Read:
    """Each file converted, except one whose digest its live memory already records:
    that one is unchanged, and costs a hash. A note in ``plain_html`` keeps its raw
    HTML as text."""
    read = _Read(detect=detect)
    for source, why in refused:
        read.left_out.append(NotConverted(source, why))
        read.present.add(source)
    wanted: list[tuple[str, bytes]] = []
    for source, raw in sorted(files):
        if on_file is not None:
            on_file(source)
        read.present.add(source)
        read.raws[source] = raw
        known = digests.get(source)
        if known is not None and known == digest_of(raw):
            read.unchanged.append(source)
            continue
        wanted.append((source, raw))

    def convert(item: tuple[str, bytes]) -> Result[Converted, FrontFailure]:
        source, raw = item
        return convert_markdown(source, raw, tags, source not in plain_html, detect=detect)

    for (source, raw), result in zip(wanted, _fanned(fan, convert, wanted), strict=True):
        if isinstance(result, Failure):
            read.left_out.append(not_converted(source, result.failure()))
            continue
        one = result.unwrap()
        if one.article.is_index:
            read.indexes[source] = raw.decode("utf-8")
        read.converted[source] = one
    return read


def _checked(read: _Read, source: str, path: str, tags: Sequence[str], check: bool
             ) -> str | None:
    """Why the note cannot land at ``path``, or None (always None unchecked: the write
    door's own check is then the one, ``markdown_run``). A note whose raw HTML is what
    fails the format check is converted again with that HTML kept as text."""
    if not check:
        return None
    why = check_rendered(read.converted[source], path)
    if why is None:
        return None
    again = convert_markdown(source, read.raws[source], tags, raw_html=False,
                             detect=read.detect)
    if isinstance(again, Success) and check_rendered(again.unwrap(), path) is None:
        read.converted[source] = again.unwrap()
        return None
    return why


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
    check: bool = True,
    plain_html: Collection[str] = (),
    detect: Detector | None = None,
    fan: FanOut | None = None,
) -> ImportPlan:
    """The batch that brings ``files`` in, or brings an earlier import of them up to date.

    ``records`` are the store's memories (archived ones included); those under
    ``directory`` (or archived from under it) carrying ``memhtml-source`` are this
    folder's earlier import. ``taken`` lists every store path. A new note whose name
    another memory holds takes the next free one (``-2``, ``-3``...); one the write
    door would refuse as a name is reported.

    What the store decided since is kept (``markdown_decisions``): a note whose memory
    the store archived or corrected is left so unless ``revive`` names it, and a
    changed note's new version carries the live version's labels and store-side
    links and leaves out the note's links the person removed. ``history``
    (``markdown_history``) says which archives the import made itself when a note
    had gone; None: nothing known, so every archive counts as the store's.

    ``check`` False leaves the format check of each rendered file to the write door,
    which parses every file it lands anyway; a caller then handles a file the door
    refuses (``markdown_run.import_folder``). ``plain_html`` names notes whose raw
    HTML is to stay text. ``detect`` is the store's fence-language guess, asked only
    about a code block written without a language. ``fan`` runs the per-note work
    (converting, rendering, and reading each new file back through the format's
    check, ``ImportPlan.read``) on several cores; the plan is the same without it.
    """
    stamp = at or now_instant()
    known = Known.of(records, import_home(directory))
    managed = known.live
    used = set(taken)
    names = Names((Spellings.of(used),))
    read = _read(files, tags, refused, on_file, {s: d for s, (_, d) in managed.items()},
                 plain_html, detect, fan)
    converted, left_out = read.converted, read.left_out
    placed: dict[str, str] = {s: managed[s][0].path for s in (*converted, *read.unchanged)
                              if s in managed}
    fresh: list[str] = []
    changed: list[str] = []
    kept: list[Kept] = []
    revived: list[str] = []
    for source, one in converted.items():
        if one.article.is_index:
            continue
        if source in managed:
            changed.append(source)
            continue
        decided = known.decided(source, one.digest, history)
        if decided is not None and source not in revive:
            kept.append(decided)
            continue
        path = _free(spelled(target_path(source, directory), names), used, names)
        why = _placement_refusal(path, used, names) or _checked(read, source, path, tags,
                                                                check)
        if why is not None:
            left_out.append(NotConverted(source, why))
            continue
        used.add(path)
        placed[source] = path
        (revived if decided is not None else fresh).append(source)
    for source in changed:
        why = _checked(read, source, placed[source], tags, check)
        if why is not None:
            left_out.append(NotConverted(source, why))
            continue
        new_path = _free(spelled(target_path(source, directory), names), used, names)
        used.add(new_path)
        placed[source] = new_path
    dropped = {n.source for n in left_out}
    changed = [s for s in changed if s not in dropped]
    converted = read.converted
    named = _named(converted, managed)
    where = {**{k.source: k.by or k.path for k in kept}, **placed}
    resolve = _Resolver.of(where, named)
    notes_now = _Resolver.of({s: s for s in where}, named)
    notes_ever = _Resolver.of({s: s for s in (*where, *managed, *known.gone)}, named)
    note_at = {**known.notes, **{path: s for s, path in where.items()}}

    def key(link: Link) -> LinkKey:
        return (link.rel, note_at.get(to_tree_path(link.href), link.href))

    def written(one: Converted) -> tuple[tuple[NoteTarget, ...], tuple[NoteTarget, ...]]:
        return written_targets(one, lambda t: notes_now.note(t.name, t.is_path))

    unresolved: list[tuple[str, str]] = []
    ops: list[BatchOp] = []
    old_paths = {to_document_path(managed[s][0].path): s for s in changed}
    remap = {old: to_document_path(placed[s]) for old, s in old_paths.items()}
    new_targets = {to_document_path(placed[s]) for s in (*fresh, *revived)}
    relinks: list[BatchOp] = []
    for source in read.unchanged:
        record = managed[source][0]
        unlinks, adds = _relinks(record, _unchanged_links(record, source, read, tags,
                                                          resolve), remap, new_targets)
        ops += unlinks
        relinks += adds
    pages, placed_pages = _index_pages(read, directory, used, resolve, left_out, unresolved)
    renders: list[_Render] = []
    for source in (*fresh, *revived):
        one = converted[source]
        rows, front_rows = written(one)
        renders.append(_Render(one, _note_links(one, resolve, placed[source], unresolved),
                               (), rows, _hrefs(one, resolve), front_rows,
                               placed[source] if fan is not None else None))
    carried: list[Carried] = []
    for source in changed:
        one = converted[source]
        current = managed[source][0]
        note = _note_links(one, resolve, placed[source], unresolved)
        before = _before(current, notes_ever)
        links, store_links, dropped_links = carried_links(
            current, note, before, {*fresh, *revived}, key, remap,
            to_document_path(placed[source]))
        own = decode_shape(current.source_shape)
        labels = tuple(e for e in current.entities if e not in one.front.entities
                       and (own is None or e not in own.entities))
        if labels or store_links or dropped_links:
            carried.append(Carried(source, placed[source], labels, store_links,
                                   dropped_links))
        rows, front_rows = written(one)
        renders.append(_Render(one, links, labels, rows, _hrefs(one, resolve), front_rows,
                               None))
    rendered = _fanned(fan, lambda job: job.done(stamp), renders)
    writes = len(fresh) + len(revived)
    for job, (html, _) in zip(renders[:writes], rendered[:writes], strict=True):
        ops.append(BWrite(WriteInput(file_html=html, path=placed[job.converted.source])))
    for source, (html, _) in zip(changed, rendered[writes:], strict=True):
        ops.append(BCorrect(managed[source][0].path,
                            WriteInput(file_html=html, path=placed[source])))
    read_ahead = tuple(read for _, read in rendered if read is not None)
    deleted = sorted(s for s in managed if s not in read.present)
    ops += [BArchive(managed[s][0].path) for s in deleted]
    ops += relinks
    return ImportPlan(
        ops=tuple(ops),
        added=tuple((s, placed[s]) for s in fresh),
        changed=tuple((s, managed[s][0].path, placed[s]) for s in changed),
        deleted=tuple((s, managed[s][0].path) for s in deleted),
        unchanged=tuple(read.unchanged), indexes=tuple(placed_pages), pages=pages,
        refused=tuple(sorted(left_out, key=lambda n: n.source)),
        unresolved=tuple(unresolved), kept=tuple(kept),
        revived=tuple((s, placed[s]) for s in revived), carried=tuple(carried),
        read=read_ahead)


def _named(converted: Mapping[str, Converted],
           managed: Mapping[str, tuple[MemoryRecord, str | None]]
           ) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each note's title and aliases: from its conversion, or, for a note not
    converted (unchanged), from its memory, which holds the same."""
    named = {s: (record.title, record.aliases) for s, (record, _) in managed.items()}
    named.update({s: (c.title, c.front.aliases) for s, c in converted.items()})
    return named


def _unchanged_links(record: MemoryRecord, source: str, read: _Read, tags: Sequence[str],
                     resolve: _Resolver) -> tuple[Link, ...]:
    """The links an unchanged note makes now, from the targets its memory records (so
    the note need not be converted); a memory that records none is converted."""
    rows = targets_of(record)
    if rows is not None:
        return _links(((rel, name, is_path) for rel, name, is_path, _ in rows),
                      resolve, record.path, [], source)
    raw = read.raws.get(source)
    one = convert_markdown(source, raw, tags).value_or(None) if raw is not None else None
    return _note_links(one, resolve, record.path, []) if one is not None else ()


def _before(current: MemoryRecord, notes: _Resolver) -> frozenset[LinkKey] | None:
    """The keys of the targets the live version's note named, each by the note it
    resolved to when written or, when it resolved to none then, now; None when the
    memory does not say (imported before it recorded its note's targets)."""
    recorded = targets_of(current)
    if recorded is None:
        return None
    keys = set()
    for rel, name, is_path, note in recorded:
        resolved = note or notes.note(name, is_path)
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

