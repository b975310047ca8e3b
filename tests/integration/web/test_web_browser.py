"""``memhtml serve`` in headless Chromium: browse, read, search as you type, tasks,
activity, the live notice, and the hostile corpus rendered inert.

The server is a real process over the demo store plus the published site's hostile
corpus (``conftest``); the browser opens the start URL it printed, as a person would.
Screenshots go to each test's tmp directory (their paths are printed).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from tests.integration.publish.browser_support import Watched, audit, crawl, shoot
from tests.integration.publish.site_support import (
    HOSTILE_PATH,
    HOSTILE_TITLE,
    REFUSED_SCRIPT,
    SCHEME_PATH,
    TAGGED_PATH,
)
from tests.integration.web.conftest import Served, browser_missing, follow

if TYPE_CHECKING:
    from playwright.sync_api import Page  # type: ignore[import-not-found, unused-ignore]

_MISSING = browser_missing()
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(_MISSING is not None, reason=_MISSING or ""),
]

MEMORY = "areas/checkout/sakura-auth-timeout-8s.html"


def signed_in(watched: Watched, served: Served) -> Page:
    page = watched.page
    response = page.goto(served.start)
    assert response is not None and response.ok
    assert page.url == served.url("/"), "the token is dropped from the address"
    return page


def memory_url(served: Served, path: str) -> str:
    return served.url("/memory/" + quote(path, safe="/"))


def test_browse_folders_and_read_a_memory(watched: Watched, served: Served,
                                          tmp_path: Path) -> None:
    page = signed_in(watched, served)
    assert page.locator("h1").inner_text() == "Memory store"
    assert re.search(r"\d+ memories, \d+ archived", page.locator("main p.explain").first
                     .inner_text())
    shoot(page, tmp_path, "home")
    follow(page, page.get_by_role("link", name="Browse"))
    follow(page, page.locator(".directories a", has_text="areas").first)
    assert page.locator("h1").inner_text() == "areas"
    counts = page.locator(".directories li .count").all_inner_texts()
    assert counts and all(c.isdigit() and int(c) > 0 for c in counts)
    follow(page, page.locator(".directories a", has_text="checkout/"))
    follow(page, page.locator(".memories a", has_text="Sakura Pay authorization timeout"))
    assert page.url == memory_url(served, MEMORY)
    assert "Sakura Pay authorization" in page.locator("article mark").first.inner_text()
    about = page.locator("dl.about").inner_text()
    assert "Created" in about and MEMORY in about
    entity = page.locator("dl.about .chips a").first
    name = entity.inner_text()
    assert page.locator("#history ~ ol.commits li, section[aria-labelledby=history] "
                        "ol.commits li").count() >= 1
    tiers = page.locator("dl.tiers dt").all_inner_texts()
    assert tiers == ["gist", "summary", "details"]
    shoot(page, tmp_path, "memory")
    follow(page, entity)
    assert page.locator("h1").inner_text() == name
    assert page.locator(".memories li").count() >= 1
    watched.assert_nothing_ran()


def test_search_as_you_type_says_which_arm_found_each_hit(watched: Watched, served: Served,
                                                         tmp_path: Path) -> None:
    page = signed_in(watched, served)
    page.goto(served.url("/search"))
    page.locator("#q").press_sequentially("deploy freeze", delay=20)
    # Each keystroke may show its own results first ("deploy f" found a backfill
    # note on a loaded machine): wait for the whole query's.
    page.wait_for_function(
        "() => (document.querySelector('#results')?.textContent ?? '')"
        ".includes('Black Friday deploy freeze')")
    first = page.locator("#results .hit").first
    assert "lexical #" in first.locator(".why").inner_text()
    assert "q=deploy+freeze" in page.url
    shoot(page, tmp_path, "search")
    page.locator("select[name=type]").select_option("task")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#results .hit .facts')]"
        ".every(p => p.textContent.startsWith('task'))")
    # The page the address names renders the same search without script.
    page.goto(served.url("/search?q=deploy+freeze"))
    assert "Black Friday deploy freeze" in page.locator("#results").inner_text()
    watched.assert_nothing_ran()


def test_tasks_board_puts_overdue_first(watched: Watched, served: Served,
                                        tmp_path: Path) -> None:
    page = signed_in(watched, served)
    follow(page, page.get_by_role("link", name="Tasks"))
    columns = page.locator(".board .column")
    assert columns.count() >= 3
    for i in range(columns.count()):
        flags = [("overdue" in (c or "")) for c in columns.nth(i).locator("li.task")
                 .evaluate_all("items => items.map(i => i.className)")]
        assert flags == sorted(flags, reverse=True), flags
    shoot(page, tmp_path, "tasks")
    watched.assert_nothing_ran()


def test_activity_names_who_wrote_and_through_which_door(watched: Watched,
                                                        served: Served) -> None:
    page = signed_in(watched, served)
    follow(page, page.get_by_role("link", name="Activity"))
    entries = page.locator(".timeline > li")
    assert entries.count() >= 2
    text = page.locator(".timeline").inner_text()
    assert "Ada Person" in text and "hand-made files" in text
    assert page.locator(".timeline .badge").count() >= 1, "memhtml's commits name their door"
    watched.assert_nothing_ran()


def test_no_page_says_the_store_moved_when_it_did_not(watched: Watched,
                                                      served: Served) -> None:
    page = signed_in(watched, served)
    for path in ("/", "/browse/", "/browse/areas/", "/memory/" + MEMORY, "/search",
                 "/search?q=deploy", "/tasks", "/activity", "/overview",
                 "/entity/service:checkout-api", "/memory/areas/none.html"):
        page.goto(served.url(path))
        page.wait_for_selector("body[data-live-tip]", state="attached")
        assert page.locator("#live").is_hidden(), path
    assert len(watched.console) == 1 and "404" in watched.console[0], watched.console
    watched.console.clear()
    watched.assert_nothing_ran()


def test_a_commit_from_the_cli_shows_the_live_notice(watched: Watched, served: Served) -> None:
    page = signed_in(watched, served)
    page.wait_for_selector("body[data-live-tip]", state="attached")
    assert page.locator("#live").is_hidden()
    served.cli("write", "--title", "Seen live", "--claim", "The app hears of this commit.",
               "--type", "semantic")
    page.locator("#live").wait_for(state="visible", timeout=15_000)
    follow(page, page.locator("#live a"))
    assert "Seen live" in page.locator("main").inner_text()
    watched.assert_nothing_ran()


def test_many_open_tabs_each_load_and_hear_of_a_commit(watched: Watched,
                                                      served: Served) -> None:
    """Chromium opens at most six connections to one host over HTTP/1.1, so a live
    stream held by each tab left the seventh tab's pages waiting forever. Eight tabs
    of one browser each load, and each hears of a commit."""
    signed_in(watched, served)
    context = watched.page.context
    tabs = [watched.page]
    for _ in range(7):
        tab = context.new_page()
        tab.goto(served.url("/tasks"), timeout=10_000)
        tab.wait_for_selector("body[data-live-tip]", state="attached", timeout=10_000)
        tabs.append(tab)
    served.cli("write", "--title", "Seen in every tab", "--claim", "Eight tabs hear of it.",
               "--type", "semantic")
    for tab in tabs:
        tab.locator("#live").wait_for(state="visible", timeout=15_000)
    for tab in tabs[1:]:
        tab.close()
    watched.assert_nothing_ran()


def test_the_hostile_corpus_is_inert_in_the_app(watched: Watched, served: Served,
                                               tmp_path: Path) -> None:
    page = signed_in(watched, served)
    page.goto(memory_url(served, HOSTILE_PATH))
    assert page.locator("h1").inner_text() == HOSTILE_TITLE, "markup shown as text"
    shoot(page, tmp_path, "hostile")
    seen = crawl(watched, memory_url(served, TAGGED_PATH), follow=lambda url: any(
        part in url for part in ("/memory/areas/security/", "/tag/", "/entity/")))
    assert len(seen) >= 4, sorted(seen)
    for url, result in seen.items():
        assert result["bad"] == [], (url, result["bad"])
        assert result["scripts"] == 1, url  # the app's own script, from its origin
    missing = page.goto(memory_url(served, REFUSED_SCRIPT))
    assert missing is not None and missing.status == 404
    # The browser logs the 404 it was just sent to; nothing else may be logged.
    assert len(watched.console) == 1 and "404" in watched.console[0], watched.console
    watched.console.clear()
    page.goto(memory_url(served, SCHEME_PATH))
    assert audit(page)["bad"] == []
    page.goto(served.url("/search?q=" + quote("Hostile script alert")))
    assert audit(page)["bad"] == []
    watched.assert_nothing_ran()


def commits(served: Served) -> int:
    import subprocess

    return int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=served.store,
                              check=True, capture_output=True, text=True).stdout)


def submit(page: Page, heading: str, fields: dict[str, str] | None = None,
           selects: dict[str, str] | None = None) -> None:
    form = page.locator("form.edit", has=page.locator(
        "h3", has_text=re.compile(f"^{re.escape(heading)}$")))
    for name, value in (fields or {}).items():
        form.locator(f"[name={name}]").fill(value)
    for name, value in (selects or {}).items():
        form.locator(f"select[name={name}]").select_option(value)
    with page.expect_navigation():
        form.locator("button[type=submit]").click()


def test_every_change_is_one_commit_through_the_doors(watched: Watched, served: Served,
                                                       tmp_path: Path) -> None:
    page = signed_in(watched, served)
    page.goto(served.url("/browse/areas/inbox/"))
    before = commits(served)
    submit(page, "New memory", {"title": "Standup moved", "claim": "The standup is at 09:30 now.",
                      "entity": "team:checkout"})
    assert commits(served) == before + 1
    assert page.locator("h1").inner_text() == "Standup moved"
    path = page.url.split("/memory/", 1)[1]
    assert "team:checkout" in page.locator("dl.about").inner_text()

    submit(page, "Label", {"entity": "person:ines-marechal"})
    assert "person:ines-marechal" in page.locator("dl.about").inner_text()
    submit(page, "Unlabel", selects={"entity": "team:checkout"})
    assert "team:checkout" not in page.locator("dl.about").inner_text()
    submit(page, "Link", {"target": MEMORY}, {"rel": "relates_to"})
    assert MEMORY in page.locator("ul.edges.outbound").inner_text()
    with page.expect_navigation():
        page.locator("ul.edges.outbound form button").first.click()
    assert page.locator("ul.edges.outbound").count() == 0
    assert commits(served) == before + 5

    # A refusal is shown in the form and commits nothing.
    form = page.locator("form.edit", has=page.locator("h3", has_text=re.compile("^Link$")))
    form.locator("[name=target]").fill("areas/nowhere/none.html")
    form.locator("button[type=submit]").click()
    error = form.locator(".error")
    error.wait_for(state="visible")
    assert error.inner_text().startswith("ERR_")
    assert commits(served) == before + 5
    # The browser logs the refusal's 422; nothing else may be logged.
    assert all("status of 422" in line for line in watched.console), watched.console
    watched.console.clear()
    shoot(page, tmp_path, "refused-link")

    submit(page, "Correct", {"claim": "The standup is at 09:45 now."})
    assert "09:45" in page.locator("article mark").first.inner_text()
    corrected = page.url.split("/memory/", 1)[1]
    submit(page, "Move", {"to": "areas/checkout/"})
    assert page.url.split("/memory/", 1)[1].startswith("areas/checkout/")
    submit(page, "Archive")
    assert "archived" in page.locator("p.facts").inner_text()
    with page.expect_navigation():
        page.locator("form[data-tool=memory_restore] button").click()
    assert "archived" not in page.locator("p.facts").inner_text()
    assert commits(served) == before + 9
    assert path != corrected
    watched.assert_nothing_ran()
