"""What the browser tests share: a watched page, a DOM audit, a crawl and screenshots."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag

if TYPE_CHECKING:
    from playwright.sync_api import (  # type: ignore[import-not-found, unused-ignore]
        Browser,
        ConsoleMessage,
        Dialog,
        Page,
        Request,
    )


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

    def assert_nothing_ran(self) -> None:
        assert self.dialogs == [], self.dialogs
        assert self.errors == [], self.errors
        assert self.quiet_console() == [], self.console
        assert self.page.evaluate("typeof window.__pwned") == "undefined"


def watch(browser: Browser) -> Iterator[Watched]:
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


AUDIT = """() => {
  const bad = [];
  for (const el of document.querySelectorAll('*')) {
    for (const attr of el.attributes) {
      if (attr.name.toLowerCase().startsWith('on')) bad.push(`${el.tagName} ${attr.name}`);
      if (/^[\\s\\u0000-\\u001f]*(javascript|vbscript|data):/i.test(attr.value))
        bad.push(`${el.tagName} ${attr.name}=${attr.value}`);
    }
  }
  for (const el of document.querySelectorAll('[href], [src], [action], [formaction]')) {
    for (const name of ['href', 'src', 'action', 'formaction']) {
      const value = el.getAttribute(name);
      if (value === null) continue;
      const scheme = new URL(value, document.baseURI).protocol;
      if (!['http:', 'https:', 'mailto:'].includes(scheme))
        bad.push(`${el.tagName} ${name}=${value}`);
    }
  }
  const meta = document.querySelector('meta[http-equiv="Content-Security-Policy" i]');
  return {
    scripts: document.querySelectorAll('script').length,
    bad,
    csp: meta ? meta.getAttribute('content') : null,
    // An SVG <a>'s href is an animated string, not the URL: read the attribute.
    links: [...document.querySelectorAll('a[href]')].map(
      a => new URL(a.getAttribute('href'), document.baseURI).href),
  };
}"""
"""Every element and attribute of the loaded DOM (what the browser built, not the
bytes): scripts, event-handler attributes, scriptable URLs, the policy, the links."""


def audit(page: Page) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate(AUDIT)
    return result


def crawl(watched: Watched, start: str, *, follow: Any) -> dict[str, dict[str, Any]]:
    """Open ``start`` and every same-origin page reachable by links for which
    ``follow(url)`` is true; the audit of each page, by URL."""
    origin = start.split("/", 3)[:3]
    prefix = "/".join(origin) + "/"
    seen: dict[str, dict[str, Any]] = {}
    queue = [start]
    while queue:
        url = queue.pop(0)
        if url in seen:
            continue
        response = watched.page.goto(url)
        assert response is not None and response.ok, url
        result = audit(watched.page)
        seen[url] = result
        for link in result["links"]:
            target, _ = urldefrag(link)
            if target.startswith(prefix) and target not in seen and follow(target):
                queue.append(target)
    return seen


def shoot(page: Page, directory: Path, name: str) -> Path:
    """A full-page screenshot in the test's tmp directory; its path goes to the output."""
    path = directory / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path
