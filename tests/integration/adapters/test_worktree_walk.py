"""``worktree_changes_begun`` runs git itself beside the caller; what it lists must be
what libgit2's ``worktree_changes`` lists, on any checkout a person leaves behind:
edits, deletions, new files in old and new folders, staged and unstaged, mode changes,
ignored files, names with spaces, quotes and non-ASCII letters.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memhtml.adapters.git import PygitService
from memhtml.adapters.git_worktree import status_finished, status_started
from tests.integration.store.store_support import ok

NAMES = st.sampled_from(["a.html", "b c.html", "é.html", 'q"uote.html', "日本.html",
                         "x.txt", "-dash.html"])
FOLDERS = st.sampled_from(["", "areas/", "areas/deep/", "new folder/", "ü/"])
STEPS = st.lists(st.tuples(
    st.sampled_from(["edit", "delete", "new", "stage-new", "stage-edit", "chmod",
                     "ignored", "restore"]),
    FOLDERS, NAMES), max_size=8)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=P", "-c",
                    "user.email=p@example.org", *args], check=True, capture_output=True)


def _checkout(root: Path) -> PygitService:
    service: PygitService = ok(PygitService.init(root))
    for folder in ("", "areas/", "areas/deep/"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name in ("a.html", "b c.html", "é.html"):
            (root / folder / name).write_text(f"{folder}{name}\n", encoding="utf-8")
    (root / ".gitignore").write_text("*.ignored\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "files")
    return service


def _apply(root: Path, step: str, folder: str, name: str) -> None:
    path = root / folder / name
    if step == "ignored":
        path = path.with_suffix(".ignored")
    if step in ("new", "stage-new", "ignored"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("new\n", encoding="utf-8")
    elif not path.is_file():
        return
    if step in ("edit", "stage-edit"):
        path.write_text("changed\n", encoding="utf-8")
    elif step == "delete":
        path.unlink()
    elif step == "chmod":
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    elif step == "restore":
        _git(root, "checkout", "-q", "HEAD", "--", str(path.relative_to(root)))
    if step.startswith("stage-"):
        _git(root, "add", "--", str(path.relative_to(root)))


@settings(max_examples=25, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(STEPS)
def test_git_lists_what_libgit2_lists(tmp_path_factory: pytest.TempPathFactory,
                                      steps: list[tuple[str, str, str]]) -> None:
    root = tmp_path_factory.mktemp("walk") / "checkout"
    service = _checkout(root)
    for step in steps:
        _apply(root, *step)
    expected = ok(service.worktree_changes())
    walk = status_started(root / ".git", root)
    assert walk is not None
    assert status_finished(walk) == expected  # git's own listing, not the fallback
    assert ok(service.worktree_changes_begun()()) == expected


def test_without_git_libgit2_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "checkout"
    service = _checkout(root)
    (root / "areas" / "a.html").write_text("changed\n")
    (root / "fresh.html").write_text("new\n")
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    assert status_started(root / ".git", root) is None
    assert ok(service.worktree_changes_begun()()) == ("areas/a.html", "fresh.html")


def test_a_failing_git_falls_back_to_libgit2(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "checkout"
    service = _checkout(root)
    (root / "areas" / "a.html").write_text("changed\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text("#!/bin/sh\necho 'not what status prints'\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert ok(service.worktree_changes_begun()()) == ("areas/a.html",)
    fake.write_text("#!/bin/sh\nexit 128\n")
    assert ok(service.worktree_changes_begun()()) == ("areas/a.html",)


def test_variables_naming_another_repository_are_ignored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, other = tmp_path / "checkout", tmp_path / "other"
    service = _checkout(root)
    _checkout(other)
    (other / "only-there.html").write_text("new\n")
    (root / "only-here.html").write_text("new\n")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    assert ok(service.worktree_changes_begun()()) == ("only-here.html",)


def test_a_bare_repository_lists_nothing(tmp_path: Path) -> None:
    service: PygitService = ok(PygitService.init(tmp_path / "bare", bare=True))
    assert ok(service.worktree_changes_begun()()) == ()


ASKED = st.lists(st.builds(lambda folder, name: folder + name, FOLDERS, NAMES), max_size=6)


@settings(max_examples=25, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(STEPS, ASKED)
def test_index_entries_of_some_paths_are_those_of_the_whole_index(
        tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, str, str]],
        asked: list[str]) -> None:
    root = tmp_path_factory.mktemp("index") / "checkout"
    service = _checkout(root)
    for step in steps:
        _apply(root, *step)
    whole = ok(service.index_entries())
    asked += ["areas", "areas/deep/", "", "no/such.html"]
    assert dict(ok(service.index_entries(asked))) == {
        p: whole[p] for p in asked if p in whole}


def _marked(tmp_path: Path) -> tuple[Path, PygitService, Path]:
    """A checkout whose committed .gitattributes hands every .html file to a filter
    driver named "m=1" (a name ``-c`` could not switch off), a stat-dirty file and an
    edited one, and the file a planted program would create."""
    root = tmp_path / "checkout"
    service = _checkout(root)
    (root / ".gitattributes").write_text("*.html filter=m=1\n")
    _git(root, "add", ".gitattributes")
    _git(root, "commit", "-q", "-m", "attributes")
    (root / "areas" / "a.html").write_text("changed\n")
    os.utime(root / "a.html", (1, 1))  # stat-dirty: git must read (and filter) it
    return root, service, tmp_path / "ran"


def _program(mark: Path) -> str:
    return f"sh -c \"touch '{mark}'; cat\""


def _repo_config(root: Path, mark: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _git(root, "config", "filter.m=1.clean", _program(mark))


def _fsmonitor(root: Path, mark: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hook = mark.with_name("hook.sh")
    hook.write_text(f"#!/bin/sh\ntouch '{mark}'\nexit 1\n")
    hook.chmod(0o755)
    _git(root, "config", "core.fsmonitor", str(hook))


def _included(root: Path, mark: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extra = mark.with_name("extra.config")
    subprocess.run(["git", "config", "-f", str(extra), "filter.m=1.clean", _program(mark)],
                   check=True)
    _git(root, "config", "include.path", str(extra))


def _environment(root: Path, mark: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "filter.m=1.clean")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", _program(mark))


@pytest.mark.parametrize("plant", [_repo_config, _fsmonitor, _included, _environment])
def test_no_program_git_is_configured_to_run_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        plant: Callable[[Path, Path, pytest.MonkeyPatch], None]) -> None:
    """A filter driver a committed .gitattributes assigns, or an fsmonitor hook, named
    by the repository's config, an include git alone follows, or the environment:
    git's own status runs it, the walk never does, and its listing is libgit2's."""
    root, service, mark = _marked(tmp_path)
    plant(root, mark, monkeypatch)
    expected = ok(service.worktree_changes())
    assert ok(service.worktree_changes_begun()()) == expected == ("areas/a.html",)
    assert not mark.exists()
    subprocess.run(["git", "-C", str(root), "status", "--porcelain"], check=True,
                   capture_output=True)
    assert mark.exists()  # the planted program is live: git itself runs it


def test_a_case_folding_checkout_is_listed_by_libgit2(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    service = _checkout(root)
    _git(root, "config", "core.ignorecase", "true")
    (root / "NEW.HTML").write_text("new\n")
    assert ok(service.worktree_changes_begun()()) == ok(service.worktree_changes()) == (
        "NEW.HTML",)
