"""The static site: listing pages, a readable page per memory, pages per tag and per
entity, a task list, a sitemap, the stylesheet and the hosts' header file.

Serving the repository's tree at a site root makes the store browsable; what is
missing is a way in and a way to read. ``render_site`` adds an ``index.html`` per
directory (the root's also lists the recent memories, the tasks and the tags and
entities most used), a readable page per memory under ``memhtml-site/view/``, a page
per tag and per entity under ``memhtml-site/tag/`` and ``memhtml-site/entity/`` with
an index of each, the task list at ``memhtml-site/tasks/``, ``sitemap.xml``, one
stylesheet and ``_headers``, and nothing else: the memory files are published as
committed.

Why a memory's readable page is a generated page and not the file itself: the
format's closed head lets a memory file hold only its metadata and its
``memhtml-*`` edges (any other ``<link>`` is refused), so a file cannot pull in a
stylesheet, and rewriting committed memories to suit the site would move every file
on each publish. The file stays the data; the site reads it.

The output is a pure function of the view and the tree's path list. Every listing is
sorted (by path, or by a stamp or a count with the path or the value breaking ties)
and nothing reads a clock or the commit id; "overdue" on the task list is judged
against the newest stamp in the store. So a write rewrites only its own memory's
page, the pages of memories it links to or from, the listings of its directory and
that directory's ancestors (they count their whole subtree; the root also lists the
recent memories, the tags and the entities), the pages of the tags and entities it
carries or carried and their indexes (which count them), the task list when it
changes a task or moves the store's newest stamp, and the sitemap; every other
committed page stays byte-identical.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import quote

from memhtml.contracts.services import PathChange, TreeEntry
from memhtml.contracts.view import HeadView
from memhtml.store.site_model import (
    CONTENT_SECURITY_POLICY,
    GENERATOR,
    HEADER_POLICY,
    HEADERS_PATH,
    INDEX_NAME,
    SITE_DIR,
    SITEMAP_PATH,
    STYLESHEET_PATH,
    TASKS_PATH,
    VIEW_ROOT,
    SiteModel,
    build_model,
    index_path,
    is_generated_path,
    view_path,
)
from memhtml.store.site_pages import (
    ENTITIES,
    TAGS,
    index_page,
    label_index_page,
    label_page,
    memory_page,
    tasks_page,
)
from memhtml.store.site_style import STYLESHEET

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "GENERATOR",
    "HEADERS",
    "HEADERS_PATH",
    "HEADER_POLICY",
    "INDEX_NAME",
    "SITEMAP_NAMESPACE",
    "SITEMAP_PATH",
    "SITE_DIR",
    "STYLESHEET",
    "STYLESHEET_PATH",
    "TASKS_PATH",
    "VIEW_ROOT",
    "is_generated_path",
    "render_site",
    "site_changes",
    "stale_artifacts",
    "view_path",
]

SITEMAP_NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"

# Netlify and Cloudflare Pages read this file. The memory files cannot carry a policy
# of their own, so this is what gives them one when the site is hosted there; hosts
# that ignore it still serve the generated pages with their <meta> policy.
HEADERS = (
    "# Written by memhtml publish: every path, memory files included, gets the policy\n"
    "# the generated pages carry in their <meta>.\n"
    "/*\n"
    f"  Content-Security-Policy: {HEADER_POLICY}\n"
    "  X-Content-Type-Options: nosniff\n"
)


def _xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _sitemap(model: SiteModel, base_url: str) -> str:
    base = base_url.rstrip("/")
    entries: list[tuple[str, str | None]] = [(index_path(d), None) for d in model.directories]
    entries += [(path, None) for path in _label_paths(model)]
    entries.append((TASKS_PATH, None))
    for path, record in model.published.items():
        entries += [(path, record.updated_at), (view_path(path), record.updated_at)]
    out = ['<?xml version="1.0" encoding="UTF-8"?>', f'<urlset xmlns="{SITEMAP_NAMESPACE}">']
    for path, lastmod in sorted(entries):
        loc = _xml_text(base + quote("/" + path, safe="/"))
        stamp = f"<lastmod>{_xml_text(lastmod)}</lastmod>" if lastmod else ""
        out.append(f"<url><loc>{loc}</loc>{stamp}</url>")
    out += ["</urlset>", ""]
    return "\n".join(out)


def _label_paths(model: SiteModel) -> list[str]:
    """The paths ``_label_pages`` writes."""
    paths: list[str] = []
    for kind, labels in ((TAGS, model.tags), (ENTITIES, model.entities)):
        if labels:
            paths += [kind.index, *(label.path for label in labels.values())]
    return paths


def _label_pages(model: SiteModel) -> dict[str, str]:
    """Each tag's and entity's page, and the index of each kind that has any."""
    pages: dict[str, str] = {}
    for kind, labels in ((TAGS, model.tags), (ENTITIES, model.entities)):
        if labels:
            pages[kind.index] = label_index_page(kind, labels)
            pages.update((label.path, label_page(kind, label)) for label in labels.values())
    return pages


def render_site(
    view: HeadView, tree_paths: Iterable[str], *, base_url: str = ""
) -> dict[str, bytes]:
    """Every generated file, tree path -> bytes, keys in ascending order.

    ``tree_paths`` is the tree's path list (generated files in it are ignored, so a
    stale page never keeps its directory alive). ``base_url`` prefixes the sitemap's
    locations; the default leaves them root-relative.
    """
    model = build_model(view, tree_paths)
    site: dict[str, str] = {
        view_path(path): memory_page(model, record) for path, record in model.published.items()
    }
    site.update(_label_pages(model))
    site[TASKS_PATH] = tasks_page(model)
    # A directory's listing wins over any other page should a hand-made directory
    # ever be named like one under memhtml-site/; both are index.html and cannot
    # both exist.
    site.update((index_path(directory), index_page(model, directory))
                for directory in model.directories)
    site[SITEMAP_PATH] = _sitemap(model, base_url)
    site[STYLESHEET_PATH] = STYLESHEET
    site[HEADERS_PATH] = HEADERS
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


def site_changes(
    entries: Iterable[TreeEntry], current: Mapping[str, bytes], site: Mapping[str, bytes]
) -> tuple[PathChange, ...]:
    """The writes that bring a tree's generated files to ``site`` (``current``: their
    committed bytes), sorted by path: a page whose bytes differ is rewritten, a
    generated file ``site`` no longer has is removed.

    A symbolic link at a generated path is left as it is, never rewritten or removed:
    a commit keeps a path's mode, so writing a page there would make a link whose
    target is a page of HTML, and the link is a person's file, not ours."""
    listed = tuple(entries)
    linked = {e.path for e in listed if e.is_symlink}
    generated = {e.path for e in listed if is_generated_path(e.path)}
    changes = [PathChange(path, data) for path, data in site.items()
               if path not in linked and current.get(path) != data]
    changes += [PathChange(path, None) for path in generated - set(site) - linked]
    return tuple(sorted(changes, key=lambda change: change.path))
