"""A person who undoes a memhtml write with git keeps it undone; only a commit made from
an index that predated the write is written back.

The recovery step that runs before every command (``finish_checkout``) writes back a
write that a commit from a stale index put back, and only that: the write never
reached the person's index, or the checkout still shows it on disk over an index as
the commit left it. ``git revert``, ``git rm``, ``git mv`` and ``git checkout <rev> --
path`` change the files with the index, so they are the person's, and stay; the next
command says it kept them. A stale commit whose written file the person then cleared
away (``git stash -u``, ``git clean``) reads as chosen too: the write is still in the
history, and ``git revert`` of that commit brings it back.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.integration.store.checkout_support import (
    PERSON,
    clean_env,
    git,
    memhtml,
    porcelain,
    tree,
)

KETTLE = "areas/inbox/wrong-kettle-note.html"
LADDER = "areas/inbox/ladder.html"
Copy = tuple[Path, dict[str, str], str]
"""A test's own store: its root, the environment and the written memory's path."""


@pytest.fixture(scope="module")
def one_write(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A store with one memory written through the command, made once per module, and
    the clean environment every test of the module runs in (its home is written by
    nothing, so the tests' commands share one warm interpreter)."""
    base = tmp_path_factory.mktemp("one-write")
    root, env = base / "store", clean_env(base / "home")
    root.mkdir()
    git(root, env, "init", "-q", "-b", "main")
    made = memhtml(env, "init", "--store", str(root))
    assert made.returncode == 0, made.stderr
    wrote = memhtml(env, "write", "--title", "Wrong kettle note",
                    "--claim", "The kettle is descaled on Fridays.",
                    "--path", KETTLE, "--store", str(root))
    assert wrote.returncode == 0, wrote.stderr
    return root, env


@pytest.fixture
def store(one_write: tuple[Path, dict[str, str]], tmp_path: Path) -> Copy:
    """A copy of ``one_write``'s store for this test; its root, env and the path."""
    root = tmp_path / "store"
    shutil.copytree(one_write[0], root, symlinks=True)
    return root, one_write[1], KETTLE


def _after_next_command(root: Path, env: dict[str, str]) -> dict[str, str]:
    """The branch's tree once a read-only command has run in the store."""
    status = memhtml(env, "status", "--store", str(root))
    assert status.returncode == 0, status.stderr
    return tree(root, env)


def _head(root: Path, env: dict[str, str]) -> str:
    return git(root, env, "rev-parse", "HEAD").stdout.strip()


def _log(root: Path, env: dict[str, str]) -> str:
    return git(root, env, "log", "-4", "--format=%h %s").stdout


def test_a_git_revert_of_a_write_is_not_written_back(store: Copy) -> None:
    root, env, path = store
    git(root, env, *PERSON, "revert", "--no-edit", "HEAD")
    reverted = _head(root, env)
    assert path not in tree(root, env)

    assert path not in _after_next_command(root, env), (
        "the person's git revert was undone by the next memhtml command: " + _log(root, env))
    assert _head(root, env) == reverted
    assert porcelain(root, env) == []


def _note(root: Path, env: dict[str, str]) -> str:
    """What the next command says on stderr, its tree checked to be unchanged."""
    status = memhtml(env, "status", "--store", str(root))
    assert status.returncode == 0, status.stderr
    return status.stderr


def test_a_git_rm_of_a_write_is_kept_and_said(store: Copy) -> None:
    root, env, path = store
    git(root, env, "rm", "-q", "--", path)
    git(root, env, *PERSON, "commit", "-q", "-m", "drop the wrong kettle note")
    removed = _head(root, env)

    note = _note(root, env)
    assert path not in tree(root, env), _log(root, env)
    assert _head(root, env) == removed
    assert f"kept 1 path(s) that your commit {removed[:10]}" in note and path in note, note
    assert _note(root, env) == "", "said once"
    assert porcelain(root, env) == []
    # The memory is not lost: the deleted-memory door brings it back.
    back = memhtml(env, "restore", path, "--store", str(root))
    assert back.returncode == 0, back.stderr
    assert path in tree(root, env)


def test_a_label_checked_out_back_by_hand_is_kept(store: Copy) -> None:
    root, env, path = store
    before = tree(root, env)[path]
    labelled = memhtml(env, "label", path, "person:ines-marechal", "--store", str(root))
    assert labelled.returncode == 0, labelled.stderr
    git(root, env, "checkout", "HEAD~1", "--", path)
    git(root, env, *PERSON, "commit", "-q", "-m", "no label on this one")

    assert _after_next_command(root, env)[path] == before, _log(root, env)
    assert porcelain(root, env) == []


def test_a_git_mv_of_a_write_is_kept(store: Copy) -> None:
    root, env, path = store
    elsewhere = "areas/kitchen/kettle.html"
    (root / "areas" / "kitchen").mkdir(parents=True)
    git(root, env, "mv", path, elsewhere)
    git(root, env, *PERSON, "commit", "-q", "-m", "the kettle lives in the kitchen")
    moved = _head(root, env)

    after = _after_next_command(root, env)
    assert path not in after and elsewhere in after, _log(root, env)
    assert _head(root, env) == moved
    wrote = memhtml(env, "write", "--title", "Toaster", "--claim", "The toaster is new.",
                    "--store", str(root))
    assert wrote.returncode == 0, wrote.stderr
    assert path not in tree(root, env) and elsewhere in tree(root, env), _log(root, env)
    assert porcelain(root, env) == []


def test_an_index_only_undo_that_leaves_the_write_on_disk_reads_as_stale(
        store: Copy) -> None:
    """``git rm --cached`` leaves the written file on disk, untracked: exactly what a
    commit of an index read before the write leaves. Written back (the documented
    limit of the proof)."""
    root, env, path = store
    git(root, env, "rm", "-q", "--cached", "--", path)
    git(root, env, *PERSON, "commit", "-q", "-m", "untrack it")
    assert path in _after_next_command(root, env), _log(root, env)
    assert porcelain(root, env) == []


def test_a_revert_stays_with_the_branch_not_checked_out(store: Copy) -> None:
    root, env, path = store
    git(root, env, *PERSON, "revert", "--no-edit", "HEAD")
    reverted = git(root, env, "rev-parse", "refs/heads/main").stdout.strip()
    git(root, env, "checkout", "-q", "--detach", "HEAD~1")

    _after_next_command(root, env)
    assert path not in tree(root, env, "refs/heads/main"), _log(root, env)
    assert git(root, env, "rev-parse", "refs/heads/main").stdout.strip() == reverted


def test_a_revert_of_a_correction_keeps_both_paths_undone(store: Copy) -> None:
    root, env, path = store
    before = tree(root, env)
    corrected = memhtml(env, "correct", path, "--title", "Kettle note",
                        "--claim", "The kettle is descaled on Mondays.", "--store", str(root))
    assert corrected.returncode == 0, corrected.stderr
    assert len(set(tree(root, env).items()) ^ set(before.items())) >= 3  # new, archived, old
    git(root, env, *PERSON, "revert", "--no-edit", "HEAD")
    reverted = _head(root, env)

    assert _after_next_command(root, env) == before, _log(root, env)
    assert _head(root, env) == reverted


def test_a_revert_of_an_archive_that_rewrote_links_keeps_every_path_undone(
        store: Copy) -> None:
    root, env, path = store
    linked = memhtml(env, "write", "--title", "Ladder", "--claim", "The ladder is in the shed.",
                     "--link", f"relates_to=/{path}", "--path", LADDER, "--store", str(root))
    assert linked.returncode == 0, linked.stderr
    before = tree(root, env)
    archived = memhtml(env, "archive", path, "--store", str(root))
    assert archived.returncode == 0, archived.stderr
    touched = {p for p, entry in tree(root, env).items() if before.get(p) != entry}
    touched |= {p for p in before if p not in tree(root, env)}
    assert LADDER in touched and path in touched, touched
    git(root, env, *PERSON, "revert", "--no-edit", "HEAD")
    reverted = _head(root, env)

    assert _after_next_command(root, env) == before, _log(root, env)
    assert _head(root, env) == reverted


@pytest.mark.parametrize(("tidy", "written_back"), [
    ((), True), (("reset", "-q", "--hard"), True),
    (("stash", "-q", "-u"), False), (("clean", "-fq", "--", LADDER), False),
], ids=["left", "reset --hard", "stash", "clean"])
def test_a_commit_from_a_stale_index_is_written_back_while_the_checkout_shows_it(
        store: Copy, tidy: tuple[str, ...],
        written_back: bool) -> None:
    """The person's commit carries the index from before the write; then they may tidy
    the written file it left on disk away. ``reset --hard`` leaves an untracked file
    where it is, so the proof stands; ``stash -u`` and ``clean`` take it away, and the
    commit is the person's from then on (said, and one ``git revert`` away)."""
    root, env, _ = store
    stale_index = (root / ".git" / "index").read_bytes()
    wrote = memhtml(env, "write", "--title", "Ladder", "--claim", "The ladder is in the shed.",
                    "--path", LADDER, "--store", str(root))
    assert wrote.returncode == 0, wrote.stderr
    (root / ".git" / "index").write_bytes(stale_index)
    (root / "notes").mkdir()
    (root / "notes" / "mine.txt").write_text("mine\n", encoding="utf-8")
    git(root, env, "add", "notes/mine.txt")
    git(root, env, *PERSON, "commit", "-q", "-m", "my notes")
    stale = _head(root, env)
    assert LADDER not in tree(root, env)
    if tidy:
        git(root, env, *tidy)

    note = _note(root, env)
    after = tree(root, env)
    assert "notes/mine.txt" in after
    assert (LADDER in after) is written_back, _log(root, env)
    if written_back:
        subject = git(root, env, "log", "-1", "--format=%s").stdout
        assert subject.startswith(f"memhtml rewrite-stale: 1 path(s) undone by {stale[:10]}")
        assert "wrote back 1 path(s)" in note, note
    else:
        assert _head(root, env) == stale
        assert f"git revert {stale[:10]}" in note, note
        git(root, env, *PERSON, "revert", "--no-edit", stale)
        assert LADDER in _after_next_command(root, env), _log(root, env)
    assert porcelain(root, env) == []
