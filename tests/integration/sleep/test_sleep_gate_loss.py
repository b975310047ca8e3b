"""The merge gate sees loss, through the real command line on a real repository: a
store written with ``memhtml write``, a ``sleep run``, then a person's own commits on
the run branch (a hand commit is judged by the gate like any other). Titles and
claims set to ``qqq``, a quarter of the store archived, and a memory folded into one
that says nothing of it each pass the old gate (its probes came from the tip); each is
now refused with the memories named, a stable code, and what to do. The same night
unchanged merges.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memhtml.adapters.git import PygitService
from memhtml.compose import value_of
from memhtml.contracts.services import PathChange
from memhtml.format import set_meta
from memhtml.store.layout import archive_path
from tests.integration.cli.cli_support import call
from tests.integration.sleep.sleep_support import PERSON, RUN_AT, git_cli

FACTS = [
    ("Deploy window", "Deploys stop at sixteen hundred on Fridays."),
    ("Cache eviction", "The edge cache drops entries unused for a week."),
    ("Queue backpressure", "Workers pause pulling once memory passes eighty percent."),
    ("Certificate renewal", "Certificates renew thirty days before they lapse."),
    ("Escalation path", "Page the secondary after fifteen silent minutes."),
    ("Nightly backups", "Backups run at two and are kept for ninety days."),
    ("Schema migrations", "Migrations ship behind a flag and run online."),
    ("Audit trail", "Every admin action lands in the append-only audit log."),
    ("Feature switches", "Switches live in one table and expire after a quarter."),
    ("Team lunch", "The café on the third floor opens at eight."),
    ("Build cache", "The build cache is shared across branches by content key."),
    ("Incident review", "Reviews are written within five working days, blameless."),
]


@pytest.fixture
def night(tmp_path: Path, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, dict[str, str]]:
    """A store of twelve facts written through the CLI, and a run cut over it."""
    import os

    for name in list(os.environ):
        if name.startswith("MEMHTML_") and name not in ("MEMHTML_CACHE_DIR", "MEMHTML_EMBEDDER"):
            monkeypatch.delenv(name)
    root = tmp_path / "store"
    code, answer = call(capsys, "init", str(root), "--json")
    assert code == 0, answer
    s = ("--store", str(root), "--json")
    paths: dict[str, str] = {}
    for title, claim in FACTS:
        code, written = call(capsys, "write", "--title", title, "--claim", claim, *s)
        assert code == 0, written
        paths[title] = written["path"]
    code, report = call(capsys, "sleep", "run", *s)
    assert code == 0, report
    return root, report["run_id"], paths


def on_branch(root: Path, run_id: str, changes: list[PathChange], message: str) -> str:
    """A person's own commit on the run branch (committed as the person, by hand)."""
    git = value_of(PygitService.open(root / ".git"))
    branch = f"sleep/{run_id}"
    tip = value_of(git.resolve(branch))
    return value_of(git.commit(branch, tip, changes, message, PERSON, RUN_AT))


def blob(root: Path, run_id: str, path: str) -> str:
    return git_cli(root, "show", f"sleep/{run_id}:{path}")


def archived(root: Path, run_id: str, path: str, by: str | None = None) -> list[PathChange]:
    """``path`` moved under ``archive/`` by hand, status set (superseded by ``by``)."""
    html = set_meta(set_meta(blob(root, run_id, path), "memhtml-status", "archived"),
                    "memhtml-archived", "2026-11-30T04:00:00Z")
    if by is not None:
        html = set_meta(html, "memhtml-superseded-by", "/" + by)
    return [PathChange(path, None), PathChange(archive_path(path, 2026), html.encode())]


def merge(capsys: pytest.CaptureFixture[str], root: Path, run_id: str
          ) -> tuple[int, dict[str, Any]]:
    code, answer = call(capsys, "sleep", "merge", run_id, "--store", str(root), "--json")
    assert isinstance(answer, dict)
    return code, answer


def test_titles_and_claims_set_by_hand_are_refused_by_name(
        night: tuple[Path, str, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    root, run_id, paths = night
    main = git_cli(root, "rev-parse", "main").strip()
    rewritten = sorted(paths.values())[:5]
    changes = []
    for title, claim in FACTS:
        path = paths[title]
        if path in rewritten:
            text = blob(root, run_id, path).replace(title, "qqq").replace(claim, "qqq.")
            changes.append(PathChange(path, text.encode()))
    sha = on_branch(root, run_id, changes, "set the titles")
    code, answer = merge(capsys, root, run_id)
    assert code == 1 and answer["code"] == "ERR_MERGE_UNRECORDED", answer
    assert answer["refusal"] == "unrecorded"
    named = sorted({line.split(":", 1)[0] for line in answer["violations"]})
    assert named == rewritten
    assert len(answer["violations"]) == 2 * len(rewritten), "title and claim, each named"
    assert sha[:10] in answer["error"] and "memhtml correct" in answer["error"]
    assert git_cli(root, "rev-parse", "main").strip() == main, "a refusal moves nothing"


def test_archiving_past_the_share_is_refused_and_a_raised_share_lands(
        night: tuple[Path, str, dict[str, str]], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    root, run_id, paths = night
    gone = sorted(paths.values())[:3]
    on_branch(root, run_id, [c for p in gone for c in archived(root, run_id, p)],
              "archive a quarter")
    code, answer = merge(capsys, root, run_id)
    assert code == 1 and answer["code"] == "ERR_MERGE_OVER_ARCHIVED", answer
    assert answer["violations"] == gone
    assert "3 of the 12 live memories (25.0%)" in answer["error"]
    assert "sleep_archive_share" in answer["error"] and f"sleep abort {run_id}" in answer["error"]
    monkeypatch.setenv("MEMHTML_SLEEP_ARCHIVE_SHARE", "0.25")
    code, answer = merge(capsys, root, run_id)
    assert code == 0 and answer["merged"], answer
    for path in gone:
        assert (root / archive_path(path, 2026)).is_file() and not (root / path).exists()


def test_a_fold_into_a_memory_that_says_nothing_of_it_fails_the_gate(
        night: tuple[Path, str, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    root, run_id, paths = night
    folded, keeper = paths["Nightly backups"], paths["Team lunch"]
    on_branch(root, run_id, archived(root, run_id, folded, by=keeper), "fold by hand")
    code, answer = merge(capsys, root, run_id)
    assert code == 1 and answer["code"] == "ERR_DISCRIMINATION_FAILED", answer
    assert [line.split(":", 1)[0] for line in answer["violations"]] == [folded]
    assert "found no more" in answer["error"] and f"sleep abort {run_id}" in answer["error"]
    assert answer["gate"]["detail"]["unfound"] == [folded]


def test_the_night_unchanged_merges(night: tuple[Path, str, dict[str, str]],
                                    capsys: pytest.CaptureFixture[str]) -> None:
    root, run_id, _ = night
    code, answer = merge(capsys, root, run_id)
    assert code == 0 and answer["merged"], answer
    assert answer["gate"]["passed"] and answer["gate"]["detail"]["unfound"] == []
