"""``memhtml sync`` between clones of one bare remote: every fact any clone wrote
reaches every clone, nothing on the remote is ever rewritten, and two edits of one
memory are both kept."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from memhtml.format import content_hash, set_meta
from tests.integration.cli.cli_support import call
from tests.integration.sync.sync_support import git


def tree_of(root: Path) -> dict[str, str]:
    """Path -> blob id at the branch tip (the store's branch is main here)."""
    out = git(root, "ls-tree", "-r", "main")
    return {line.split("\t", 1)[1]: line.split()[2] for line in out.splitlines()}


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    pygit2.init_repository(str(bare), bare=True, initial_head="main")
    # A reflog on the remote records every update, so the test can see each was a
    # fast-forward.
    git(bare, "config", "core.logAllRefUpdates", "always")
    return bare


def _write(capsys: pytest.CaptureFixture[str], store: Path, title: str, claim: str) -> str:
    code, answer = call(capsys, "write", "--title", title, "--claim", claim,
                        "--store", str(store), "--json")
    assert code == 0, answer
    return str(answer["new"][0])


def _sync(capsys: pytest.CaptureFixture[str], store: Path) -> dict[str, object]:
    code, answer = call(capsys, "sync", "--store", str(store), "--json")
    assert code == 0, answer
    return dict(answer)


def test_two_clones_share_every_fact(tmp_path: Path, remote: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert call(capsys, "init", str(first), "--json")[0] == 0
    git(first, "remote", "add", "origin", str(remote))
    assert _sync(capsys, first)["pushed"] is True, "the first sync publishes the branch"
    code, cloned = call(capsys, "clone", str(remote), str(second), "--json")
    assert code == 0, cloned
    a = _write(capsys, first, "Deploy day", "Deploys happen on Tuesdays.")
    b = _write(capsys, second, "Lunch", "Lunch is at noon.")
    assert _sync(capsys, first)["action"] == "ahead"
    merged = _sync(capsys, second)
    assert merged["action"] == "merged" and merged["pushed"] is True, merged
    assert _sync(capsys, first)["action"] == "fast-forward"
    assert tree_of(first) == tree_of(second)
    assert a in tree_of(first) and b in tree_of(first)
    assert (first / b).is_file() and (second / a).is_file(), "checkouts follow"
    again = _sync(capsys, first)
    assert again["action"] == "up-to-date" and again["pushed"] is False
    for store in (first, second):
        code, doctor = call(capsys, "doctor", "--store", str(store), "--json")
        assert code == 0, doctor
    log = git(remote, "reflog", "show", "--format=%gs", "refs/heads/main").splitlines()
    assert log and all("forced" not in line for line in log), log


def test_two_edits_of_one_memory_are_both_kept(tmp_path: Path, remote: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert call(capsys, "init", str(first), "--json")[0] == 0
    git(first, "remote", "add", "origin", str(remote))
    path = _write(capsys, first, "Deploy day", "Deploys happen on Tuesdays.")
    _sync(capsys, first)
    assert call(capsys, "clone", str(remote), str(second), "--json")[0] == 0
    for store, day, stamp in ((first, "Wednesdays", "2030-01-02T00:00:00Z"),
                              (second, "Thursdays", "2030-01-03T00:00:00Z")):
        # An edit of the article in place, as a person (or a curation phase) makes it:
        # the claim changed, the hash and the updated stamp kept true.
        text = (store / path).read_text(encoding="utf-8").replace("Tuesdays", day)
        text = set_meta(set_meta(text, "memhtml-content-hash", content_hash(text)),
                        "memhtml-updated", stamp)
        (store / path).write_text(text, encoding="utf-8")
        git(store, "commit", "-qam", f"deploys on {day}")
    _sync(capsys, first)
    merged = _sync(capsys, second)
    kinds = [event["kind"] for event in merged["merge"]]  # type: ignore[attr-defined]
    assert "both-kept" in kinds, merged
    _sync(capsys, first)
    assert tree_of(first) == tree_of(second)
    texts = [git(first, "show", f"main:{p}") for p in tree_of(first) if p.endswith(".html")]
    assert any("Wednesdays" in t for t in texts) and any("Thursdays" in t for t in texts)
    assert any("sync-conflict" in t for t in texts), "a review task names the conflict"


def test_sync_without_a_remote_names_the_fix(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert call(capsys, "init", str(store), "--json")[0] == 0
    code, answer = call(capsys, "sync", "--store", str(store), "--json")
    assert code == 1 and "git remote add" in answer["error"], answer


def test_two_corrections_of_one_memory_leave_one_live_and_a_task_to_swap_them(
        tmp_path: Path, remote: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert call(capsys, "init", str(first), "--json")[0] == 0
    git(first, "remote", "add", "origin", str(remote))
    path = _write(capsys, first, "Team standup", "Standup is at 9:30 on weekdays.")
    _sync(capsys, first)
    assert call(capsys, "clone", str(remote), str(second), "--json")[0] == 0
    claims = {first: "Standup is at 10:00 on weekdays.",
              second: "Standup is at 9:00 on Mondays only."}
    for store, claim in claims.items():
        code, answer = call(capsys, "correct", path, "--claim", claim,
                            "--store", str(store), "--json")
        assert code == 0, answer
    _sync(capsys, first)
    merged = _sync(capsys, second)
    events = [e for e in merged["merge"] if e["kind"] == "rival-corrections"]  # type: ignore[attr-defined]
    assert len(events) == 1, merged
    _sync(capsys, first)
    assert tree_of(first) == tree_of(second)
    def live_claims() -> list[str]:
        code, found = call(capsys, "search", "standup", "--store", str(first), "--json")
        assert code == 0, found
        return [hit["claim"] for hit in found["hits"]
                if not hit["path"].startswith("areas/tasks/")]

    # One correction is live (the later; in one second, the order of the bytes).
    live = live_claims()
    assert len(live) == 1 and live[0] in claims.values(), live
    (other,) = set(claims.values()) - set(live)
    archived_at = str(events[0]["other"])
    assert archived_at.startswith("archive/")
    code, task_list = call(capsys, "task", "list", "--store", str(first), "--json")
    tasks = [t for t in task_list["tasks"] if "sync-" in t["path"]]
    assert len(tasks) == 1, task_list
    code, task = call(capsys, "read", tasks[0]["path"], "--tier", "details",
                      "--store", str(first), "--json")
    text = str(task)
    for claim in claims.values():
        assert claim in text, text
    assert f"memhtml restore {archived_at}" in text
    # The swap the task names works, and then the other claim is the live one.
    assert call(capsys, "restore", archived_at, "--store", str(first), "--json")[0] == 0
    keeper = str(events[0]["path"])
    assert call(capsys, "archive", keeper, "--store", str(first), "--json")[0] == 0
    assert live_claims() == [other]
    code, doctor = call(capsys, "doctor", "--store", str(first), "--json")
    assert code == 0, doctor
