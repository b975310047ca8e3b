"""The sleep review in the browser: a real night on the demo store, read, refused, merged.

The store is the demo's; ``memhtml sleep run`` (no model) makes a run on its branch.
The page lists the run, shows each phase's counts and each changed file with the
decisions behind it, and a file before and after with its diff. That night archives
a third of the demo's memories with nothing standing for them, so its merge is
refused: the refusal is shown with its reason and main does not move. The reviewer
rejects those archives from the page, and the merge then moves main. A night started
from the page is aborted from it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.integration.publish.browser_support import Watched, shoot
from tests.integration.warm_cli import memhtml
from tests.integration.web.conftest import (
    Served,
    browser_missing,
    follow,
    plain_demo,
    serving,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page  # type: ignore[import-not-found, unused-ignore]

_MISSING = browser_missing()
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(_MISSING is not None, reason=_MISSING or ""),
]


def cli(store: Path, env: dict[str, str], *tokens: str) -> subprocess.CompletedProcess[str]:
    done = memhtml(*tokens, "--store", str(store), env=env)
    assert done.returncode == 0, (tokens, done.stdout, done.stderr)
    return done


def main_tip(store: Path) -> str:
    return subprocess.run(["git", "rev-parse", "main"], cwd=store, check=True,
                          capture_output=True, text=True).stdout.strip()


def demo_after_a_night(root: Path, env: dict[str, str]) -> Path:
    store = plain_demo(root, env)
    cli(store, env, "sleep", "run")
    return store


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("sleep-web"), demo_after_a_night) as app:
        yield app


def signed_in(watched: Watched, served: Served) -> Page:
    page = watched.page
    response = page.goto(served.start)
    assert response is not None and response.ok
    return page


def test_the_review_refuses_a_conflict_then_a_clean_night_merges(
        watched: Watched, night: Served, tmp_path: Path) -> None:
    page = signed_in(watched, night)
    follow(page, page.get_by_role("link", name="Sleep"))
    follow(page, page.locator("table.runs a").first)
    assert page.locator("h1").inner_text().startswith("Run ")
    assert page.locator("table.phases th", has_text="retention-triage").count() == 1
    changes = page.locator("ul.changes > li")
    assert changes.count() >= 1
    assert page.locator("ul.decisions li").count() >= 1, "every change says why"
    shoot(page, tmp_path, "run")

    # One file, before and after, with its diff.
    first = changes.first.locator("a").first
    changed_path = first.inner_text()
    follow(page, first)
    assert changed_path in page.locator("h1").inner_text()
    assert page.locator(".sides .side").count() == 2
    assert page.locator("pre.diff span").count() >= 1
    assert page.locator("ul.decisions li").count() >= 1
    shoot(page, tmp_path, "file")
    with page.expect_navigation():
        page.go_back()

    # The demo's first night archives a third of its memories with nothing standing
    # for them: the merge is refused with its reason, and main does not move.
    before = main_tip(night.store)
    form = page.locator("form[data-sleep=merge]")
    form.locator("button").click()
    error = form.locator(".error")
    error.wait_for(state="visible")
    assert error.inner_text().startswith("ERR_MERGE_OVER_ARCHIVED"), error.inner_text()
    assert "sleep_archive_share" in error.inner_text()
    assert main_tip(night.store) == before, "a refused merge moves nothing"
    shoot(page, tmp_path, "refused")
    # The browser logs the refusal's 422; nothing else.
    assert all("status of 422" in line for line in watched.quiet_console()), watched.console
    watched.console.clear()

    # Reject every archive of the night from the page: one commit on the run's branch
    # puts them back, the page lists them as rejected, and the merge then passes and
    # moves main, with those memories where they were.
    archived = page.locator("ul.changes").filter(has=page.locator("code", has_text="archive/"))
    ticks = archived.locator("input[type=checkbox][name=paths]")
    kept = [ticks.nth(i).get_attribute("value") for i in range(ticks.count())]
    assert kept, "the night archived something"
    for i in range(ticks.count()):
        ticks.nth(i).check()
    run_tip = subprocess.run(["git", "rev-parse", "sleep/" + page.url.rsplit("/", 1)[1]],
                             cwd=night.store, check=True, capture_output=True,
                             text=True).stdout.strip()
    with page.expect_navigation():
        page.locator("form[data-sleep=reject] > p > button").click()
    assert page.locator("ul.rejected li").count() == len(kept)
    shoot(page, tmp_path, "rejected")
    assert main_tip(night.store) == before, "a rejection moves only the run's branch"
    with page.expect_navigation():
        page.locator("form[data-sleep=merge] button").click()
    assert main_tip(night.store) != before, "the merge moved main"
    assert page.locator("main p.explain").first.inner_text().startswith("merged")
    for path in kept:
        assert path is not None and (night.store / path).is_file(), path
    assert subprocess.run(["git", "merge-base", "--is-ancestor", run_tip, "main"],
                          cwd=night.store, check=False).returncode == 0

    watched.assert_nothing_ran()


@pytest.fixture(scope="module")
def quiet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The demo store with no run yet: its own, so this test does not depend on
    where the other one left its store (the two may run on different workers)."""
    with serving(tmp_path_factory.mktemp("sleep-web-start"), plain_demo) as app:
        yield app


def test_plan_and_start_a_run_from_the_page(watched: Watched, quiet: Served,
                                            tmp_path: Path) -> None:
    """No run is open, so the page offers a start; the plan answers from counts, the
    start runs ``memhtml sleep run`` and the page follows it to the new run in the
    list; that run is aborted from its page."""
    night = quiet
    page = signed_in(watched, night)
    follow(page, page.get_by_role("link", name="Sleep"))
    before = page.locator("table.runs tbody tr").count()
    plan = page.locator("#sleep-plan")
    plan.locator("button").click()
    answer = plan.locator(".answer")
    answer.wait_for(state="visible")
    assert answer.inner_text().split(" · ")[0] in ("would-change", "no-signal", "unknown")
    with page.expect_navigation(timeout=120_000):
        page.locator("#sleep-start button").click()
    assert page.locator("table.runs tbody tr").count() == before + 1
    assert page.locator("#sleep-start").count() == 0, "no second start while a run is open"
    shoot(page, tmp_path, "started")

    # The new run, aborted from its page: its branch is gone and a start is offered again.
    follow(page, page.locator("table.runs tbody tr").filter(has_not_text="merged")
           .locator("a").first)
    run_id = page.url.rsplit("/", 1)[1]
    with page.expect_navigation():
        page.locator("form[data-sleep=abort] button").click()
    assert page.url.endswith("/sleep")
    assert subprocess.run(["git", "rev-parse", "--verify", "-q", f"sleep/{run_id}"],
                          cwd=night.store, check=False).returncode != 0
    assert page.locator("#sleep-start").count() == 1
    watched.assert_nothing_ran()
