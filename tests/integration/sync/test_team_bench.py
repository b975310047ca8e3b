"""``bench.team`` in its short form: four clones of one store over smart HTTP, each an
MCP server writing with ``sync_remote`` set, and a curator running ``sleep run`` and
``sleep merge`` meanwhile, for 30 s. What it checks is the run's own verdict
(``TeamRun.sound``): one tree everywhere, each acknowledged write held exactly once,
the server's reflog fast-forwards only. Its timings are printed, never asserted.

The servers and the curator's commands are forked from a warm interpreter
(``warm_cli``), as the git-daemon crowd's workers are: the same program, without each
process's imports (about half a second of a core each, some thirty processes a run,
taken from the other tests running beside it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from bench.team import Processes, report, run_team

from tests.integration import warm_cli
from tests.integration.sync.http_git_server import missing

CLONES = 4
SECONDS = 30.0


@pytest.mark.slow
@pytest.mark.first
def test_four_clones_and_a_curator_over_http_converge_with_every_write_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    run = run_team(tmp_path, clones=CLONES, seconds=SECONDS, say=lambda _: None,
                   processes=Processes(command=_warm_command, server=_warm_server))
    shown = report(run)
    with capsys.disabled():
        print("\n" + shown)
    assert run.acks, shown
    assert not run.failed_calls, shown
    assert run.sleep_steps.get("sleep run ok", 0) >= 1, shown
    assert run.converged, shown
    assert not run.lost and not run.doubled, shown
    assert not run.forced and not run.final_sync_failures, shown


def _warm_command(env: Mapping[str, str], tokens: Sequence[str], timeout: float
                  ) -> tuple[int, str]:
    ran = warm_cli.memhtml(*tokens, env=env, timeout=timeout)
    return ran.returncode, ran.stdout


def _warm_server(env: Mapping[str, str], store: Path) -> tuple[str, list[str]]:
    return warm_cli.launcher("memhtml.mcp", "--store", str(store), env=env)
