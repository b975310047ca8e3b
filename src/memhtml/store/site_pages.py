"""The site's HTML pages: a listing per directory (the root's also the way in: recent
memories, the task list, the tags and entities most used), a readable page per
memory, a page per tag and per entity with an index of each, and the task list.

Every value that comes from a memory (title, claim, tag, entity, path, reason, the
article's text) goes through ``escape_text`` or ``escape_attribute``; every ``href``
is built here from a tree path the model vouches for, never copied from a file. An
edge becomes a link only when its target is a memory the site publishes; otherwise
it is shown as text with the reason.

Links are relative (``../../areas/index.html``), so the site also works opened from
disk or published under a sub-path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from memhtml.contracts.paths import to_document_path, to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.format import escape_attribute, escape_text
from memhtml.head import is_active
from memhtml.store.site_article import article_blocks
from memhtml.store.site_history import history_events
from memhtml.store.site_model import (
    CONTENT_SECURITY_POLICY,
    ENTITY_ROOT,
    GENERATOR,
    INDEX_NAME,
    STYLESHEET_PATH,
    TAG_ROOT,
    TASKS_PATH,
    Directory,
    Label,
    SiteModel,
    index_path,
    is_folder_note,
    name_of,
    parent,
    view_path,
)
from memhtml.store.tasks import is_overdue

_REASON_LIMIT = 600
"""A refusal lists every violation; the page shows the start, doctor shows it all."""

RECENT_LIMIT = 20
"""Memories the root page lists as recently updated."""
LABEL_LIMIT = 50
"""Tags (and entities) the root page lists, the most used first; the rest are on
the index of all tags (entities)."""


@dataclass(frozen=True, slots=True)
class _Kind:
    """Tags or entities: the words and paths their pages use."""

    one: str
    many: str
    root: str

    @property
    def index(self) -> str:
        return f"{self.root}/{INDEX_NAME}"


TAGS = _Kind("tag", "tags", TAG_ROOT)
ENTITIES = _Kind("entity", "entities", ENTITY_ROOT)


def _up(page: str) -> str:
    """From the page at tree path ``page`` back to the site root."""
    return "../" * page.count("/")


def _href(relative: str) -> str:
    """A relative reference, percent-encoded. ``quote`` encodes ``:``, so a file named
    ``javascript:x.html`` stays a path and never reads as a scheme; it also encodes
    ``%``, ``\\`` and controls, so no name can turn into ``..`` or leave the site."""
    return escape_attribute(quote(relative, safe="/"))


def site_href(page: str, target: str) -> str:
    """An escaped ``href`` from the page at ``page`` to the tree path ``target``."""
    return _href(_up(page) + target)


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _time(value: str) -> str:
    """An instant as ``2026-02-17 08:31 UTC``, the exact value kept in ``datetime``."""
    shown = value
    if len(value) == 20 and value[10] == "T" and value.endswith("Z"):
        shown = f"{value[:10]} {value[11:16]} UTC"
    return f'<time datetime="{escape_attribute(value)}">{escape_text(shown)}</time>'


def _page(path: str, title: str, body: Iterable[str]) -> str:
    return "\n".join([
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="{GENERATOR}">',
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">',
        f"<title>{escape_text(title)}</title>",
        f'<link rel="stylesheet" href="{site_href(path, STYLESHEET_PATH)}">',
        "</head>",
        "<body>",
        *body,
        "</body>",
        "</html>",
        "",
    ])


def _breadcrumb(page: str, directory: str, current: str | None = None) -> str:
    """``store / a / b`` with every ancestor linked; ``current`` names a leaf page."""
    segments = directory.split("/") if directory else []
    trail = ["", *("/".join(segments[: i + 1]) for i in range(len(segments)))]
    labels = ["store", *segments]
    items = []
    for i, (where, label) in enumerate(zip(trail, labels, strict=True)):
        if current is None and i == len(trail) - 1:
            items.append(f'<li aria-current="page">{escape_text(label)}</li>')
        else:
            target = site_href(page, index_path(where))
            items.append(f'<li><a href="{target}">{escape_text(label)}</a></li>')
    if current is not None:
        items.append(f'<li aria-current="page">{escape_text(current)}</li>')
    return '<nav aria-label="Breadcrumb"><ol>' + "".join(items) + "</ol></nav>"


def _trail(page: str, crumbs: Sequence[tuple[str, str]], current: str) -> str:
    """``store / <crumb> / ... / current``: each crumb (label, tree path) linked."""
    items = [f'<li><a href="{site_href(page, target)}">{escape_text(label)}</a></li>'
             for label, target in [("store", index_path("")), *crumbs]]
    items.append(f'<li aria-current="page">{escape_text(current)}</li>')
    return '<nav aria-label="Breadcrumb"><ol>' + "".join(items) + "</ol></nav>"


def _facts(record: MemoryRecord) -> list[str]:
    facts = [f"<span>{escape_text(record.memory_type)}</span>"]
    if is_active(record):
        facts.append(f"<span>{escape_text(record.status)}</span>")
    else:
        facts.append('<strong class="badge">archived</strong>')
    if record.task_status is not None:
        facts.append(f"<span>task {escape_text(record.task_status)}</span>")
    if record.due_at is not None:
        # The day reads at a glance; the full instant stays in the attribute.
        due = escape_text(record.due_at[:10])
        facts.append(f'<span>due <time datetime="{escape_attribute(record.due_at)}">{due}</time>'
                     "</span>")
    return facts


def _memory_item(page: str, record: MemoryRecord, *, whole_path: bool = False,
                 facts: Sequence[str] | None = None, css: str = "memory") -> str:
    """A memory as a list entry: its title linked to its page, its claim, its facts
    and its file name (its whole path on a page that spans directories)."""
    shown = record.path if whole_path else name_of(record.path)
    facts = [*(_facts(record) if facts is None else facts), f"<code>{escape_text(shown)}</code>"]
    if not is_active(record):
        css += " archived"
    target = site_href(page, view_path(record.path))
    return (
        f'<li class="{css}">\n'
        f'<h3><a href="{target}">{escape_text(record.title)}</a></h3>\n'
        f'<p class="claim">{escape_text(record.claim)}</p>\n'
        f'<p class="facts">{" · ".join(facts)}</p>\n'
        "</li>"
    )


def _reason(text: str) -> str:
    if len(text) > _REASON_LIMIT:
        text = text[:_REASON_LIMIT].rstrip() + "\u2026"
    return escape_text(text)


def _folder_notes(page: str, entry: Directory) -> list[str]:
    """The memory an import made of the folder's ``index.md`` or ``README.md``,
    linked at the top of the directory's page."""
    notes = [r for r in entry.memories if is_active(r) and is_folder_note(r)]
    return [f'<p class="folder-note">About this folder: '
            f'<a href="{site_href(page, view_path(r.path))}">{escape_text(r.title)}</a></p>'
            for r in notes]


def _recent(model: SiteModel) -> list[str]:
    """The active memories updated last, newest first (equal stamps by path)."""
    active = [model.published[path] for path in sorted(model.published)
              if is_active(model.published[path])]
    active.sort(key=lambda r: r.updated_at, reverse=True)
    if not active:
        return []
    page = index_path("")
    out = ['<section aria-labelledby="recent">', '<h2 id="recent">Recently updated</h2>',
           '<ol class="recent">']
    for r in active[:RECENT_LIMIT]:
        target = site_href(page, view_path(r.path))
        out.append(f'<li><a href="{target}">{escape_text(r.title)}</a> {_time(r.updated_at)} '
                   f"<code>{escape_text(r.path)}</code></li>")
    out += ["</ol>", "</section>"]
    return out


def _label_links(page: str, labels: Iterable[Label]) -> list[str]:
    """Each tag (entity) as a chip linking its page, with how many memories carry it."""
    out = ['<ul class="chips labels">']
    out += [f'<li><a href="{site_href(page, label.path)}">{escape_text(label.value)}</a> '
            f'<span class="count">{len(label.memories)}</span></li>' for label in labels]
    out.append("</ul>")
    return out


def _most_used(kind: _Kind, labels: Mapping[str, Label]) -> list[str]:
    """The root page's list of the tags (entities) most used, and how many more."""
    if not labels:
        return []
    page = index_path("")
    ranked = sorted(labels.values(), key=lambda label: (-len(label.memories), label.value))
    heading = kind.many.capitalize()
    out = [f'<section aria-labelledby="{kind.many}">', f'<h2 id="{kind.many}">{heading}</h2>',
           *_label_links(page, ranked[:LABEL_LIMIT])]
    more = len(ranked) - LABEL_LIMIT
    every = (f'<a href="{site_href(page, kind.index)}">'
             f"all {_plural(len(ranked), kind.one, kind.many)}</a>")
    if more > 0:
        out.append(f'<p class="explain">The {LABEL_LIMIT} most used; '
                   f"{more} more: {every}.</p>")
    else:
        out.append(f'<p class="explain">Most used first: {every}.</p>')
    out.append("</section>")
    return out


def _is_open(record: MemoryRecord) -> bool:
    """An active task not done (no status reads as ``todo``, as ``task list`` reads it)."""
    return is_active(record) and record.task_status != "done"


def _open_tasks(model: SiteModel) -> tuple[list[MemoryRecord], list[MemoryRecord]]:
    """The published tasks: open ones by due date, undated last, then by path; and
    the done or archived ones by path."""
    tasks = [model.published[p] for p in sorted(model.published)
             if model.published[p].memory_type == "task"]
    open_ = [r for r in tasks if _is_open(r)]
    open_.sort(key=lambda r: (r.due_at is None, r.due_at or ""))
    return open_, [r for r in tasks if not _is_open(r)]


def _overdue(model: SiteModel, record: MemoryRecord) -> bool:
    """Open and due before the store's newest stamp; a closed task never is."""
    return model.newest is not None and _is_open(record) and is_overdue(
        record.due_at, model.newest, record.task_status)


def _task_summary(model: SiteModel) -> str:
    open_, closed = _open_tasks(model)
    overdue = sum(1 for r in open_ if _overdue(model, r))
    text = _plural(len(open_), "open task", "open tasks")
    if overdue:
        text += f" ({overdue} overdue)"
    if closed:
        text += f", {len(closed)} done or archived"
    return text


def _home(model: SiteModel) -> list[str]:
    """What only the root page shows: recent memories, the tasks, tags and entities."""
    page = index_path("")
    tasks = site_href(page, TASKS_PATH)
    return [
        *_recent(model),
        '<section aria-labelledby="tasks">', '<h2 id="tasks">Tasks</h2>',
        f'<p>{escape_text(_task_summary(model))}: <a href="{tasks}">the task list</a>, '
        "by due date.</p>",
        "</section>",
        *_most_used(TAGS, model.tags),
        *_most_used(ENTITIES, model.entities),
    ]


def index_page(model: SiteModel, directory: str) -> str:
    entry = model.directories[directory]
    page = index_path(directory)
    shown = "/" + directory + "/" if directory else "/"
    heading = name_of(directory) if directory else "Memory store"
    summary = [_plural(entry.total, "memory", "memories")]
    if entry.archived_total:
        summary[0] += f" ({entry.archived_total} archived)"
    if entry.memories and len(entry.memories) != entry.total:
        summary.append(f"{len(entry.memories)} here")
    if entry.subdirectories:
        summary.append(_plural(len(entry.subdirectories), "directory", "directories"))
    if entry.skipped:
        summary.append(f"{len(entry.skipped)} skipped")
    if entry.files:
        summary.append(_plural(len(entry.files), "other file", "other files"))

    out = [
        "<header>",
        _breadcrumb(page, directory),
        f"<h1>{escape_text(heading)}</h1>",
        f"<p>{escape_text(shown)} · {', '.join(summary)}</p>",
        "</header>",
        "<main>",
        *_folder_notes(page, entry),
    ]
    if entry.subdirectories:
        out += ['<section aria-labelledby="directories">',
                '<h2 id="directories">Directories</h2>', '<ul class="directories">']
        for sub in sorted(entry.subdirectories):
            name = name_of(sub)
            out.append(f'<li><a href="{_href(name + "/" + INDEX_NAME)}">{escape_text(name)}/</a>'
                       "</li>")
        out += ["</ul>", "</section>"]
    if entry.memories:
        out += ['<section aria-labelledby="memories">', '<h2 id="memories">Memories</h2>',
                '<ul class="memories">']
        out.extend(_memory_item(page, record) for record in entry.memories)
        out += ["</ul>", "</section>"]
    if not (entry.subdirectories or entry.memories or entry.skipped or entry.files):
        out.append("<p>No memories yet.</p>")
    if not directory:
        out += _home(model)
    if entry.skipped:
        out += ['<section aria-labelledby="skipped">', '<h2 id="skipped">Skipped</h2>',
                '<p class="explain">Not published: the format check refused these files, so '
                "the site does not link them.</p>", '<ul class="skipped">']
        for skipped in entry.skipped:
            out.append(f"<li><code>{escape_text(name_of(skipped.path))}</code> "
                       f'<span class="reason">{_reason(skipped.reason)}</span></li>')
        out += ["</ul>", "</section>"]
    if entry.files:
        out += ['<section aria-labelledby="files">', '<h2 id="files">Other files</h2>',
                '<p class="explain">In the repository but not memories; listed, not linked.</p>',
                '<ul class="files">']
        out.extend(f"<li><code>{escape_text(name_of(path))}</code></li>" for path in entry.files)
        out += ["</ul>", "</section>"]
    out.append("</main>")
    title = (shown if directory else heading) + " · memhtml"
    return _page(page, title, out)


def label_page(kind: _Kind, label: Label) -> str:
    """The page of one tag (entity): every published memory carrying it, by path."""
    page = label.path
    archived = sum(1 for r in label.memories if not is_active(r))
    count = _plural(len(label.memories), "memory", "memories")
    if archived:
        count += f" ({archived} archived)"
    out = [
        "<header>",
        _trail(page, [(kind.many, kind.index)], label.value),
        f"<h1>{escape_text(label.value)}</h1>",
        f"<p>{escape_text(kind.one.capitalize())} · {count}</p>",
        "</header>",
        "<main>",
        '<section aria-labelledby="memories">', '<h2 id="memories">Memories</h2>',
        '<ul class="memories">',
        *(_memory_item(page, r, whole_path=True) for r in label.memories),
        "</ul>", "</section>",
        "</main>",
    ]
    return _page(page, f"{label.value} · {kind.many} · memhtml", out)


def label_index_page(kind: _Kind, labels: Mapping[str, Label]) -> str:
    """Every tag (entity), in code point order, each linked with its count."""
    page = kind.index
    heading = kind.many.capitalize()
    out = [
        "<header>",
        _trail(page, [], kind.many),
        f"<h1>{heading}</h1>",
        f"<p>{_plural(len(labels), kind.one, kind.many)}, each with the number of "
        "memories carrying it</p>",
        "</header>",
        "<main>",
        *_label_links(page, (labels[value] for value in sorted(labels))),
        "</main>",
    ]
    return _page(page, f"{heading} · memhtml", out)


def tasks_page(model: SiteModel) -> str:
    """Open tasks by due date (undated last, then by path), overdue ones marked, then
    the done and archived ones. Overdue is judged against the newest stamp of any
    memory in the store, since a page that read the clock would change by itself."""
    page = TASKS_PATH
    open_, closed = _open_tasks(model)

    def item(record: MemoryRecord) -> str:
        overdue = _overdue(model, record)
        facts = [f"<span>{escape_text(record.task_status or 'todo')}</span>"]
        if overdue:
            facts.insert(0, '<strong class="badge overdue">overdue</strong>')
        if not is_active(record):
            facts.append('<strong class="badge">archived</strong>')
        if record.due_at is not None:
            facts.append(f'<span>due <time datetime="{escape_attribute(record.due_at)}">'
                         f"{escape_text(record.due_at[:10])}</time></span>")
        else:
            facts.append("<span>no due date</span>")
        css = "memory task overdue" if overdue else "memory task"
        return _memory_item(page, record, whole_path=True, facts=facts, css=css)

    out = [
        "<header>",
        _trail(page, [], "tasks"),
        "<h1>Tasks</h1>",
        f"<p>{escape_text(_task_summary(model))}</p>",
        "</header>",
        "<main>",
    ]
    if model.newest is not None:
        day = escape_text(model.newest[:10])
        out.append(f'<p class="explain">Overdue as of <time datetime="'
                   f'{escape_attribute(model.newest)}">{day}</time>, the newest memory\'s date '
                   "(the site reads no clock).</p>")
    out += ['<section aria-labelledby="open">', '<h2 id="open">Open</h2>']
    if open_:
        out += ['<ul class="memories tasks">', *(item(r) for r in open_), "</ul>"]
    else:
        out.append('<p class="explain">No open tasks.</p>')
    out.append("</section>")
    if closed:
        out += ['<section aria-labelledby="closed">', '<h2 id="closed">Done and archived</h2>',
                '<ul class="memories tasks">', *(item(r) for r in closed), "</ul>",
                "</section>"]
    out.append("</main>")
    return _page(page, "Tasks · memhtml", out)


def _edge(rel: str, target: str) -> str:
    """One edge as a list item; ``target`` is markup built here."""
    return (f'<li><span class="rel">{escape_text(rel.replace("_", " "))}</span> '
            f'<span class="target">{target}</span></li>')


class _MemoryPage:
    """One memory's readable page, and the links it may make."""

    def __init__(self, model: SiteModel, record: MemoryRecord) -> None:
        self.model = model
        self.record = record
        self.path = view_path(record.path)

    def link_to(self, href: str) -> str | None:
        """The escaped href of a published memory's page for a document-form href, or
        None when no published memory sits there."""
        if not href.startswith("/") or href.startswith("//"):
            return None
        target = to_tree_path(href)
        if target not in self.model.published:
            return None
        return site_href(self.path, view_path(target))

    def _target(self, href: str) -> str:
        link = self.link_to(href)
        target = to_tree_path(href)
        if link is not None:
            title = self.model.published[target].title
            return (f'<a href="{link}">{escape_text(title)}</a> '
                    f"<code>{escape_text(target)}</code>")
        directory = self.model.directories.get(parent(target))
        refused = directory is not None and any(s.path == target for s in directory.skipped)
        why = "skipped: the format check refused it" if refused else "no memory published there"
        return (f'<span class="unlinked"><code>{escape_text(href)}</code> '
                f'<span class="why">{why}</span></span>')

    def _chip(self, value: str, pages: Mapping[str, Label]) -> str:
        """A tag or an entity, linked to its page; an alias, as text."""
        label = pages.get(value)
        if label is None:
            return f"<li>{escape_text(value)}</li>"
        return f'<li><a href="{site_href(self.path, label.path)}">{escape_text(value)}</a></li>'

    def _about(self) -> list[str]:
        r = self.record
        rows: list[tuple[str, str]] = [("Type", escape_text(r.memory_type))]
        status = escape_text(r.status)
        if r.archived_at is not None:
            status += f", archived {_time(r.archived_at)}"
        elif r.archived:
            status += ", under archive/"
        rows.append(("Status", status))
        if r.task_status is not None:
            rows.append(("Task", escape_text(r.task_status)))
        if r.due_at is not None:
            rows.append(("Due", _time(r.due_at)))
        if r.event_at is not None:
            rows.append(("Happened", _time(r.event_at)))
        rows += [("Created", _time(r.created_at)), ("Updated", _time(r.updated_at))]
        if r.valid_from is not None:
            rows.append(("Valid from", _time(r.valid_from)))
        if r.valid_until is not None:
            rows.append(("Valid until", _time(r.valid_until)))
        if r.superseded_by is not None:
            rows.append(("Superseded by", self._target(r.superseded_by)))
        if r.needs_revision:
            rows.append(("Needs revision", "yes"))
        if r.confidence is not None:
            rows.append(("Confidence", escape_text(f"{r.confidence:.2f}")))
        if r.importance is not None:
            rows.append(("Importance", escape_text(str(r.importance))))
        if r.author is not None:
            rows.append(("Author", escape_text(r.author)))
        for label, values, pages in (("Entities", r.entities, self.model.entities),
                                     ("Tags", r.tags, self.model.tags),
                                     ("Also called", r.aliases, {})):
            if values:
                chips = "".join(self._chip(value, pages) for value in values)
                rows.append((label, f'<ul class="chips">{chips}</ul>'))
        source = site_href(self.path, r.path)
        rows.append(("File", f'<a href="{source}"><code>{escape_text(r.path)}</code></a>'))
        out = ['<section aria-labelledby="about">', '<h2 id="about">About this memory</h2>',
               '<dl class="about">']
        out += [f"<dt>{label}</dt><dd>{value}</dd>" for label, value in rows]
        out += ["</dl>", "</section>"]
        return out

    def _edges(self) -> list[str]:
        r = self.record
        outbound = [_edge(link.rel, self._target(link.href)) for link in r.links]
        inbound = []
        for source in sorted(set(self.model.view.inbound(to_document_path(r.path)))):
            other = self.model.published.get(source)
            if other is None or source == r.path:
                continue
            rels = sorted({link.rel for link in other.links if to_tree_path(link.href) == r.path})
            target = site_href(self.path, view_path(source))
            inbound += [_edge(rel, f'<a href="{target}">{escape_text(other.title)}</a> '
                                   f"<code>{escape_text(source)}</code>") for rel in rels]
        out = ['<section aria-labelledby="links">', '<h2 id="links">Links</h2>']
        if outbound:
            out += ['<ul class="edges outbound">', *outbound, "</ul>"]
        else:
            out.append('<p class="explain">This memory links to no other memory.</p>')
        out += ["</section>", '<section aria-labelledby="linked-from">',
                '<h2 id="linked-from">Linked from</h2>']
        if inbound:
            out += ['<ul class="edges inbound">', *inbound, "</ul>"]
        else:
            out.append('<p class="explain">No published memory links here.</p>')
        out.append("</section>")
        return out

    def _history(self) -> list[str]:
        events = history_events(self.model.view, self.record, _time, self._target)
        return ['<section aria-labelledby="history">', '<h2 id="history">History</h2>',
               '<ol class="history">', *(f"<li>{e.what}</li>" for e in events), "</ol>",
               '<p class="explain">Every commit that touched it, following moves: '
               f"<code>memhtml log {escape_text(self.record.path)}</code></p>", "</section>"]

    def render(self) -> str:
        r = self.record
        directory = parent(r.path)
        text = article_blocks(r.html, self.link_to) or [f"<p>{escape_text(r.body_text)}</p>"]
        listing = site_href(self.path, index_path(directory))
        shown = "/" + directory + "/" if directory else "/"
        body = [
            "<header>",
            _breadcrumb(self.path, directory, name_of(r.path)),
            f"<h1>{escape_text(r.title)}</h1>",
            f'<p class="facts">{" · ".join(_facts(r))}</p>',
            "</header>",
            "<main>",
            '<article class="memory-text">',
            *text,
            "</article>",
            *self._about(),
            *self._edges(),
            *self._history(),
            "</main>",
            "<footer>",
            f'<p><a href="{site_href(self.path, r.path)}">The memory file as committed</a> · '
            f'<a href="{listing}">Everything in {escape_text(shown)}</a></p>',
            "</footer>",
        ]
        return _page(self.path, f"{r.title} · memhtml", body)


def memory_page(model: SiteModel, record: MemoryRecord) -> str:
    """The readable page of a memory the model publishes."""
    return _MemoryPage(model, record).render()
