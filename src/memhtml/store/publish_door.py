"""The publish door: the generated site committed as one commit on the branch.

``render_site`` is pure; this door reads the tip's version and tree, renders the
pages, and commits only the generated files whose bytes changed (and removes the
generated files that should no longer exist, such as the page of a memory that was
moved or that the checker now refuses), through the same compare-and-swap landing as
every other door. A republish of an unchanged store commits nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.services import PathChange, TreeEntry
from memhtml.head import HeadVersion
from memhtml.store.errors import Refused, StoreError
from memhtml.store.landing import Draft, Landed, land
from memhtml.store.session import Store
from memhtml.store.site import VIEW_ROOT, is_generated_path, render_site, site_changes

Step = Callable[[str], None]
"""Told the name of each phase as it starts (for a progress display)."""


def _quiet(_: str) -> None:
    pass


def _site_changes(
    entries: tuple[TreeEntry, ...], current: dict[str, bytes], site: dict[str, bytes]
) -> tuple[tuple[PathChange, ...], dict[str, bytes | None]]:
    changes = site_changes(entries, current, site)
    return changes, {change.path: current.get(change.path) for change in changes}


def publish(store: Store, base_url: str = "", on_step: Step = _quiet
            ) -> IOResult[Landed, StoreError]:
    """Render an ``index.html`` per directory, a readable page per memory,
    ``sitemap.xml``, the stylesheet and ``_headers`` at the tip, and commit the ones
    that differ. ``base_url`` prefixes the sitemap's locations. The landed ``paths``
    are the files written or removed."""
    git = store.deps.git

    def derive() -> IOResult[Draft, StoreError]:
        on_step("reading the store")
        return store.head().bind(draft_for)

    def draft_for(version: HeadVersion) -> IOResult[Draft, StoreError]:
        sha = version.sha
        if sha is None:
            return IOFailure(Refused("nothing to publish: the branch has no commit yet "
                                     "(run memhtml init)"))
        listed: IOResult[tuple[TreeEntry, ...], StoreError] = git.list_tree(sha)
        return listed.bind(lambda entries: render(version, sha, entries))

    def render(version: HeadVersion, sha: str, entries: tuple[TreeEntry, ...]
               ) -> IOResult[Draft, StoreError]:
        on_step("rendering pages")
        site = render_site(version, [e.path for e in entries], base_url=base_url)
        ids = {e.path: e.blob_id for e in entries if is_generated_path(e.path)}
        blobs: IOResult[dict[str, bytes], StoreError] = git.read_blobs(
            sorted(set(ids.values()))).map(
                lambda found: {path: found[blob] for path, blob in ids.items() if blob in found})

        def draft(current: dict[str, bytes]) -> IOResult[Draft, StoreError]:
            on_step("committing")
            changes, before = _site_changes(entries, current, site)
            views = sum(1 for path in site if path.startswith(VIEW_ROOT + "/"))
            listings = sum(1 for path in site if path.endswith(".html")) - views
            return IOSuccess(Draft(
                parent=sha, changes=changes, ops=("publish",),
                subject=f"{listings} index pages, {views} memory pages, sitemap, "
                        "stylesheet and headers",
                body="Regenerate the listing pages, the memory pages, the sitemap, the "
                     "stylesheet and the hosts' header file from the memories at this "
                     "commit. A file the format check refuses is listed, never linked.",
                before=before,
            ))

        return blobs.bind(draft)

    return land(store.deps, derive, guard_edits=True)
