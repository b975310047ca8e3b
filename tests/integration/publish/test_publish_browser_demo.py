"""The demo store (`memhtml demo`), published, read in headless Chromium.

Screenshots go to each test's tmp directory; their paths are printed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memhtml.store.site import CONTENT_SECURITY_POLICY, TASKS_PATH, VIEW_ROOT, view_path
from memhtml.store.site_model import ENTITY_ROOT, TAG_ROOT
from tests.integration.publish.browser_support import Watched, crawl, shoot
from tests.integration.publish.conftest import browser_missing, serve

_MISSING = browser_missing()
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(_MISSING is not None, reason=_MISSING or ""),
]

SAKURA = "areas/checkout/sakura-auth-timeout-8s.html"
OVERVIEW = "areas/checkout/checkout-api-overview.html"
SUPERSEDED = "archive/2026/areas/checkout/sakura-auth-timeout.html"


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from memhtml.cli.demo import build_demo

    root: Path = tmp_path_factory.mktemp("demo")
    build_demo(root)
    yield from serve(root)


def test_the_root_page_counts_every_memory_in_the_tree(
    origin: str, watched: Watched, tmp_path: Path
) -> None:
    page = watched.page
    page.goto(f"{origin}/index.html")
    assert page.locator("header > p").inner_text() == "/ · 53 memories (1 archived), 3 directories"
    page.get_by_role("link", name="areas/", exact=True).click()
    page.get_by_role("link", name="checkout/", exact=True).click()
    page.wait_for_url(f"{origin}/areas/checkout/index.html")
    shoot(page, tmp_path, "demo-checkout-index")
    page.get_by_role("link", name="Sakura Pay authorization timeout is 8 seconds").click()
    page.wait_for_url(f"{origin}/{view_path(SAKURA)}")
    watched.assert_nothing_ran()


def test_a_memory_page_shows_its_facts_and_its_edges_navigate(
    origin: str, watched: Watched, tmp_path: Path
) -> None:
    page = watched.page
    page.goto(f"{origin}/{view_path(SAKURA)}")
    assert page.locator("h1").inner_text() == "Sakura Pay authorization timeout is 8 seconds"
    about = dict(zip(page.locator("dl.about dt").all_inner_texts(),
                     page.locator("dl.about dd").all_inner_texts(), strict=True))
    assert about["Type"] == "semantic"
    assert about["Status"] == "active"
    assert about["Created"] == "2026-02-17 08:31 UTC"
    assert page.locator("dl.about .chips").nth(0).locator("li").all_inner_texts() == [
        "service:checkout-api", "vendor:sakura-pay", "person:ines-marechal"]
    assert page.locator("dl.about .chips").nth(1).locator("li").all_inner_texts() == [
        "checkout", "payments", "timeouts"]
    assert page.locator("article pre").inner_text().startswith("payments:\n  sakura:")
    shoot(page, tmp_path, "demo-memory-page")

    page.locator("ul.outbound").get_by_role("link", name="What checkout-api does").click()
    page.wait_for_url(f"{origin}/{view_path(OVERVIEW)}")
    assert page.locator("h1").inner_text() == "What checkout-api does"
    page.go_back()
    page.locator("ul.outbound").get_by_role(
        "link", name="Sakura Pay authorization timeout", exact=True).click()
    page.wait_for_url(f"{origin}/{view_path(SUPERSEDED)}")
    assert page.locator("header .badge").inner_text().lower() == "archived"
    # The archived memory points back at its correction through its inbound edge.
    page.locator("ul.inbound").get_by_role(
        "link", name="Sakura Pay authorization timeout is 8 seconds").click()
    page.wait_for_url(f"{origin}/{view_path(SAKURA)}")
    watched.assert_nothing_ran()


def test_every_generated_page_of_the_demo_is_inert(origin: str, watched: Watched) -> None:
    pages = crawl(watched, f"{origin}/index.html",
                  follow=lambda url: url.endswith("/index.html"))
    views = [url for url in pages if f"/{VIEW_ROOT}/" in url]
    labels = [url for url in pages if f"/{TAG_ROOT}/" in url or f"/{ENTITY_ROOT}/" in url]
    assert len(views) == 53
    assert len(labels) == 46 + 31 + 2, "a page per tag and per entity, and an index of each"
    assert len(pages) == 53 + 12 + len(labels) + 1, "and the task list"
    for url, found in pages.items():
        assert found["scripts"] == 0 and found["bad"] == [], (url, found)
        assert found["csp"] == CONTENT_SECURITY_POLICY, url
    watched.assert_nothing_ran()


def test_the_root_leads_to_the_task_list_and_a_tag_page_back_to_its_memories(
    origin: str, watched: Watched, tmp_path: Path
) -> None:
    page = watched.page
    page.goto(f"{origin}/index.html")
    assert page.locator("ol.recent li").count() == 20
    shoot(page, tmp_path, "demo-root")
    page.get_by_role("link", name="the task list").click()
    page.wait_for_url(f"{origin}/{TASKS_PATH}")
    overdue = page.locator("li.task.overdue")
    assert overdue.count() >= 1
    assert overdue.first.locator(".badge").text_content() == "overdue"
    assert page.locator("main > p.explain").inner_text().startswith("Overdue as of 20")
    shoot(page, tmp_path, "demo-tasks")

    page.goto(f"{origin}/{view_path(SAKURA)}")
    page.locator("dl.about .chips").nth(1).get_by_role("link", name="timeouts").click()
    page.wait_for_url(f"{origin}/{TAG_ROOT}/timeouts-*/index.html")
    assert page.locator("h1").inner_text() == "timeouts"
    assert "Sakura Pay authorization timeout is 8 seconds" in page.locator(
        "ul.memories h3").all_inner_texts()
    shoot(page, tmp_path, "demo-tag")
    page.get_by_role("link", name="Sakura Pay authorization timeout is 8 seconds").click()
    page.wait_for_url(f"{origin}/{view_path(SAKURA)}")
    watched.assert_nothing_ran()
