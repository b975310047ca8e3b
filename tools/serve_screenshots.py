"""The README's pictures of ``memhtml serve``: the demo store's home page and a search.

    python -m tools.serve_screenshots            # writes docs/img/serve-*.png

Builds the demo store in a temporary directory (``memhtml demo --dir``), starts
``memhtml serve --port 0`` on it, and opens the start URL in Debian's headless
Chromium through Playwright (as the browser tests do), then saves two screenshots.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img"
CHROMIUM = "/usr/bin/chromium"
_START = re.compile(r"open (http://127\.\d+\.\d+\.\d+:\d+/\?token=\S+)")


def main() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "MEMHTML_EMBEDDER": "none"}
    with tempfile.TemporaryDirectory(prefix="memhtml-screens-") as work:
        store = Path(work) / "store"
        subprocess.run([sys.executable, "-m", "memhtml", "demo", "--dir", str(store)],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        log = Path(work) / "serve.log"
        with log.open("wb") as err:
            server = subprocess.Popen([sys.executable, "-m", "memhtml", "serve", "--port", "0",
                                       "--store", str(store)], env=env, stderr=err,
                                      stdout=subprocess.DEVNULL)
        try:
            found = None
            while found is None and server.poll() is None:
                found = _START.search(log.read_text(errors="replace"))
                time.sleep(0.05)
            if found is None:
                raise SystemExit(log.read_text(errors="replace"))
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                     args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1100, "height": 800})
                page.goto(found.group(1))
                OUT.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(OUT / "serve-home.png"))
                page.goto(page.url.rstrip("/") + "/search")
                page.locator("#q").press_sequentially("deploy freeze", delay=20)
                page.locator("#results .hit").first.wait_for()
                page.screenshot(path=str(OUT / "serve-search.png"))
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"wrote {OUT / 'serve-home.png'} and {OUT / 'serve-search.png'}")


if __name__ == "__main__":
    main()
