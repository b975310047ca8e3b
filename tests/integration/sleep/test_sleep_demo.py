"""``memhtml sleep`` on a real repository: the demo store, through the command line, with
no network and no model; and the same run byte for byte under two hash seeds."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from memhtml.cli.demo import build_demo
from memhtml.compose import value_of
from memhtml.sleep.contract import SLEEP_PHASES, report_path
from memhtml.sleep.merge import merge_run
from memhtml.sleep.runner import run_sleep
from tests.integration.cli.cli_support import call, usage_code
from tests.integration.sleep.sleep_support import (
    RUN_ID,
    dangle,
    deps_at,
    git_cli,
    run_in_subprocess,
)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("MEMHTML_") and name != "MEMHTML_EMBEDDER":
            monkeypatch.delenv(name)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo") / "store"
    build_demo(root)
    return root


@pytest.fixture
def store(demo: Path, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(demo, root, symlinks=True)
    return root


def test_plan_run_review_merge_on_the_demo(store: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    s = ("--store", str(store), "--json")
    code, plan = call(capsys, "sleep", "plan", *s)
    assert code == 0 and plan["verdict"] == "would-change" and plan["checkout_matches"]
    main = git_cli(store, "rev-parse", "main").strip()
    assert plan["commit"] == main

    code, report = call(capsys, "sleep", "run", *s)
    assert code == 0, report
    assert [p["phase"] for p in report["phases"]] == list(SLEEP_PHASES)
    assert report["base_sha"] == main
    assert git_cli(store, "rev-parse", "main").strip() == main, "a run never moves main"
    run_id = report["run_id"]

    code, status = call(capsys, "sleep", "status", *s)
    assert code == 0 and status["runs"][0]["state"] == "mergeable"
    code, review = call(capsys, "sleep", "review", run_id, *s)
    assert code == 0
    assert {f["path"]: f["change"] for f in review["files"]}[report_path(run_id)] == "created"

    # The demo's history dates its examples weeks back and records no reads, so its
    # first night archives about a third of them: more than the default archive share,
    # so merge refuses, naming each, and a person who agrees raises the share.
    code, refused = call(capsys, "sleep", "merge", run_id, *s)
    assert code != 0 and refused["code"] == "ERR_MERGE_OVER_ARCHIVED", refused
    assert git_cli(store, "rev-parse", "main").strip() == main
    monkeypatch.setenv("MEMHTML_SLEEP_ARCHIVE_SHARE", "0.5")
    code, merged = call(capsys, "sleep", "merge", run_id, *s)
    assert code == 0 and merged["merged"] and merged["fast_forwarded"], merged
    assert (merged["marks_pending"], merged["marks_applied"]) == (0, 0)
    assert git_cli(store, "rev-parse", "main").strip() == report["head_sha"]
    assert git_cli(store, "status", "--porcelain") == "", "the checkout followed main"
    assert (store / report_path(run_id)).is_file()
    code, doctor = call(capsys, "doctor", *s)
    assert code == 0 and doctor["findings"] == [], doctor

    code, again = call(capsys, "sleep", "merge", run_id, *s)
    assert code == 0 and again["merged"] and not again["fast_forwarded"]
    code, status = call(capsys, "sleep", "status", run_id, *s)
    assert status["runs"][0]["state"] == "merged"


def test_a_dry_run_writes_nothing(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refs = git_cli(store, "for-each-ref")
    code, report = call(capsys, "sleep", "run", "--dry-run", "--store", str(store), "--json")
    assert code == 0 and report["dry_run"] and report["commits"] == []
    assert git_cli(store, "for-each-ref") == refs


def test_an_unreadable_state_database_refuses_the_run_naming_it(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state_db = store / ".git" / "memhtml" / "state.db"
    state_db.parent.mkdir(parents=True, exist_ok=True)
    state_db.write_bytes(b"this is not a sqlite database" * 100)
    code, report = call(capsys, "sleep", "run", "--store", str(store), "--json")
    assert code == 1
    preflight = report["phases"][0]
    assert preflight["status"] == "failed" and "state.db" in preflight["reason"]
    assert report["commits"] == [] and report["head_sha"] == report["base_sha"]
    assert state_db.read_bytes() == b"this is not a sqlite database" * 100


def test_an_unknown_phase_is_a_usage_error(store: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_code(capsys, "sleep", "run", "--phase", "defragment", "--store",
                      str(store)) == 2


def test_a_write_during_the_run_is_kept_and_the_run_lands_beside_it(
        store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMHTML_SLEEP_ARCHIVE_SHARE", "0.5")  # the demo's night one
    s = ("--store", str(store), "--json")
    code, report = call(capsys, "sleep", "run", *s)
    assert code == 0
    code, written = call(capsys, "write", "--title", "During the run", "--claim",
                         "Written while the run was open.", *s)
    assert code == 0
    path = written["new"][0]
    main = git_cli(store, "rev-parse", "main").strip()
    code, merged = call(capsys, "sleep", "merge", report["run_id"], *s)
    assert code == 0 and merged["merged"] and not merged["fast_forwarded"], merged
    assert merged["replayed_onto"] == main
    assert git_cli(store, "rev-parse", "main").strip() == merged["merge_commit"]
    assert git_cli(store, "rev-parse", "main^2").strip() == report["head_sha"]
    assert git_cli(store, "status", "--porcelain") == "", "the checkout followed main"
    assert (store / path).is_file() and (store / report_path(report["run_id"])).is_file()
    code, plan = call(capsys, "sleep", "plan", *s)
    assert code == 0 and plan["last_run"] == report["run_id"], plan
    assert plan["changed_since_last_run"] == 1, "the write the run never read"
    # The write made the published pages stale, as any write does; nothing else.
    code, doctor = call(capsys, "doctor", *s)
    assert {f["kind"] for f in doctor["findings"]} == {"artifact"}, doctor
    assert call(capsys, "publish", *s)[0] == 0
    code, doctor = call(capsys, "doctor", *s)
    assert code == 0 and doctor["findings"] == [], doctor


def test_merge_refuses_a_conflict_and_abort_deletes(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = ("--store", str(store), "--json")
    code, report = call(capsys, "sleep", "run", *s)
    assert code == 0
    code, review = call(capsys, "sleep", "review", report["run_id"], *s)
    changed = sorted(f["path"] for f in review["files"]
                     if f["change"] in ("meta-only", "body-changed")
                     and f["path"].startswith("areas/"))
    assert changed, review["files"]
    code, _ = call(capsys, "label", changed[0], "team:reviewed", *s)
    assert code == 0
    main = git_cli(store, "rev-parse", "main").strip()
    code, refused = call(capsys, "sleep", "merge", report["run_id"], *s)
    assert code == 1 and refused["refusal"] == "conflict", refused
    assert refused["conflicts"] == [changed[0]]
    assert refused["marks_pending"] is None and refused["marks_applied"] is None
    assert git_cli(store, "rev-parse", "main").strip() == main
    code, aborted = call(capsys, "sleep", "abort", report["run_id"], *s)
    assert code == 0 and aborted["state"] == "main-advanced"
    assert git_cli(store, "branch", "--list", "sleep/*") == ""


def test_a_changed_checkout_file_is_kept_through_merge(store: Path) -> None:
    deleted, archived = dangle(store)
    report = value_of(run_sleep(deps_at(store)))
    integrity = next(r for r in report.phases if r.phase == "integrity")
    assert integrity.counts["repaired"] and integrity.counts["dropped"], integrity
    assert integrity.counts["pages"], "the demo is published: its pages follow"
    touched = value_of(deps_at(store).git.changed_paths(report.base_sha, report.head_sha))
    held = {e.path for e in value_of(deps_at(store).git.list_tree(report.head_sha))}
    mine = next(p for p in touched if p.startswith("areas/") and p in held)
    (store / mine).write_text("my own edit\n", encoding="utf-8")
    # The demo's first night archives past the default share; the merge's checkout
    # handling is what is tested here.
    outcome = value_of(merge_run(replace(deps_at(store), archive_share=0.5), RUN_ID))
    assert outcome.merged, outcome
    assert mine in outcome.kept
    assert (store / mine).read_text(encoding="utf-8") == "my own edit\n"
    assert git_cli(store, "status", "--porcelain").split() == ["M", mine]
    assert deleted and archived


def test_the_branch_is_byte_identical_under_two_hash_seeds(demo: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    shutil.copytree(demo, first, symlinks=True)
    dangle(first)
    shutil.copytree(first, second, symlinks=True)
    one = run_in_subprocess(first, "1")
    two = run_in_subprocess(second, "4242")
    assert one == two
    assert git_cli(first, "ls-tree", "-r", one) == git_cli(second, "ls-tree", "-r", two)
