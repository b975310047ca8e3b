"""A person who undoes a memhtml write with plain git on purpose keeps it undone; a
commit made from a stale index is still undone in turn.

The recovery step that runs before every command (``finish_checkout``) restores a
write that a commit from a stale index put back. Git cannot tell that commit from a
chosen one by its tree alone, but the checkout can: ``git commit`` never touches
files, so after a stale-index commit the written file is still on disk, while
``git revert``, ``git rm`` and ``git checkout <old> -- path`` put the file back too.
The sign counts only when the checkout had followed the write before the command
began; one a kill or a held lock kept behind is restored whatever its files hold.
"""

from __future__ import annotations

from pathlib import Path

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


def test_a_git_rm_of_a_written_file_is_not_written_back(tmp_path: Path) -> None:
    root, env, path = _store_with_one_write(tmp_path)
    git(root, env, "rm", "-q", "--", path)
    git(root, env, *PERSON, "commit", "-q", "-m", "drop the wrong kettle note")
    removed = _head(root, env)
    assert not (root / path).exists()

    assert path not in _after_next_command(root, env), (
        "the person's git rm was undone by the next memhtml command: " + _log(root, env))
    assert _head(root, env) == removed


def test_a_label_checked_out_back_by_hand_stays_as_the_person_left_it(
        tmp_path: Path) -> None:
    root, env, path = _store_with_one_write(tmp_path)
    first = tree(root, env)[path]
    labelled = memhtml(env, "label", path, "person:ines-marechal", "--store", str(root))
    assert labelled.returncode == 0, labelled.stderr
    assert tree(root, env)[path] != first
    git(root, env, "checkout", "HEAD~1", "--", path)
    git(root, env, *PERSON, "commit", "-q", "-m", "no label on this one")
    chosen = _head(root, env)

    assert _after_next_command(root, env)[path] == first, _log(root, env)
    assert _head(root, env) == chosen


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


def test_a_commit_from_a_stale_index_is_still_undone(tmp_path: Path) -> None:
    """The person's commit carries the index from before the write; the written file
    is still on disk, the sign of a stale index rather than a chosen undo."""
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
    assert (root / LADDER).exists(), "git commit never touches the written file"

    after = _after_next_command(root, env)
    assert LADDER in after and "notes/mine.txt" in after, _log(root, env)
    assert porcelain(root, env) == []
