"""A merge killed around its fast-forward: the next command finishes the checkout (or
drops the mark of a fast-forward that never happened), so a person's next ``git
commit`` never reverts a merged run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memhtml.adapters.journal_files import JournalFiles
from memhtml.compose import value_of
from memhtml.sleep import merge as merge_module
from memhtml.sleep.merge import merge_run
from memhtml.sleep.runner import run_sleep
from memhtml.store import finish_checkout
from tests.integration.sleep.sleep_support import RUN_ID, build_sleep_demo, dangle, deps_at, git_cli


class Killed(BaseException):
    pass


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo") / "store"
    build_sleep_demo(root)
    dangle(root)
    return root


@pytest.fixture
def store(demo: Path, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(demo, root, symlinks=True)
    return root


def test_killed_after_the_fast_forward_the_next_command_syncs_the_checkout(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = value_of(run_sleep(deps_at(store)))

    def die(*_: object) -> object:
        raise Killed

    monkeypatch.setattr(merge_module, "_follow", die)
    with pytest.raises(Killed):
        merge_run(deps_at(store), RUN_ID)
    assert git_cli(store, "rev-parse", "main").strip() == report.head_sha
    assert git_cli(store, "status", "--porcelain") != "", "the checkout is behind"
    assert JournalFiles(store / ".git").read_all()
    monkeypatch.undo()
    done = value_of(finish_checkout(deps_at(store).main_deps()))
    assert done.synced
    assert git_cli(store, "status", "--porcelain") == ""
    # A person's commit -a now reverts nothing.
    git_cli(store, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-a",
            "--allow-empty", "-m", "mine")
    assert git_cli(store, "diff", "--stat", report.head_sha, "HEAD") == ""


def test_killed_before_the_fast_forward_the_mark_is_dropped(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    value_of(run_sleep(deps_at(store)))
    main = git_cli(store, "rev-parse", "main").strip()
    deps = deps_at(store)

    def die(*_: object) -> object:
        raise Killed

    monkeypatch.setattr(type(deps.git), "move_ref", die)
    with pytest.raises(Killed):
        merge_run(deps, RUN_ID)
    monkeypatch.undo()
    assert JournalFiles(store / ".git").read_all()
    value_of(finish_checkout(deps_at(store).main_deps()))
    assert JournalFiles(store / ".git").read_all() == ()
    assert git_cli(store, "rev-parse", "main").strip() == main
    assert git_cli(store, "status", "--porcelain") == ""
    assert value_of(merge_run(deps_at(store), RUN_ID)).merged
