"""Two clones of one store, each writing and publishing, pulling each other.

Generated pages are marked ``merge=memhtml-generated`` in ``.gitattributes``, which
needs that merge driver in git's config, and ``git clone`` never copies config. Every
memhtml command that opens a checkout defines the driver when no level of git's
config does, so two clones that both published merge without a conflict, and
``doctor`` is clean once they republish. A clone where no memhtml command ran yet
does conflict; ``doctor`` there names the merge in progress and each conflicted
path, never "no findings". Everything runs as a person would: ``git clone``,
``git fetch``, ``git merge`` and the ``memhtml`` command, each its own process.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.clock import SystemClock
from memhtml.adapters.git import PygitService
from memhtml.adapters.journal_files import JournalFiles
from memhtml.contracts.services import Signature
from memhtml.store import Store, StoreDeps, doctor
from memhtml.store.merge_driver import DRIVER_COMMAND, DRIVER_KEY
from tests.integration.store.checkout_support import (
    PERSON,
    clean_environment,
    git,
    memhtml,
    porcelain,
)


def run(env: dict[str, str], root: Path, *tokens: str) -> Any:
    """A memhtml command that must succeed; its JSON answer."""
    done = memhtml(env, *tokens, "--store", str(root), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def answer_of(env: dict[str, str], root: Path, *tokens: str) -> tuple[int, Any]:
    done = memhtml(env, *tokens, "--store", str(root), "--json")
    return done.returncode, json.loads(done.stdout)


def driver(root: Path, env: dict[str, str]) -> str | None:
    found = git(root, env, "config", "--get", DRIVER_KEY, check=False)
    return found.stdout.strip() if found.returncode == 0 else None


def merge(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The second half of ``git pull`` (after a ``git fetch``), so both clones can
    fetch before either merges."""
    return git(root, env, *PERSON, "merge", "--no-edit", "FETCH_HEAD", check=False)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One clean home for the module's tests: nothing writes there, so their commands
    share one warm interpreter (``warm_cli``)."""
    return tmp_path_factory.mktemp("home")


@pytest.fixture
def scene(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
          ) -> tuple[dict[str, str], Path, Path, Path]:
    """A store and two clones of it, each with a memory of its own, published."""
    env = clean_environment(monkeypatch, home)
    origin = tmp_path / "origin"
    done = memhtml(env, "init", str(origin))
    assert done.returncode == 0, done.stderr
    ada, bob = tmp_path / "ada", tmp_path / "bob"
    for clone in (ada, bob):
        git(tmp_path, env, "clone", "-q", str(origin), str(clone))
        # git clone copies no config: the driver is not there until memhtml runs.
        assert driver(clone, env) is None
    run(env, ada, "write", "--title", "Alpha", "--claim", "Alpha ships on Mondays.")
    run(env, ada, "publish")
    run(env, bob, "write", "--title", "Beta", "--claim", "Beta ships on Thursdays.")
    run(env, bob, "publish")
    return env, origin, ada, bob


def test_both_clones_pull_each_other_without_a_conflict_and_doctor_is_clean(
        scene: tuple[dict[str, str], Path, Path, Path]) -> None:
    env, _, ada, bob = scene
    assert driver(ada, env) == DRIVER_COMMAND and driver(bob, env) == DRIVER_COMMAND

    # Each fetches the other before either merges: two real three-way merges, both
    # sides having changed the same listing pages and sitemap.
    git(ada, env, "fetch", "-q", str(bob), "HEAD")
    git(bob, env, "fetch", "-q", str(ada), "HEAD")
    for clone in (ada, bob):
        merged = merge(clone, env)
        assert merged.returncode == 0, merged.stdout + merged.stderr
        assert "CONFLICT" not in merged.stdout
        assert porcelain(clone, env) == []

    # The merge kept this side's pages: behind until the next publish, which is all
    # doctor advises (advice, so it exits 0).
    code, found = answer_of(env, ada, "doctor")
    assert code == 0
    assert {(f["kind"], f["severity"]) for f in found["findings"]} == {("artifact", "advice")}
    for clone in (ada, bob):
        run(env, clone, "publish")
        code, found = answer_of(env, clone, "doctor")
        assert (code, found) == (0, {"ok": True, "errors": 0, "advice": 0, "findings": []})

    # And again: both republished, each pulls the other once more.
    git(ada, env, "fetch", "-q", str(bob), "HEAD")
    git(bob, env, "fetch", "-q", str(ada), "HEAD")
    for clone in (ada, bob):
        merged = merge(clone, env)
        assert merged.returncode == 0, merged.stdout + merged.stderr
        code, found = answer_of(env, clone, "doctor")
        assert (code, found) == (0, {"ok": True, "errors": 0, "advice": 0, "findings": []})
        status = run(env, clone, "status")
        assert status["memories"] == 2
        assert status["uncommitted"] == [] and status["in_progress"] is None
    assert git(ada, env, "rev-parse", "HEAD^{tree}").stdout == \
        git(bob, env, "rev-parse", "HEAD^{tree}").stdout


def test_a_clone_without_the_driver_conflicts_and_doctor_says_so(
        scene: tuple[dict[str, str], Path, Path, Path], tmp_path: Path) -> None:
    env, _, ada, bob = scene
    # A fresh clone of ada where no memhtml command has run: no merge driver.
    cara = tmp_path / "cara"
    git(tmp_path, env, "clone", "-q", str(ada), str(cara))
    assert driver(cara, env) is None
    git(cara, env, "fetch", "-q", str(bob), "HEAD")
    merged = merge(cara, env)
    assert merged.returncode == 1
    conflicted = sorted(line[3:] for line in porcelain(cara, env) if line.startswith("AA"))
    assert "sitemap.xml" in conflicted

    code, found = answer_of(env, cara, "doctor")
    assert code == 1 and found["ok"] is False
    kinds = {(f["kind"], f["path"]) for f in found["findings"]}
    assert ("in-progress", ".git/MERGE_HEAD") in kinds
    assert {path for kind, path in kinds if kind == "unmerged"} == set(conflicted)
    busy = next(f for f in found["findings"] if f["kind"] == "in-progress")
    assert "git merge --abort" in busy["message"]

    status = run(env, cara, "status")
    assert status["in_progress"] == "merge"

    # A door refuses while the merge waits, and commits nothing.
    tip = git(cara, env, "rev-parse", "HEAD").stdout
    code, refused = answer_of(env, cara, "write", "--title", "Gamma", "--claim",
                              "Gamma ships on Fridays.")
    assert code == 1
    assert refused.get("code") == "ERR_MERGE_IN_PROGRESS", refused
    assert "git merge --abort" in refused["error"]
    assert git(cara, env, "rev-parse", "HEAD").stdout == tip

    # The commands that ran defined the driver, so the same merge now goes through.
    assert driver(cara, env) == DRIVER_COMMAND
    git(cara, env, "merge", "--abort")
    merged = merge(cara, env)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    run(env, cara, "publish")
    code, found = answer_of(env, cara, "doctor")
    assert (code, found) == (0, {"ok": True, "errors": 0, "advice": 0, "findings": []})


def test_doctor_reports_a_clone_without_the_merge_driver_until_a_command_defines_it(
        scene: tuple[dict[str, str], Path, Path, Path], tmp_path: Path) -> None:
    env, _, ada, _ = scene
    cara = tmp_path / "cara"
    git(tmp_path, env, "clone", "-q", str(ada), str(cara))
    branch = git(cara, env, "rev-parse", "--abbrev-ref", "HEAD").stdout.strip()

    # The library's doctor, opened without the CLI (which would define the driver
    # first): the finding a checkout still missing it gets.
    opened = PygitService.open(cara / ".git")
    assert is_successful(opened)
    deps = StoreDeps(git=unsafe_perform_io(opened.unwrap()), clock=SystemClock(),
                     author=Signature("Person", "person@example.org"), branch=branch,
                     worktree=cara, journals=JournalFiles(cara / ".git"))
    found = doctor(Store(deps))
    assert is_successful(found)
    missing = [f for f in unsafe_perform_io(found.unwrap()) if f.kind == "merge-driver"]
    assert [(f.path, "memhtml doctor --fix" in f.message) for f in missing] == [
        (".git/config", True)]

    code, answer = answer_of(env, cara, "doctor", "--fix")
    assert (code, answer) == (0, {"ok": True, "errors": 0, "advice": 0, "findings": []})
    assert driver(cara, env) == DRIVER_COMMAND
    after = doctor(Store(deps))
    assert [f for f in unsafe_perform_io(after.unwrap()) if f.kind == "merge-driver"] == []
