"""``doctor`` tells errors from advice: a published page behind the memories (every
write after a ``publish`` leaves one) is advice and exits 0; a content hash that a
hand edit left stale is an error that says what it means, and ``doctor --fix`` stamps
it again in one commit that changes that one line of each file and nothing else."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.cli.cli_support import call, call_text, git_log


def _write(capsys: pytest.CaptureFixture[str], store: Path, title: str, claim: str) -> str:
    code, answer = call(capsys, "write", "--title", title, "--claim", claim,
                        "--store", str(store), "--json")
    assert code == 0, answer
    path: str = answer["path"]
    return path


def _git(store: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=store, check=True, capture_output=True,
                          text=True).stdout


def test_a_page_behind_the_memories_is_advice_and_exits_0(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(capsys, store, "Deploy window", "Deploys happen on Tuesdays.")
    assert call(capsys, "publish", "--store", str(store), "--json")[0] == 0
    _write(capsys, store, "Cache", "The cache holds a day of pages.")
    code, doctor = call(capsys, "doctor", "--store", str(store), "--json")
    assert code == 0, doctor
    assert doctor["errors"] == 0 and doctor["advice"] == len(doctor["findings"]) > 0
    assert {(f["kind"], f["severity"]) for f in doctor["findings"]} == {("artifact", "advice")}
    code, out, _ = call_text(capsys, "doctor", "--store", str(store))
    assert code == 0 and out.rstrip().endswith(f"0 error(s), {doctor['advice']} advice")
    assert "run publish" in out


def _hand_edit(store: Path, path: str, words: str) -> None:
    """What a person does: change the article's words in an editor, commit with git."""
    file = store / path
    html = file.read_text(encoding="utf-8")
    head, mark, rest = html.partition("</mark>")
    assert mark
    file.write_text(head + mark + f" {words}" + rest, encoding="utf-8")
    _git(store, "commit", "-qam", "by hand")


def test_a_stale_hash_says_what_it_means_and_fix_stamps_it_in_one_commit(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(capsys, store, "Deploy window", "Deploys happen on Tuesdays.")
    other = _write(capsys, store, "Cache", "The cache holds a day of pages.")
    _hand_edit(store, path, "Ask the release manager first.")
    code, doctor = call(capsys, "doctor", "--store", str(store), "--json")
    assert code == 1, doctor
    [stale] = [f for f in doctor["findings"] if f["kind"] == "stale-hash"]
    assert stale["path"] == path and stale["severity"] == "error"
    assert "edited and committed without memhtml" in stale["message"]
    assert "doctor --fix" in stale["message"]
    before = _git(store, "show", f"HEAD:{path}")
    untouched = (store / other).read_bytes()
    commits = len(git_log(store))
    code, fixed = call(capsys, "doctor", "--fix", "--store", str(store), "--json")
    assert code == 0, fixed
    assert not [f for f in fixed["findings"] if f["kind"] == "stale-hash"]
    assert len(git_log(store)) == commits + 1
    assert git_log(store)[0].split(" ", 1)[1].startswith("memhtml restamp:")
    after = (store / path).read_text(encoding="utf-8")
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True)
               if a != b]
    assert len(changed) == 1 and "memhtml-content-hash" in changed[0][1]
    assert (store / other).read_bytes() == untouched
    assert _git(store, "status", "--porcelain") == ""
    # Fixed is fixed: a second --fix commits nothing.
    assert call(capsys, "doctor", "--fix", "--store", str(store), "--json")[0] == 0
    assert len(git_log(store)) == commits + 1


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(["Ask", "first", "déjà", "vu", "&", "Tuesdays", "x<y"]),
                      min_size=1, max_size=6).map(" ".join))
def test_a_restamp_changes_the_hash_line_alone_whatever_was_written(
        tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str],
        words: str) -> None:
    root = tmp_path_factory.mktemp("restamp") / "store"
    assert call(capsys, "init", str(root), "--json")[0] == 0
    path = _write(capsys, root, "Deploy window", "Deploys happen on Tuesdays.")
    escaped = words.replace("&", "&amp;").replace("<", "&lt;")
    _hand_edit(root, path, escaped)
    before = (root / path).read_text(encoding="utf-8").splitlines()
    assert call(capsys, "doctor", "--fix", "--store", str(root), "--json")[0] == 0
    after = (root / path).read_text(encoding="utf-8").splitlines()
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [
        next(i for i, line in enumerate(before) if "memhtml-content-hash" in line)]
