"""A sleep run lands while a writer commits beside it: ``memhtml sleep run`` and ``sleep
merge`` as their own processes on the demo store's checkout, while another process
runs ``memhtml write`` about once a second the whole time.

The merge must land (a merge commit on main's tip, within ``MERGE_ATTEMPTS``
derivations), every write memhtml acknowledged must be in main exactly once, and every
path the run changed must hold what the run left there. When the writer edits a file
the run changed, the merge refuses and names that file. Nothing here measures time: a
deadline only stops a test that would otherwise wait for ever.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pygit2
import pytest

from memhtml.sleep.merge import MERGE_ATTEMPTS
from tests.integration.sleep.sleep_support import build_sleep_demo
from tests.integration.sleep.writer_support import read_acks
from tests.integration.store.checkout_support import clean_env, memhtml

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
WAIT_SECONDS = 300
"""How long a test waits for the writer to acknowledge more writes before failing."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("writers") / "store"
    build_sleep_demo(root)
    return root


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(tmp_path / "home")


@pytest.fixture
def store(demo: Path, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(demo, root, symlinks=True)
    return root


class Writer:
    """The writer process, its acknowledgements, and how to stop it."""

    def __init__(self, store: Path, env: dict[str, str], where: Path) -> None:
        self.acks = where / "acks.jsonl"
        self.stop_file = where / "stop"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.integration.sleep.writer_support", str(store),
             str(self.acks), str(self.stop_file)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def count(self) -> int:
        return len(read_acks(self.acks))

    def wait_for(self, count: int) -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        while self.count() < count:
            assert self.process.poll() is None, self.process.communicate()
            assert time.monotonic() < deadline, f"the writer stopped at {self.count()}"
            time.sleep(0.2)

    def stop(self) -> list[dict[str, Any]]:
        self.stop_file.touch()
        out, err = self.process.communicate(timeout=WAIT_SECONDS)
        assert self.process.returncode == 0, out + err
        return read_acks(self.acks)


@pytest.fixture
def writer(store: Path, env: dict[str, str], tmp_path: Path) -> Iterator[Writer]:
    started = Writer(store, env, tmp_path)
    try:
        yield started
    finally:
        if started.process.poll() is None:
            started.stop_file.touch()
            started.process.wait(timeout=WAIT_SECONDS)


def cli(env: dict[str, str], store: Path, *tokens: str) -> tuple[int, dict[str, Any]]:
    done = memhtml(env, *tokens, "--store", str(store), "--json", timeout=900)
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    return done.returncode, json.loads(done.stdout)


def git(store: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=store, capture_output=True, text=True,
                          check=True).stdout


def memory_texts(store: Path, rev: str) -> dict[str, str]:
    """Every ``.html`` file of ``rev``'s tree, path -> text."""
    repo = pygit2.Repository(str(store))
    found: dict[str, str] = {}

    def walk(node: pygit2.Tree, prefix: str) -> None:
        for entry in node:
            obj = repo[entry.id]
            if isinstance(obj, pygit2.Tree):
                walk(obj, f"{prefix}{entry.name}/")
            elif isinstance(obj, pygit2.Blob) and str(entry.name).endswith(".html"):
                found[f"{prefix}{entry.name}"] = obj.data.decode("utf-8", "replace")

    walk(repo.revparse_single(rev).peel(pygit2.Tree), "")
    return found


def blob_at(store: Path, rev: str, path: str) -> str | None:
    done = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{rev}:{path}"],
                          cwd=store, capture_output=True, text=True, check=False)
    return done.stdout.strip() or None


def run_while_writing(env: dict[str, str], store: Path, writer: Writer) -> dict[str, Any]:
    """``sleep run`` once the writer is going; returned once two more writes landed
    after it, so main has certainly moved past the run's base."""
    writer.wait_for(1)
    code, report = cli(env, store, "sleep", "run")
    assert code == 0, report
    # How many writes fell inside the run depends on how long it took; two more after
    # it are certain to have moved main past the run's base.
    writer.wait_for(writer.count() + 2)
    return report


def every_write_once(store: Path, acks: list[dict[str, Any]]) -> None:
    failed = [a for a in acks if "failed" in a]
    assert failed == [], failed
    texts = memory_texts(store, "main")
    for ack in acks:
        holders = [p for p, text in texts.items() if str(ack["claim"]) in text
                   and not p.startswith("memhtml-site/")
                   and not p.endswith("/index.html") and p != "index.html"]
        assert holders == [ack["path"]], (ack, holders)
        ancestor = subprocess.run(["git", "merge-base", "--is-ancestor", str(ack["commit"]),
                                   "main"], cwd=store, check=False)
        assert ancestor.returncode == 0, f"{ack['commit']} is not in main's history"


def test_a_run_lands_while_a_writer_commits_every_second(
        store: Path, env: dict[str, str], writer: Writer) -> None:
    report = run_while_writing(env, store, writer)
    base, tip = report["base_sha"], report["head_sha"]
    code, merged = cli(env, store, "sleep", "merge", report["run_id"])
    assert code == 0 and merged["merged"], merged
    assert not merged["fast_forwarded"] and merged["merge_commit"], merged
    assert 1 <= merged["attempts"] <= MERGE_ATTEMPTS, merged
    assert git(store, "rev-parse", f"{merged['merge_commit']}^2").strip() == tip
    writer.wait_for(writer.count() + 1)  # writes go on landing after the merge
    acks = writer.stop()
    assert len(acks) >= 4
    every_write_once(store, acks)
    # The run's changes are all there, as the run left them.
    changed = git(store, "diff", "--name-only", base, tip).split()
    assert changed
    assert [p for p in changed if blob_at(store, "main", p) != blob_at(store, tip, p)] == []
    assert git(store, "status", "--porcelain") == "", "the checkout followed every write"
    code, status = cli(env, store, "sleep", "status", report["run_id"])
    assert code == 0 and status["runs"][0]["state"] == "merged", status


def test_a_writers_edit_of_a_file_the_run_changed_is_named(
        store: Path, env: dict[str, str], writer: Writer) -> None:
    report = run_while_writing(env, store, writer)
    code, review = cli(env, store, "sleep", "review", report["run_id"])
    assert code == 0
    changed = sorted(f["path"] for f in review["files"]
                     if f["change"] in ("meta-only", "body-changed")
                     and f["path"].startswith("areas/"))
    assert changed, review["files"]
    code, labelled = cli(env, store, "label", changed[0], "team:writers")
    assert code == 0, labelled
    code, refused = cli(env, store, "sleep", "merge", report["run_id"])
    assert code == 1 and refused["refusal"] == "conflict", refused
    assert refused["code"] == "ERR_MERGE_CONFLICT"
    assert refused["conflicts"] == [changed[0]] and changed[0] in refused["error"]
    acks = writer.stop()
    every_write_once(store, acks)
    assert git(store, "log", "--format=%H", "--grep", "Memhtml-Op: sleep-merge",
               "main") == "", "nothing of the run landed"
    assert git(store, "rev-parse", f"sleep/{report['run_id']}").strip() == \
        report["head_sha"], "the run's branch is as it was"
    assert git(store, "status", "--porcelain") == ""
