"""The published site in headless Chromium, served from a temp directory on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.integration.publish.conftest import browser_missing, serve
from tests.integration.publish.site_support import (
    DEPLOY_CLAIM,
    HOSTILE_CLAIM,
    HOSTILE_TITLE,
    SCHEME_PATH,
    sample_files,
    write_site,
)

if TYPE_CHECKING:
    from playwright.sync_api import (  # type: ignore[import-not-found, unused-ignore]
        Browser,
        ConsoleMessage,
        Dialog,
        Page,
        Request,
    )

_MISSING = browser_missing()
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(_MISSING is not None, reason=_MISSING or ""),
]


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root: Path = tmp_path_factory.mktemp("site")
    write_site(root, sample_files(), {"README.md": b"A file that is not a memory.\n"})
    yield from serve(root)


@dataclass
class Watched:
    """A page plus everything it did that a test may want to refuse."""

    page: Page
    dialogs: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def quiet_console(self) -> list[str]:
        """Console lines, less the 404 for the favicon Chromium asks every origin for."""
        return [line for line in self.console if not line.endswith("/favicon.ico")]


@pytest.fixture
def watched(browser: Browser) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    page = context.new_page()
    seen = Watched(page)

    def on_dialog(dialog: Dialog) -> None:
        seen.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def on_console(message: ConsoleMessage) -> None:
        seen.console.append(f"{message.type}: {message.text} at {message.location['url']}")

    def on_request(request: Request) -> None:
        seen.requests.append(request.url)

    page.on("dialog", on_dialog)
    page.on("console", on_console)
    page.on("pageerror", lambda error: seen.errors.append(str(error)))
    context.on("request", on_request)
    page.set_default_timeout(10_000)
    try:
        yield seen
    finally:
        context.close()


def test_root_index_renders_with_its_headings_and_links(origin: str, watched: Watched) -> None:
    page = watched.page
    page.goto(origin + "/index.html")
    assert page.title() == "Memory store · memhtml"
    assert page.locator("h1").inner_text() == "Memory store"
    # text_content: the stylesheet upper-cases h2, inner_text would report that.
    assert page.locator("h2").all_text_contents() == ["Directories", "Memories", "Other files"]
    assert page.locator("ul.directories a").all_inner_texts() == [
        "archive/", "areas/", "resources/"]
    assert page.locator("ul.memories h3 a").all_inner_texts() == ["A note at the root"]
    assert page.locator("ul.files a").all_inner_texts() == ["README.md"]
    # The stylesheet loaded through the page's own policy and applies.
    assert page.evaluate("getComputedStyle(document.body).maxWidth") == "800px"
    assert all(url.startswith(origin + "/") for url in watched.requests), watched.requests
    assert watched.errors == [] and watched.dialogs == []
    assert watched.quiet_console() == [], watched.console


def test_clicking_directory_links_navigates_between_indexes(origin: str, watched: Watched) -> None:
    page = watched.page
    page.goto(origin + "/index.html")
    page.get_by_role("link", name="areas/", exact=True).click()
    page.wait_for_url(origin + "/areas/index.html")
    assert page.locator("h1").inner_text() == "areas"
    assert page.locator("ul.directories a").all_inner_texts() == [
        "deploy/", "inbox/", "security/"]
    page.get_by_role("link", name="deploy/", exact=True).click()
    page.wait_for_url(origin + "/areas/deploy/index.html")
    assert page.locator("h1").inner_text() == "deploy"
    page.locator("nav").get_by_role("link", name="store", exact=True).click()
    page.wait_for_url(origin + "/index.html")
    assert page.locator("h1").inner_text() == "Memory store"


def test_clicking_a_memory_opens_the_file_with_its_claim_marked(
    origin: str, watched: Watched
) -> None:
    page = watched.page
    page.goto(origin + "/areas/deploy/index.html")
    page.get_by_role("link", name="Deploy step is safe after the canary").click()
    page.wait_for_url(origin + "/areas/deploy/canary-gate.html")
    mark = page.locator("article mark")
    assert mark.count() == 1
    assert mark.is_visible()
    assert mark.inner_text() == DEPLOY_CLAIM
    assert page.title() == "Deploy step is safe after the canary"


def test_a_hostile_looking_memory_runs_no_script(origin: str, watched: Watched) -> None:
    page = watched.page
    page.goto(origin + "/areas/security/index.html")
    entry = page.locator("ul.memories li").first
    assert entry.locator("h3").inner_text() == HOSTILE_TITLE
    assert entry.locator("p.claim").inner_text() == HOSTILE_CLAIM
    for target in (entry.locator("h3 a"), entry.locator("p.claim")):
        target.hover()
    assert page.evaluate("window.__pwned") is None

    entry.locator("h3 a").click()
    page.wait_for_url(origin + "/areas/security/hostile-looking.html")
    mark = page.locator("article mark")
    assert mark.is_visible()
    mark.hover()
    assert mark.inner_text() == HOSTILE_CLAIM
    assert page.title() == HOSTILE_TITLE
    assert page.locator("script, img, [onmouseover], [onerror]").count() == 0
    assert page.evaluate("window.__pwned") is None

    # A file whose name starts like a javascript: URL opens as a file.
    page.go_back()
    page.wait_for_url(origin + "/areas/security/index.html")
    page.get_by_role("link", name="A file named like a scheme").click()
    page.wait_for_url(origin + "/areas/security/javascript%3Aalert%286%29.html")
    assert page.locator("article mark").is_visible()
    assert SCHEME_PATH.endswith(page.url.rsplit("/", 1)[1].replace("%3A", ":")
                                .replace("%28", "(").replace("%29", ")"))
    assert page.evaluate("window.__pwned") is None

    assert watched.dialogs == []
    assert watched.errors == []
    assert watched.quiet_console() == [], watched.console
