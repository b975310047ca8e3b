"""A person's own git after a sleep merge stays: ``git revert`` of a merged run's commit
or of a replay's merge commit, ``git rm`` of a memory the run changed, ``git mv`` of
one it archived. The next memhtml commands (status, write, search) keep every one of
them and say so; none is taken for a commit made from a stale index. A real race still
is: a person's ``git commit -a`` in the moment a write or a merge has moved the branch
and the checkout has not followed yet commits an index from before it, and the next
command writes the write back.

Everything runs through the ``memhtml`` command line (called in this process, as the
CLI tests do) and the real git, on a store built with ``memhtml write`` and a run made
with ``memhtml sleep run``.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memhtml.adapters.git import PygitService
from memhtml.cli.app import app
from tests.integration.store.checkout_support import (
    PERSON,
    clean_environment,
    git,
    porcelain,
    tree,
)

pytestmark = pytest.mark.slow

TWINS = ("areas/inbox/deploy-day.html", "areas/inbox/deploy-day-again.html")
"""Two memories with one claim: the run folds one into the other (which one is the
keeper's rule, not this test's)."""
LADDER = "areas/inbox/ladder.html"
KETTLE = "areas/inbox/kettle.html"
TWICE = "Deploys to checkout-api happen on Tuesdays."
FILLER = 14
"""Other memories, so the run's one fold is a small share of the live set."""


class Ran:
    """One command's exit code and output."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.stdout, self.stderr = code, out, err

    def json(self) -> Any:
        return json.loads(self.stdout)


def _cli(root: Path, *tokens: str) -> Ran:
    """The command line, run in this process (the app called with its tokens, as the CLI
    tests do: the same parsing, doors and output as ``python -m memhtml``, without an
    interpreter start-up per call). The environment is the test's clean one."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = app([*tokens, "--store", str(root)], result_action="return_value")
    return Ran(code, out.getvalue(), err.getvalue())


def _ok(root: Path, *tokens: str) -> Ran:
    done = _cli(root, *tokens)
    assert done.code == 0, (tokens, done.stdout, done.stderr)
    return done


def _head(root: Path, env: dict[str, str]) -> str:
    return git(root, env, "rev-parse", "HEAD").stdout.strip()


def _log(root: Path, env: dict[str, str]) -> str:
    return git(root, env, "log", "-6", "--format=%h %s").stdout


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with a run made and not merged: two memories with one claim (folded),
    a link to a memory the person deleted (dropped by integrity), and filler."""
    where = tmp_path_factory.mktemp("undo-after-sleep")
    root = where / "store"
    root.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        env = clean_environment(patch, where / "home")
        git(root, env, "init", "-q", "-b", "main")
        _ok(root, "init")
        _ok(root, "write", "--title", "Deploy day", "--claim", TWICE, "--path", TWINS[0])
        _ok(root, "write", "--title", "Deploy day again", "--claim", TWICE, "--path", TWINS[1],
            "--allow-duplicate")
        _ok(root, "write", "--title", "Kettle", "--claim", "The kettle is descaled on Mondays.",
            "--path", KETTLE)
        _ok(root, "write", "--title", "Ladder", "--claim", "The ladder is in the shed.",
            "--link", f"relates_to=/{KETTLE}", "--path", LADDER)
        for n in range(FILLER):
            _ok(root, "write", "--title", f"Room {n}",
                "--claim", f"Meeting room {n} seats {n + 4} people on floor {n % 3}.")
        git(root, env, "rm", "-q", "--", KETTLE)
        git(root, env, *PERSON, "commit", "-q", "-m", "no more kettle notes")
        ran = _ok(root, "sleep", "run", "--phase", "dedup-merge", "--phase", "integrity",
                  "--json").json()
        assert ran["ok"], ran
    return root


@pytest.fixture
def store(made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
          ) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "store"
    shutil.copytree(made, root, symlinks=True)
    return root, clean_environment(monkeypatch, tmp_path / "home")


class Merged:
    """main's tip before the merge, the memory the run folded, the one that kept it, and
    the folded one's archive copy."""

    def __init__(self, before: str, folded: str, keeper: str, copy: str) -> None:
        self.before, self.folded, self.keeper, self.copy = before, folded, keeper, copy


def _merge(root: Path, env: dict[str, str], *, replay: bool = False) -> Merged:
    """Merge the run (a replay when ``replay``: main moves first)."""
    if replay:
        _ok(root, "write", "--title", "Main moved", "--claim", "Main moved on.")
    before = _head(root, env)
    merged = _ok(root, "sleep", "merge", "--json").json()
    assert merged["merged"], merged
    assert (merged.get("merge_commit") is not None) is replay, merged
    now = tree(root, env)
    (folded,) = [p for p in TWINS if p not in now]
    (keeper,) = [p for p in TWINS if p in now]
    (copy,) = [p for p in now if p.startswith("archive/") and p.endswith("/" + folded)]
    assert LADDER in now
    return Merged(before, folded, keeper, copy)


def _kept_by_next_commands(root: Path, env: dict[str, str], undone: dict[str, str],
                           undoer: str) -> str:
    """status, write, search: none changes what the person did; the note from status."""
    status = _ok(root, "status")
    assert tree(root, env) == undone, _log(root, env)
    assert _head(root, env) == undoer
    wrote = _ok(root, "write", "--title", "After", "--claim", "Written after the undo.",
                "--json").json()
    after = tree(root, env)
    assert {p: e for p, e in after.items() if p not in wrote["paths"]} == undone, _log(root, env)
    _ok(root, "search", "deploys tuesdays")
    assert tree(root, env) == after
    assert "rewrite-stale" not in git(root, env, "log", "--format=%s").stdout
    assert porcelain(root, env) == []
    return status.stderr


def test_a_revert_of_a_merged_runs_commit_is_kept(store: tuple[Path, dict[str, str]]) -> None:
    root, env = store
    merged = _merge(root, env)
    fold = git(root, env, "log", "--format=%H", "--grep", "^Memhtml-Phase: dedup-merge$",
               f"{merged.before}..HEAD").stdout.split()
    assert len(fold) == 1
    git(root, env, *PERSON, "revert", "--no-edit", fold[0])
    reverted = _head(root, env)
    assert merged.folded in tree(root, env)

    note = _kept_by_next_commands(root, env, tree(root, env), reverted)
    assert f"that your commit {reverted[:10]}" in note and merged.folded in note, note
    hits = _ok(root, "search", "deploys tuesdays", "--json").json()
    assert merged.folded in [hit["path"] for hit in hits["hits"]]


def test_a_revert_of_a_replays_merge_commit_is_kept(store: tuple[Path, dict[str, str]]) -> None:
    root, env = store
    merged = _merge(root, env, replay=True)
    git(root, env, *PERSON, "revert", "--no-edit", "-m", "1", "HEAD")
    reverted = _head(root, env)
    assert merged.folded in tree(root, env)
    note = _kept_by_next_commands(root, env, tree(root, env), reverted)
    assert "kept" in note and merged.folded in note, note


@pytest.mark.parametrize("replay", [False, True], ids=["fast-forward", "replay"])
def test_a_git_rm_of_memories_the_run_changed_is_kept(
        store: tuple[Path, dict[str, str]], replay: bool) -> None:
    root, env = store
    merged = _merge(root, env, replay=replay)
    git(root, env, "rm", "-q", "--", LADDER, merged.keeper, merged.copy)
    git(root, env, *PERSON, "commit", "-q", "-m", "I do not want these")
    removed = _head(root, env)
    _kept_by_next_commands(root, env, tree(root, env), removed)
    assert not {LADDER, merged.keeper, merged.copy} & set(tree(root, env))


@pytest.mark.parametrize("replay", [False, True], ids=["fast-forward", "replay"])
def test_a_git_mv_of_what_the_run_archived_is_kept(
        store: tuple[Path, dict[str, str]], replay: bool) -> None:
    root, env = store
    merged = _merge(root, env, replay=replay)
    git(root, env, "mv", merged.copy, "areas/inbox/deploy-day-kept.html")
    git(root, env, *PERSON, "commit", "-q", "-m", "keep it, under another name")
    moved = _head(root, env)
    _kept_by_next_commands(root, env, tree(root, env), moved)
    assert "areas/inbox/deploy-day-kept.html" in tree(root, env)


def _in_the_window(monkeypatch: pytest.MonkeyPatch, root: Path, env: dict[str, str],
                   *names: str) -> None:
    """A person's ``git commit -a`` the moment the branch has moved (the write's commit,
    or the merge's move of main) and before the checkout follows: their git commits the
    index it read, from before the write. Hooked into memhtml's own git calls (``names``)
    so the interleaving is certain; the person's git is the real one."""
    fired: list[bool] = []

    def person() -> None:
        if not fired:
            fired.append(True)
            git(root, env, *PERSON, "commit", "-a", "-q", "-m",
                "the person's commit -a, in the window")

    def hooked(real: Callable[..., object]) -> Callable[..., object]:
        def call(self: PygitService, *args: object, **kwargs: object) -> object:
            done = real(self, *args, **kwargs)
            person()
            return done

        return call

    for name in names:
        monkeypatch.setattr(PygitService, name, hooked(getattr(PygitService, name)))


@pytest.mark.parametrize("door", ["write", "label", "archive"])
def test_a_commit_a_from_an_index_before_the_write_is_written_back(
        store: tuple[Path, dict[str, str]], door: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, env = store
    (root / "notes").mkdir()
    (root / "notes" / "mine.txt").write_text("first\n", encoding="utf-8")
    git(root, env, "add", "notes/mine.txt")
    git(root, env, *PERSON, "commit", "-q", "-m", "my notes")
    (root / "notes" / "mine.txt").write_text("second, not staged\n", encoding="utf-8")
    before = tree(root, env)
    tokens = {"write": ("write", "--title", "Gate", "--claim", "The gate sticks.",
                        "--path", "areas/inbox/gate.html"),
              "label": ("label", LADDER, "person:ines-marechal"),
              "archive": ("archive", LADDER)}[door]
    with monkeypatch.context() as patch:
        _in_the_window(patch, root, env, "commit")
        _ok(root, *tokens)
    _ok(root, "status")

    after = tree(root, env)
    log = _log(root, env)
    assert "the person's commit -a, in the window" in log
    assert after["notes/mine.txt"] != before["notes/mine.txt"], "the person's edit is in"
    if door == "write":
        assert "areas/inbox/gate.html" in after, log
    elif door == "label":
        assert "person:ines-marechal" in (root / LADDER).read_text(encoding="utf-8"), log
        assert after[LADDER] != before[LADDER], log
    else:
        assert LADDER not in after and any(p.endswith("/" + LADDER) for p in after), log
    assert porcelain(root, env) == []


def test_a_commit_a_in_the_merges_window_is_written_back(
        store: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    root, env = store
    (root / "notes").mkdir()
    (root / "notes" / "mine.txt").write_text("first\n", encoding="utf-8")
    git(root, env, "add", "notes/mine.txt")
    git(root, env, *PERSON, "commit", "-q", "-m", "my notes")
    (root / "notes" / "mine.txt").write_text("second, not staged\n", encoding="utf-8")
    with monkeypatch.context() as patch:
        _in_the_window(patch, root, env, "move_ref", "commit_merge")
        _ok(root, "sleep", "merge")
    _ok(root, "status")
    after = tree(root, env)
    (folded,) = [p for p in TWINS if p not in after]
    assert any(p.startswith("archive/") and p.endswith("/" + folded) for p in after), _log(
        root, env)
    assert "relates_to" not in (root / LADDER).read_text(encoding="utf-8")
    assert "rewrite-stale" in git(root, env, "log", "-1", "--format=%s").stdout
    assert (root / "notes" / "mine.txt").read_text(encoding="utf-8") == "second, not staged\n"
    assert porcelain(root, env) == []
