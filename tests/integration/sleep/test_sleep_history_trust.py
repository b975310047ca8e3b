"""What a sleep run reads from history is read from the commits that made it, never from
a file's name: a report file another clone planted does not mute ``sleep plan``, and an
archived detected task another clone planted does not silence the finding. A person's
close through a door, on this clone or on a colleague's, still stands.

Everything runs as a person would: ``git clone``, ``git commit``, ``git push`` beside
``memhtml sync`` and ``memhtml sleep``, against a bare remote, with the system clock
pinned (moved a day per night).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pygit2
import pytest

from memhtml.format import parse_memory, set_meta
from memhtml.sleep.contract import report_path
from tests.integration.sleep.sleep_support import RUN_ID, build_sleep_demo
from tests.integration.sleep.test_sleep_curation_hostile import (
    YEAR,
    Clock,
    _first_night_task,
    _flip,
    cli,
    commit,
    counts,
    detected,
    merge,
    night,
    phase,
    put,
    text,
)
from tests.integration.store.checkout_support import (
    PERSON,
    clean_environment,
    git,
)

FORGED = "2099-01-01"


# -- fixtures ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("history") / "store"
    build_sleep_demo(root)
    return root


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    from memhtml.adapters.clock import SystemClock

    pinned = Clock()
    monkeypatch.setattr(SystemClock, "now", lambda self: pinned.at)
    return pinned


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, clock: Clock) -> dict[str, str]:
    return clean_environment(monkeypatch, tmp_path / "home")


@pytest.fixture
def store(demo: Path, tmp_path: Path, env: dict[str, str]) -> Path:
    root = tmp_path / "store"
    shutil.copytree(demo, root, symlinks=True)
    return root


@pytest.fixture
def other(store: Path, tmp_path: Path, env: dict[str, str],
          capsys: pytest.CaptureFixture[str]) -> Path:
    """A second clone of the store through a bare remote both sync with."""
    return clone_of(capsys, store, env, tmp_path)


def synced(capsys: pytest.CaptureFixture[str], root: Path) -> dict[str, Any]:
    code, answer, err = cli(capsys, "sync", "--store", str(root), "--json")
    assert code == 0, (answer, err)
    assert isinstance(answer, dict)
    return answer


def plan(capsys: pytest.CaptureFixture[str], root: Path) -> dict[str, Any]:
    code, answer, err = cli(capsys, "sleep", "plan", "--store", str(root), "--json")
    assert code == 0 and isinstance(answer, dict), (answer, err)
    return answer


def pushed(root: Path, env: dict[str, str]) -> None:
    git(root, env, "push", "-q", "origin", "main")


def forge_report(root: Path, env: dict[str, str], run_id: str, *, trailers: bool,
                 as_memhtml: bool = False) -> None:
    """A run's report committed with plain git: the file alone, or with the trailers a
    report phase's commit carries (and, ``as_memhtml``, memhtml's committer name)."""
    target = root / report_path(run_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("<!doctype html><title>sleep report</title><p>all quiet</p>\n",
                      encoding="utf-8")
    message = f"memhtml sleep: report ({run_id})"
    if trailers:
        message += (f"\n\nMemhtml-Op: sleep\nMemhtml-Run: {run_id}\nMemhtml-Phase: report\n"
                    f"Memhtml-Stamp: {run_id}T03:00:00Z\n")
    who = {**env, "GIT_COMMITTER_NAME": "memhtml", "GIT_COMMITTER_EMAIL": "memhtml@localhost",
           "GIT_AUTHOR_NAME": "memhtml", "GIT_AUTHOR_EMAIL": "memhtml@localhost"} \
        if as_memhtml else env
    git(root, who, "add", "-f", report_path(run_id))
    git(root, who, *(() if as_memhtml else PERSON), "commit", "-q", "-m", message)


# == sleep plan ===============================================================================


def test_a_report_pushed_from_another_clone_does_not_mute_the_plan(
        store: Path, other: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    before = plan(capsys, store)
    assert before["last_run"] is None and before["changed_since_last_run"] > 0
    # The other clone commits a report named for 2099 by hand, and one more carrying a
    # report commit's trailers and memhtml's name, stamped in 2099; and pushes both.
    forge_report(other, env, FORGED, trailers=False)
    forge_report(other, env, "2099-01-02", trailers=True, as_memhtml=True)
    pushed(other, env)
    assert synced(capsys, store)["action"] == "fast-forward"
    assert (store / report_path(FORGED)).is_file()
    after = plan(capsys, store)
    assert after["last_run"] is None, after
    assert after["changed_since_last_run"] == before["changed_since_last_run"]
    assert after["verdict"] == "would-change"
    notes = " | ".join(after["notes"])
    assert report_path(FORGED) in notes and "not counted" in notes, notes
    assert "2099-01-02" in notes and "future" in notes, notes

    # A real run merged: it is the last run, whatever file names sort after it.
    night(capsys, store)
    merge(capsys, store)
    code, written, err = cli(capsys, "write", "--title", "After the night",
                             "--claim", "Written after the merged run.", "--store",
                             str(store), "--json")
    assert code == 0, (written, err)
    latest = plan(capsys, store)
    assert (latest["last_run"], latest["changed_since_last_run"]) == (RUN_ID, 1), latest
    # And the same forgery committed by hand on this clone changes nothing either.
    forge_report(store, env, "2099-01-03", trailers=False)
    again = plan(capsys, store)
    assert (again["last_run"], again["changed_since_last_run"]) == (RUN_ID, 1), again
    assert any("2099-01-03" in n for n in again["notes"])


def test_confidence_decay_ignores_a_run_dated_in_the_future(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    night(capsys, store)
    merge(capsys, store)
    forge_report(store, env, FORGED, trailers=True, as_memhtml=True)
    clock.night(1)
    report = night(capsys, store, "confidence-decay")
    decay = next(p for p in report["phases"] if p["phase"] == "confidence-decay")
    assert decay["counts"]["last_run"] == RUN_ID, decay
    assert any(FORGED in w and "future" in w for w in decay["warnings"]), decay


# == detected tasks ============================================================================


def clone_of(capsys: pytest.CaptureFixture[str], store: Path, env: dict[str, str],
             tmp_path: Path) -> Path:
    """A bare remote the store syncs with, and a second clone of it."""
    remote = tmp_path / "remote.git"
    pygit2.init_repository(str(remote), bare=True, initial_head="main")
    git(store, env, "remote", "add", "origin", str(remote))
    synced(capsys, store)
    clone = tmp_path / "colleague"
    code, cloned, err = cli(capsys, "clone", str(remote), str(clone), "--json")
    assert code == 0, (cloned, err)
    return clone


def learned_task(store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
                 ) -> tuple[str, str]:
    """The detected task a vetoed pair will raise, learned from a run then aborted (what
    anyone who reads the corpus can compute): (its path, its text)."""
    _flip(store, "alpha")
    commit(store, env)
    report = night(capsys, store, "dedup-merge")
    (path,) = detected(store, report["head_sha"])
    content = text(store, report["head_sha"], path)
    code, _, err = cli(capsys, "sleep", "abort", RUN_ID, "--store", str(store), "--json")
    assert code == 0, err
    assert detected(store, "main") == []
    return path, content


def planted(root: Path, path: str, content: str) -> str:
    """An archived, done copy of the task at a name of the planter's choosing."""
    digest = path.removeprefix("areas/tasks/det-")[:12]
    copy = f"archive/{YEAR}/areas/tasks/det-{digest}-x.html"
    closed = content
    for name, value in (("memhtml-task-status", "done"), ("memhtml-status", "archived"),
                        ("memhtml-archived", "2026-11-29T12:00:00Z")):
        closed = set_meta(closed, name, value)
    assert parse_memory(closed, copy).value_or(None) is not None, "it reads as a memory"
    put(root, copy, closed)
    return copy


def opened_again(capsys: pytest.CaptureFixture[str], store: Path, path: str, copy: str,
                 clock: Clock) -> None:
    clock.night(1)
    report = night(capsys, store, "dedup-merge")
    done = counts(report, "dedup-merge")
    assert (done["tasks_minted"], done["tasks_dismissed"]) == (1, 0), done
    assert detected(store, report["head_sha"]) == [path]
    warned = [w for w in phase(report, "dedup-merge")["warnings"] if copy in w]
    assert warned and "no door closed" in warned[0], phase(report, "dedup-merge")["warnings"]


def test_an_archived_task_committed_with_plain_git_does_not_silence_the_finding(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    path, content = learned_task(store, env, capsys)
    copy = planted(store, path, content)
    commit(store, env, "an archived task, by hand")
    opened_again(capsys, store, path, copy, clock)


def test_an_archived_task_pulled_from_a_remote_does_not_silence_the_finding(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock, tmp_path: Path) -> None:
    path, content = learned_task(store, env, capsys)
    colleague = clone_of(capsys, store, env, tmp_path)
    copy = planted(colleague, path, content)
    commit(colleague, env, "an archived task, by hand")
    pushed(colleague, env)
    git(store, env, *PERSON, "pull", "-q", "--no-rebase", "origin", "main")
    assert (store / copy).is_file()
    opened_again(capsys, store, path, copy, clock)


def test_a_colleagues_close_through_the_door_stands_after_sync(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock, tmp_path: Path) -> None:
    path, _ = _first_night_task(store, env, capsys)
    colleague = clone_of(capsys, store, env, tmp_path)
    code, closed, err = cli(capsys, "task", "status", path, "done", "--store",
                            str(colleague), "--json")
    assert code == 0 and closed["committed"], err
    synced(capsys, colleague)
    # A write here first, so the sync is a merge: the close arrives as the second
    # parent's history, not on this branch's first-parent line.
    code, _, err = cli(capsys, "write", "--title", "Here meanwhile", "--claim",
                       "Written on this clone while the colleague closed the task.",
                       "--store", str(store), "--json")
    assert code == 0, err
    assert synced(capsys, store)["action"] == "merged"
    assert not (store / path).exists()
    clock.night(1)
    report = night(capsys, store, "dedup-merge")
    done = counts(report, "dedup-merge")
    assert (done["tasks_minted"], done["tasks_dismissed"]) == (0, 1), done
    assert detected(store, report["head_sha"]) == []
