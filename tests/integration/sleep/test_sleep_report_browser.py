"""The run report page in headless Chromium: no script runs, whatever the run carried,
and the page holds the published site's policy."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from returns.io import IOResult, IOSuccess

from memhtml.cli.demo import build_demo
from memhtml.compose import value_of
from memhtml.sleep import runner
from memhtml.sleep.contract import report_path
from memhtml.sleep.ledger import PendingMark
from memhtml.sleep.phase import PhaseEnv, PhaseFault, PhaseResult
from memhtml.sleep.phases import body_for
from memhtml.sleep.runner import run_sleep
from memhtml.store.site import CONTENT_SECURITY_POLICY
from tests.integration.publish.browser_support import Watched, audit
from tests.integration.publish.conftest import browser_missing, serve
from tests.integration.sleep.sleep_support import deps_at, git_cli

_MISSING = browser_missing()
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(_MISSING is not None, reason=_MISSING or ""),
]

HOSTILE = ('<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'
           '"><a href="javascript:alert(1)">x</a>')


def hostile(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    return IOSuccess(PhaseResult(
        counts={"note": HOSTILE}, warnings=(HOSTILE,),
        marks=(PendingMark.of("commitment-below-floor", statement=HOSTILE, confidence=0.3,
                              session=HOSTILE, done=False),)))


@pytest.fixture(scope="module")
def page_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("demo") / "store"
    build_demo(root)
    patch = pytest.MonkeyPatch()
    patch.setattr(runner, "body_for",
                  lambda phase: hostile if phase == "trace-consolidation" else body_for(phase))
    try:
        report = value_of(run_sleep(deps_at(root)))
    finally:
        patch.undo()
    served = tmp_path_factory.mktemp("served")
    data = git_cli(root, "show", f"{report.head_sha}:{report_path(report.run_id)}")
    (served / "report.html").write_text(data, encoding="utf-8")
    yield from serve(served)


def test_the_report_runs_nothing_and_carries_the_policy(page_root: str, watched: Watched
                                                        ) -> None:
    page = watched.page
    page.goto(f"{page_root}/report.html")
    result = audit(page)
    assert result["scripts"] == 0
    assert result["bad"] == []
    assert result["csp"] == CONTENT_SECURITY_POLICY
    assert result["links"] == []
    watched.assert_nothing_ran()
    text = page.locator("main").inner_text()
    assert "window.__pwned = 1" in text, "hostile text shows as text"
    assert watched.requests == [f"{page_root}/report.html"] or all(
        r.endswith(("/report.html", "/favicon.ico")) for r in watched.requests)


def test_commitments_below_the_floor_are_folded(page_root: str, watched: Watched) -> None:
    page = watched.page
    page.goto(f"{page_root}/report.html")
    details = page.locator("details")
    assert details.count() == 1
    assert details.get_attribute("open") is None
    assert "Commitments below the floor (1)" in details.locator("summary").inner_text()
    assert not page.locator("details q").is_visible()
    details.locator("summary").click()
    assert page.locator("details q").is_visible()
    watched.assert_nothing_ran()
