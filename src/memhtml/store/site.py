"""The static site: an ``index.html`` for every directory and a root ``sitemap.xml``.

A memory file is already a page a browser can open, and its links are root-relative,
so serving the repository's tree at a site root makes the store browsable; what is
missing is a way in. ``render_site`` adds one listing page per directory, a sitemap
and one stylesheet, and nothing else: the memory files are published as committed.

The output is a pure function of the view and the tree's path list. Every listing is
sorted by path, nothing reads a clock or the commit id, and a page shows only what
sits directly in its own directory, so a write rewrites the pages of the directories
it touches (and the sitemap) and leaves every other committed page byte-identical.

Listing pages link relatively (``deploy/index.html``, ``../index.html``), so they also
work opened from disk or published under a sub-path; the memory files' own links need
the site root, which is how they are authored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.format.markup import escape_attribute, escape_text
from memhtml.head.indexes import is_active

INDEX_NAME = "index.html"
SITEMAP_PATH = "sitemap.xml"
STYLESHEET_PATH = ".site/memhtml.css"
GENERATOR = "memhtml publish"
"""The ``<meta name="generator">`` content that marks a page as written here."""

SITEMAP_NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"

# The listing pages carry no script and load nothing but the stylesheet; the policy
# makes that a property the browser enforces, not only one the template keeps.
_CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'"
)

STYLESHEET = """\
:root {
  color-scheme: light dark;
  --fg: #1d1f21;
  --muted: #5c6370;
  --rule: #d8dce2;
  --accent: #1f5fbf;
  --mark: #fff3b0;
}
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e6e6; --muted: #a0a8b4; --rule: #3a3f47; --accent: #8ab4f8; --mark: #5c5220; }
}
body {
  margin: 0 auto;
  max-width: 50rem;
  padding: 1.5rem 1.25rem 3rem;
  font: 1rem/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg);
}
a { color: var(--accent); text-decoration: none; }
a:hover, a:focus { text-decoration: underline; }
nav ol { display: flex; flex-wrap: wrap; gap: 0.35rem; list-style: none; margin: 0; padding: 0;
  color: var(--muted); font-size: 0.9rem; }
nav li + li::before { content: "/"; margin-right: 0.35rem; }
h1 { margin: 0.4rem 0 0.2rem; font-size: 1.7rem; }
h2 { margin: 2rem 0 0.6rem; font-size: 1.05rem; text-transform: uppercase; letter-spacing: 0.05em;
  color: var(--muted); border-bottom: 1px solid var(--rule); padding-bottom: 0.3rem; }
header > p { margin: 0; color: var(--muted); }
ul { list-style: none; margin: 0; padding: 0; }
.directories { display: flex; flex-wrap: wrap; gap: 0.5rem 1.25rem; }
.directories a { font-weight: 600; }
.memories > li { padding: 0.7rem 0; border-bottom: 1px solid var(--rule); }
.memories h3 { margin: 0; font-size: 1.05rem; }
.memories .claim { margin: 0.2rem 0; }
.memories .facts { margin: 0; color: var(--muted); font-size: 0.85rem; }
.facts code { font-size: 0.85rem; }
.archived h3 a, .archived .claim { color: var(--muted); }
.badge { display: inline-block; padding: 0 0.45rem; border: 1px solid var(--muted);
  border-radius: 0.6rem; font-size: 0.75rem; text-transform: uppercase; letter-spacing: 0.04em; }
.files li { font-family: ui-monospace, monospace; font-size: 0.9rem; }
"""


def is_generated_path(path: str) -> bool:
    """Whether a tree path is one ``render_site`` owns: any ``index.html`` outside the
    state directory, the root sitemap and the stylesheet."""
    if path in (SITEMAP_PATH, STYLESHEET_PATH):
        return True
    return path.rsplit("/", 1)[-1] == INDEX_NAME and not path.startswith(".memhtml/")


def _is_hidden(path: str) -> bool:
    return any(segment.startswith(".") for segment in path.split("/"))


def _parent(path: str) -> str:
    """``a/b/c.html`` -> ``a/b``; a root entry's parent is ``""``."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _index_path(directory: str) -> str:
    return f"{directory}/{INDEX_NAME}" if directory else INDEX_NAME


def _href(relative: str) -> str:
    """A relative reference to a tree name, percent-encoded. ``quote`` encodes ``:``,
    so a file named ``javascript:x.html`` stays a path and never reads as a scheme."""
    return escape_attribute(quote(relative, safe="/"))


@dataclass(slots=True)
class _Directory:
    subdirectories: set[str] = field(default_factory=set)
    memories: list[MemoryRecord] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def _layout(view: HeadView, tree_paths: Iterable[str]) -> dict[str, _Directory]:
    """Directory -> what it directly holds. Memories are every record in the view;
    other files are the tree's remaining non-generated, non-hidden paths (a file the
    head could not read stays reachable from its directory's page)."""
    records = {record.path: record for record in view.records()}
    others = {
        path for path in tree_paths
        if path and path not in records and not is_generated_path(path) and not _is_hidden(path)
    }
    directories: dict[str, _Directory] = {"": _Directory()}

    def holder(path: str) -> _Directory:
        directory = _parent(path)
        while directory not in directories:
            directories[directory] = _Directory()
            directory = _parent(directory)
        return directories[_parent(path)]

    for path, record in records.items():
        holder(path).memories.append(record)
    for path in others:
        holder(path).files.append(path)
    # Every ancestor exists now, so each directory can be hung on its parent.
    for directory in directories:
        if directory:
            directories[_parent(directory)].subdirectories.add(directory)
    for entry in directories.values():
        entry.memories.sort(key=lambda r: r.path)
        entry.files.sort()
    return directories


def _breadcrumb(directory: str) -> str:
    segments = directory.split("/") if directory else []
    depth = len(segments)
    items = []
    if depth:
        items.append(f'<li><a href="{_href("../" * depth + INDEX_NAME)}">store</a></li>')
    else:
        items.append('<li aria-current="page">store</li>')
    for i, segment in enumerate(segments):
        up = depth - i - 1
        if up:
            target = _href("../" * up + INDEX_NAME)
            items.append(f'<li><a href="{target}">{escape_text(segment)}</a></li>')
        else:
            items.append(f'<li aria-current="page">{escape_text(segment)}</li>')
    return '<nav aria-label="Breadcrumb"><ol>' + "".join(items) + "</ol></nav>"


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _memory_item(record: MemoryRecord) -> str:
    live = is_active(record)
    facts = [f"<span>{escape_text(record.memory_type)}</span>"]
    if live:
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
    facts.append(f"<code>{escape_text(_name(record.path))}</code>")
    css = "memory" if live else "memory archived"
    return (
        f'<li class="{css}">\n'
        f'<h3><a href="{_href(_name(record.path))}">{escape_text(record.title)}</a></h3>\n'
        f'<p class="claim">{escape_text(record.claim)}</p>\n'
        f'<p class="facts">{" · ".join(facts)}</p>\n'
        "</li>"
    )


def _index_page(directory: str, entry: _Directory) -> str:
    depth = len(directory.split("/")) if directory else 0
    shown = "/" + directory + "/" if directory else "/"
    heading = _name(directory) if directory else "Memory store"
    archived = sum(1 for r in entry.memories if not is_active(r))
    summary = [_plural(len(entry.memories), "memory", "memories")]
    if archived:
        summary[0] += f" ({archived} archived)"
    if entry.subdirectories:
        summary.append(_plural(len(entry.subdirectories), "directory", "directories"))
    if entry.files:
        summary.append(_plural(len(entry.files), "other file", "other files"))

    out = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="{GENERATOR}">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CONTENT_SECURITY_POLICY}">',
        f"<title>{escape_text(shown if directory else heading)} · memhtml</title>",
        f'<link rel="stylesheet" href="{_href("../" * depth + STYLESHEET_PATH)}">',
        "</head>",
        "<body>",
        "<header>",
        _breadcrumb(directory),
        f"<h1>{escape_text(heading)}</h1>",
        f"<p>{escape_text(shown)} · {', '.join(summary)}</p>",
        "</header>",
        "<main>",
    ]
    if entry.subdirectories:
        out.append('<section aria-labelledby="directories">')
        out.append('<h2 id="directories">Directories</h2>')
        out.append('<ul class="directories">')
        for sub in sorted(entry.subdirectories):
            name = _name(sub)
            out.append(f'<li><a href="{_href(name + "/" + INDEX_NAME)}">{escape_text(name)}/</a>'
                       "</li>")
        out.append("</ul>")
        out.append("</section>")
    if entry.memories:
        out.append('<section aria-labelledby="memories">')
        out.append('<h2 id="memories">Memories</h2>')
        out.append('<ul class="memories">')
        out.extend(_memory_item(record) for record in entry.memories)
        out.append("</ul>")
        out.append("</section>")
    if entry.files:
        out.append('<section aria-labelledby="files">')
        out.append('<h2 id="files">Other files</h2>')
        out.append('<ul class="files">')
        for path in entry.files:
            name = _name(path)
            out.append(f'<li><a href="{_href(name)}">{escape_text(name)}</a></li>')
        out.append("</ul>")
        out.append("</section>")
    if not (entry.subdirectories or entry.memories or entry.files):
        out.append("<p>No memories yet.</p>")
    out += ["</main>", "</body>", "</html>", ""]
    return "\n".join(out)


def _xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _sitemap(directories: Mapping[str, _Directory], base_url: str) -> str:
    base = base_url.rstrip("/")
    entries: list[tuple[str, str | None]] = [(_index_path(d), None) for d in directories]
    for entry in directories.values():
        entries.extend((record.path, record.updated_at) for record in entry.memories)
    out = ['<?xml version="1.0" encoding="UTF-8"?>', f'<urlset xmlns="{SITEMAP_NAMESPACE}">']
    for path, lastmod in sorted(entries):
        loc = _xml_text(base + quote("/" + path, safe="/"))
        stamp = f"<lastmod>{_xml_text(lastmod)}</lastmod>" if lastmod else ""
        out.append(f"<url><loc>{loc}</loc>{stamp}</url>")
    out += ["</urlset>", ""]
    return "\n".join(out)


def render_site(
    view: HeadView, tree_paths: Iterable[str], *, base_url: str = ""
) -> dict[str, bytes]:
    """Every generated file, tree path -> bytes, keys in ascending order.

    ``tree_paths`` is the tree's path list (generated files in it are ignored, so a
    stale page never keeps its directory alive). ``base_url`` prefixes the sitemap's
    locations; the default leaves them root-relative.
    """
    directories = _layout(view, tree_paths)
    site: dict[str, str] = {
        _index_path(directory): _index_page(directory, entry)
        for directory, entry in directories.items()
    }
    site[SITEMAP_PATH] = _sitemap(directories, base_url)
    site[STYLESHEET_PATH] = STYLESHEET
    return {path: site[path].encode("utf-8") for path in sorted(site)}


def stale_artifacts(
    view: HeadView, tree: Mapping[str, bytes], *, base_url: str = ""
) -> list[str]:
    """Generated paths whose committed bytes differ from what ``render_site`` writes
    now, missing ones included, plus generated files that should no longer exist;
    sorted."""
    expected = render_site(view, tree.keys(), base_url=base_url)
    stale = {path for path, data in expected.items() if tree.get(path) != data}
    stale.update(path for path in tree if is_generated_path(path) and path not in expected)
    return sorted(stale)
