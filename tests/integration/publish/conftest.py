"""The ``browser`` marker, a loopback file server, and headless Chromium through Playwright.

The browser is Debian's ``/usr/bin/chromium`` driven by the Playwright wheel's own
driver; no browser is downloaded. When either is missing the browser tests skip
with the reason, and everything else in this directory still runs.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.integration.publish.browser_support import Watched, watch

if TYPE_CHECKING:
    # Ignored only where playwright is not installed, so the type check still passes there.
    from playwright.sync_api import Browser  # type: ignore[import-not-found, unused-ignore]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed (pip install playwright; no `playwright install`)"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "browser: drives Debian's headless Chromium through Playwright"
    )


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve(root: Path) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1 from a thread; yields the origin, stops on exit."""
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium per module. Not per session: playwright's sync API keeps an event
    loop running on the worker while it is open, and every later ``asyncio.run`` on
    that worker (the MCP client tests) would fail."""
    reason = browser_missing()
    if reason is not None:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def watched(browser: Browser) -> Iterator[Watched]:
    """A fresh browser context and page, with its dialogs, console and errors kept."""
    yield from watch(browser)
