"""A person who reverts a memhtml write with ``git revert`` keeps it reverted; any other
commit that puts a write's paths back as they were is undone in turn.

The recovery step that runs before every command (``finish_checkout``) restores a
write that a commit from a stale index put back. ``git revert`` says what it is: its
message names the commit it reverts, so a revert of the write is the person's choice
and stays. Nothing else can be told from a stale-index commit for sure: the written
file it leaves on disk is gone again once the person tidies the "modified" file away
(``git stash``, ``git restore``, ``git reset --hard``), which is what a chosen
``git rm`` leaves too. A person's ``git commit`` must never silently undo a write, so
those are written back, with a commit that names the one it undoes.
"""

from __future__ import annotations

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


def _store_with_one_write(tmp_path: Path) -> tuple[Path, dict[str, str], str]:
    """A store with one memory written through the command; its root, env and path."""
    root = tmp_path / "store"
    env = clean_env(tmp_path / "home")
    root.mkdir()
    git(root, env, "init", "-q", "-b", "main")
    made = memhtml(env, "init", "--store", str(root))
    assert made.returncode == 0, made.stderr
    wrote = memhtml(env, "write", "--title", "Wrong kettle note",
                    "--claim", "The kettle is descaled on Fridays.",
                    "--path", KETTLE, "--store", str(root))
    assert wrote.returncode == 0, wrote.stderr
    return root, env, KETTLE


def _after_next_command(root: Path, env: dict[str, str]) -> dict[str, str]:
    """The branch's tree once a read-only command has run in the store."""
    status = memhtml(env, "status", "--store", str(root))
    assert status.returncode == 0, status.stderr
    return tree(root, env)


def _head(root: Path, env: dict[str, str]) -> str:
    return git(root, env, "rev-parse", "HEAD").stdout.strip()


def _log(root: Path, env: dict[str, str]) -> str:
    return git(root, env, "log", "-4", "--format=%h %s").stdout


def test_a_git_revert_of_a_write_is_not_written_back(tmp_path: Path) -> None:
    root, env, path = _store_with_one_write(tmp_path)
    git(root, env, *PERSON, "revert", "--no-edit", "HEAD")
    reverted = _head(root, env)
    assert path not in tree(root, env)

    assert path not in _after_next_command(root, env), (
        "the person's git revert was undone by the next memhtml command: " + _log(root, env))
    assert _head(root, env) == reverted
    assert porcelain(root, env) == []


def test_a_git_rm_of_a_write_is_written_back_naming_the_commit(tmp_path: Path) -> None:
    root, env, path = _store_with_one_write(tmp_path)
    git(root, env, "rm", "-q", "--", path)
    git(root, env, *PERSON, "commit", "-q", "-m", "drop the wrong kettle note")
    removed = _head(root, env)

    assert path in _after_next_command(root, env), _log(root, env)
    subject = git(root, env, "log", "-1", "--format=%s").stdout
    assert subject.startswith(f"memhtml restore: 1 path(s) undone by {removed[:10]}")
    assert porcelain(root, env) == []


def test_a_label_checked_out_back_by_hand_is_written_back(tmp_path: Path) -> None:
    root, env, path = _store_with_one_write(tmp_path)
    labelled = memhtml(env, "label", path, "person:ines-marechal", "--store", str(root))
    assert labelled.returncode == 0, labelled.stderr
    label = tree(root, env)[path]
    git(root, env, "checkout", "HEAD~1", "--", path)
    git(root, env, *PERSON, "commit", "-q", "-m", "no label on this one")

    assert _after_next_command(root, env)[path] == label, _log(root, env)


def test_a_revert_stays_with_the_branch_not_checked_out(tmp_path: Path) -> None:
    root, env, path = _store_with_one_write(tmp_path)
    git(root, env, *PERSON, "revert", "--no-edit", "HEAD")
    reverted = git(root, env, "rev-parse", "refs/heads/main").stdout.strip()
    git(root, env, "checkout", "-q", "--detach", "HEAD~1")

    _after_next_command(root, env)
    assert path not in tree(root, env, "refs/heads/main"), _log(root, env)
    assert git(root, env, "rev-parse", "refs/heads/main").stdout.strip() == reverted


def test_a_revert_of_a_correction_keeps_both_paths_undone(tmp_path: Path) -> None:
    root, env, path = _store_with_one_write(tmp_path)
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
        tmp_path: Path) -> None:
    root, env, path = _store_with_one_write(tmp_path)
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


@pytest.mark.parametrize("tidy", [(), ("stash", "-q", "-u"), ("clean", "-fq", "--", LADDER),
                                  ("reset", "-q", "--hard")],
                         ids=["left", "stash", "clean", "reset --hard"])
def test_a_commit_from_a_stale_index_is_still_undone(tmp_path: Path,
                                                     tidy: tuple[str, ...]) -> None:
    """The person's commit carries the index from before the write; then they may tidy
    the written file it left on disk away, taking it for a stray change."""
    root, env, _ = _store_with_one_write(tmp_path)
    stale_index = (root / ".git" / "index").read_bytes()
    wrote = memhtml(env, "write", "--title", "Ladder", "--claim", "The ladder is in the shed.",
                    "--path", LADDER, "--store", str(root))
    assert wrote.returncode == 0, wrote.stderr
    (root / ".git" / "index").write_bytes(stale_index)
    (root / "notes").mkdir()
    (root / "notes" / "mine.txt").write_text("mine\n", encoding="utf-8")
    git(root, env, "add", "notes/mine.txt")
    git(root, env, *PERSON, "commit", "-q", "-m", "my notes")
    assert LADDER not in tree(root, env)
    if tidy:
        git(root, env, *tidy)

    after = _after_next_command(root, env)
    assert LADDER in after and "notes/mine.txt" in after, _log(root, env)
    assert porcelain(root, env) == []
