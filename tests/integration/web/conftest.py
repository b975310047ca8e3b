"""``memhtml serve`` as a person runs it: a real store, a real server process on loopback.

The store is the demo's (``memhtml demo --dir``: folders, entities, links, tasks with
due dates, corrected and archived memories), plus the published site's hostile corpus
(memories whose title, claim, tags and entities are markup, and files the format
refuses: a script, a ``javascript:`` link, an event handler, a stylesheet) committed
with git as a person would, past every door. The server is ``python -m memhtml serve
--port 0``; its start URL is read from what it prints.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memhtml.web.guard import Guard
from tests.integration.publish.conftest import browser, browser_missing, watched
from tests.integration.publish.site_support import hostile_store_files, refused_files
from tests.integration.warm_cli import memhtml

__all__ = ["browser", "browser_missing", "watched"]

_START = re.compile(r"open (http://(127\.\d+\.\d+\.\d+):(\d+)/\?token=(\S+))")


def quiet_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MEMHTML_") or k == "MEMHTML_EMBEDDER"}
    env.update(HOME=str(home), GIT_AUTHOR_NAME="Ada Person", GIT_AUTHOR_EMAIL="ada@example.org",
               GIT_COMMITTER_NAME="Ada Person", GIT_COMMITTER_EMAIL="ada@example.org")
    return env


@dataclass(frozen=True)
class Served:
    """A running ``memhtml serve``: its start URL, origin, token, store and process."""

    start: str
    origin: str
    port: int
    token: str
    store: Path
    env: dict[str, str]
    process: subprocess.Popen[bytes]
    address: str = "127.0.0.1"

    @property
    def guard(self) -> Guard:
        return Guard(self.port, self.token, self.address)

    def url(self, path: str) -> str:
        return self.origin + path

    def cli(self, *tokens: str) -> subprocess.CompletedProcess[str]:
        done = memhtml(*tokens, "--store", str(self.store), env=self.env)
        assert done.returncode == 0, done.stderr
        return done


def plain_demo(root: Path, env: dict[str, str]) -> Path:
    """The demo store, as ``memhtml demo --dir`` makes it."""
    store = root / "store"
    done = memhtml("demo", "--dir", str(store), env=env)
    assert done.returncode == 0, done.stderr
    return store


def demo_store(root: Path, env: dict[str, str]) -> Path:
    """The demo store plus the published site's hostile corpus, committed by git."""
    store = plain_demo(root, env)
    for path, text in {**hostile_store_files(), **refused_files()}.items():
        target = store / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=store, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "hand-made files"], cwd=store, env=env,
                   check=True)
    return store


def start_server(store: Path, env: dict[str, str], log: Path) -> Served:
    err = log.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "memhtml", "serve", "--port", "0", "--store", str(store)],
        env=env, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = _START.search(log.read_text(errors="replace"))
        if found:
            start, address, port, token = (found.group(1), found.group(2),
                                           int(found.group(3)), found.group(4))
            return Served(start, f"http://{address}:{port}", port, token, store, env,
                          process, address)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise AssertionError(f"memhtml serve did not start: {log.read_text(errors='replace')}")


def follow(page: Any, link: Any) -> None:
    """Click ``link`` and wait for the page it opens: a count or text read right after
    a click can see the old page, or the new one still loading."""
    with page.expect_navigation():
        link.click()
    page.wait_for_load_state()


def stop(served: Served) -> None:
    served.process.terminate()
    try:
        served.process.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - a hung server is the failure
        served.process.kill()
        raise


@contextlib.contextmanager
def serving(root: Path, build: Callable[[Path, dict[str, str]], Path]) -> Iterator[Served]:
    """``memhtml serve`` over the store ``build(root, env)`` makes, with a home of its
    own under ``root``; stopped on exit."""
    home = root / "home"
    home.mkdir()
    env = quiet_env(home)
    app = start_server(build(root, env), env, root / "serve.log")
    try:
        yield app
    finally:
        stop(app)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("web"), demo_store) as app:
        yield app
