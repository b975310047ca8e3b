"""A hostile store, published through the real door, in headless Chromium.

The store holds hostile-looking memories that pass the check (markup in the title,
claim, tags and entities; a file named like a ``javascript:`` URL) and files the
check refuses (a ``<script>``, a ``javascript:`` href, an event handler, a
stylesheet link), committed past every door. The site is served from a temp
directory on loopback, crawled page by page, and screenshots go to each test's tmp
directory (their paths are printed).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memhtml.store.site import CONTENT_SECURITY_POLICY, view_path
from tests.integration.publish.browser_support import Watched, audit, crawl, shoot
from tests.integration.publish.conftest import browser_missing, serve
from tests.integration.publish.site_support import (
    DEPLOY_CLAIM,
    DEPLOY_PATH,
    HOSTILE_CLAIM,
    HOSTILE_TAG,
    HOSTILE_TITLE,
    REFUSED_SCRIPT,
    SCHEME_PATH,
    TAGGED_PATH,
    Published,
    hostile_store_files,
    publish_store,
    refused_files,
    write_tree,
)

_MISSING = browser_missing()
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(_MISSING is not None, reason=_MISSING or ""),
]


@dataclass(frozen=True)
class Site:
    origin: str
    published: Published

    def url(self, path: str) -> str:
        return f"{self.origin}/{path.replace(':', '%3A').replace('(', '%28').replace(')', '%29')}"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root: Path = tmp_path_factory.mktemp("site")
    published = publish_store({**hostile_store_files(), **refused_files(),
                               "README.md": "A file that is not a memory.\n"})
    assert published.commits == 1, "publish is one commit"
    write_tree(root, published.tree)
    for origin in serve(root):
        yield Site(origin, published)


def test_root_index_renders_with_its_headings_and_links(site: Site, watched: Watched) -> None:
    page = watched.page
    page.goto(site.url("index.html"))
    assert page.title() == "Memory store · memhtml"
    assert page.locator("h1").inner_text() == "Memory store"
    assert page.locator("header > p").inner_text() == (
        "/ · 9 memories (1 archived), 1 here, 3 directories, 1 other file")
    # text_content: the stylesheet upper-cases h2, inner_text would report that.
    assert page.locator("h2").all_text_contents() == [
        "Directories", "Memories", "Recently updated", "Tasks", "Tags", "Entities", "Other files"]
    assert page.locator("ul.directories a").all_inner_texts() == [
        "archive/", "areas/", "resources/"]
    assert page.locator("ul.memories h3 a").all_inner_texts() == ["A note at the root"]
    assert page.locator("ul.files li").all_inner_texts() == ["README.md"]
    assert page.locator("ul.files a").count() == 0
    # The stylesheet loaded through the page's own policy and applies.
    assert page.evaluate("getComputedStyle(document.body).maxWidth") == "800px"
    assert all(url.startswith(site.origin + "/") for url in watched.requests), watched.requests
    watched.assert_nothing_ran()


def test_clicking_directory_links_navigates_between_indexes(site: Site, watched: Watched) -> None:
    page = watched.page
    page.goto(site.url("index.html"))
    page.get_by_role("link", name="areas/", exact=True).click()
    page.wait_for_url(site.url("areas/index.html"))
    assert page.locator("h1").inner_text() == "areas"
    assert page.locator("ul.directories a").all_inner_texts() == [
        "deploy/", "inbox/", "security/"]
    page.get_by_role("link", name="deploy/", exact=True).click()
    page.wait_for_url(site.url("areas/deploy/index.html"))
    assert page.locator("h1").inner_text() == "deploy"
    page.locator("nav").get_by_role("link", name="store", exact=True).click()
    page.wait_for_url(site.url("index.html"))
    assert page.locator("h1").inner_text() == "Memory store"


def test_refused_files_are_listed_unlinked_with_their_reasons(
    site: Site, watched: Watched, tmp_path: Path
) -> None:
    page = watched.page
    page.goto(site.url("areas/security/index.html"))
    skipped = page.locator("ul.skipped li")
    assert [name.rsplit("/", 1)[1] for name in sorted(refused_files())] == (
        skipped.locator("code").all_inner_texts())
    reasons = dict(zip(skipped.locator("code").all_inner_texts(),
                       skipped.locator(".reason").all_inner_texts(), strict=True))
    assert "<script>" in reasons[REFUSED_SCRIPT.rsplit("/", 1)[1]]
    assert page.locator("ul.skipped a").count() == 0
    assert page.locator("a", has_text="refused").count() == 0
    shoot(page, tmp_path, "security-index-with-skipped-files")
    watched.assert_nothing_ran()


def test_a_memory_opens_its_readable_page_and_from_there_its_file(
    site: Site, watched: Watched, tmp_path: Path
) -> None:
    page = watched.page
    page.goto(site.url("areas/deploy/index.html"))
    page.get_by_role("link", name="Deploy step is safe after the canary").click()
    page.wait_for_url(site.url(view_path(DEPLOY_PATH)))
    assert page.title() == "Deploy step is safe after the canary · memhtml"
    assert page.locator("h1").inner_text() == "Deploy step is safe after the canary"
    assert page.locator("article mark").inner_text() == DEPLOY_CLAIM
    about = dict(zip(page.locator("dl.about dt").all_inner_texts(),
                     page.locator("dl.about dd").all_inner_texts(), strict=True))
    assert about["Type"] == "semantic" and about["Status"] == "active"
    assert about["Created"] == "2026-07-28 14:03 UTC"
    assert page.evaluate("getComputedStyle(document.querySelector('dl.about')).display") == "grid"
    shoot(page, tmp_path, "memory-page")

    page.get_by_role("link", name="The memory file as committed").click()
    page.wait_for_url(site.url(DEPLOY_PATH))
    mark = page.locator("article mark")
    assert mark.is_visible() and mark.inner_text() == DEPLOY_CLAIM
    assert page.title() == "Deploy step is safe after the canary"
    watched.assert_nothing_ran()


def test_edges_are_links_that_open_the_targets_page(
    site: Site, watched: Watched, tmp_path: Path
) -> None:
    page = watched.page
    page.goto(site.url(view_path(TAGGED_PATH)))
    outbound = page.locator("ul.outbound li")
    assert outbound.locator(".rel").all_inner_texts() == [
        "relates to", "relates to", "supports", "leads to"]
    # Unlinked: the edge to a refused file and the dangling one.
    assert [outbound.nth(i).locator("a").count() for i in range(4)] == [1, 0, 1, 0]
    assert page.locator(".chips li").all_inner_texts()[2] == HOSTILE_TAG
    shoot(page, tmp_path, "memory-page-with-edges")

    outbound.nth(0).get_by_role("link").click()
    page.wait_for_url(site.url(view_path(DEPLOY_PATH)))
    assert page.locator("h1").inner_text() == "Deploy step is safe after the canary"
    page.locator("ul.inbound").get_by_role("link", name="Security runbook notes").click()
    page.wait_for_url(site.url(view_path(TAGGED_PATH)))
    page.locator("ul.outbound").get_by_role("link", name="A file named like a scheme").click()
    page.wait_for_url(site.url(view_path(SCHEME_PATH)))
    assert page.locator("h1").inner_text() == "A file named like a scheme"
    # A link inside the memory's own text goes to the target's page too.
    page.goto(site.url(view_path(TAGGED_PATH)))
    page.locator("article").get_by_role("link", name="the canary gate").click()
    page.wait_for_url(site.url(view_path(DEPLOY_PATH)))
    watched.assert_nothing_ran()


def test_a_hostile_tag_chip_opens_its_tag_page_as_text(
    site: Site, watched: Watched, tmp_path: Path
) -> None:
    page = watched.page
    page.goto(site.url(view_path(TAGGED_PATH)))
    page.locator("dl.about .chips").get_by_role("link", name=HOSTILE_TAG).click()
    page.wait_for_url("**/memhtml-site/tag/*/index.html")
    assert page.locator("h1").inner_text() == HOSTILE_TAG
    assert page.locator("ul.memories h3").all_inner_texts() == ["Security runbook notes"]
    shoot(page, tmp_path, "hostile-tag-page")
    page.locator("nav").get_by_role("link", name="tags", exact=True).click()
    page.wait_for_url(site.url("memhtml-site/tag/index.html"))
    assert page.locator("ul.labels a").all_inner_texts() == [HOSTILE_TAG, "security"]
    watched.assert_nothing_ran()


def test_no_page_runs_script_or_carries_a_scriptable_url(
    site: Site, watched: Watched, tmp_path: Path
) -> None:
    page = watched.page
    pages = crawl(watched, site.url("index.html"), follow=lambda url: True)
    generated = {url for url in pages if url.endswith("/index.html")}
    memory_files = set(pages) - generated
    tree = site.published.tree
    assert len(generated) == sum(1 for path in tree if path.endswith("index.html"))
    assert {site.url(path) for path in hostile_store_files()} == memory_files
    assert not any(site.url(path) in pages for path in refused_files())
    for url, found in pages.items():
        assert found["scripts"] == 0, url
        assert found["bad"] == [], (url, found["bad"])
        # The memory files cannot carry a policy (the closed head); _headers does.
        assert found["csp"] == (CONTENT_SECURITY_POLICY if url in generated else None), url

    for path in ("areas/security/index.html", view_path("areas/security/hostile-looking.html"),
                 "areas/security/hostile-looking.html"):
        page.goto(site.url(path))
        for target in page.locator("h1, h3 a, .claim, article mark, .chips li").all():
            target.hover()
    page.goto(site.url(view_path("areas/security/hostile-looking.html")))
    assert page.locator("h1").inner_text() == HOSTILE_TITLE
    assert page.locator("article mark").inner_text() == HOSTILE_CLAIM
    shoot(page, tmp_path, "hostile-memory-page")
    watched.assert_nothing_ran()


def test_the_audit_sees_what_a_refused_file_would_do(site: Site, watched: Watched) -> None:
    # The checks above pass only because nothing is there to find: opened directly
    # (no page links it), a refused file runs its script and the audit reports it.
    page = watched.page
    page.goto(site.url(REFUSED_SCRIPT))
    found = audit(page)
    assert found["scripts"] == 1 and found["csp"] is None
    assert page.evaluate("window.__pwned") == 3
    assert watched.dialogs == ["alert: 3"]
    page.goto(site.url("areas/security/refused-javascript-href.html"))
    assert set(audit(page)["bad"]) == {"A href=javascript:window.__pwned=4"}
    page.goto(site.url("areas/security/refused-handler.html"))
    assert audit(page)["bad"] == ["P onmouseover"]
