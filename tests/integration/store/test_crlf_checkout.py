"""A person's checkout settings just work: with ``core.autocrlf`` or ``eol`` attributes,
every door writes, syncs and reports edits exactly as ``git status`` does.

A person clones a store, turns on a line-ending setting (``core.autocrlf=true`` or
``input`` in their config, or a ``.gitattributes`` line they commit) and lets git check
the files out again, so memory files sit in the checkout with CRLF line endings over
LF blobs. git calls that checkout clean, and so must memhtml: each door (write, label,
correct, archive, move, publish, a recorded setting, sync with a second clone) lands,
leaves ``git status`` and ``git diff`` empty, writes each file as ``git checkout``
would (``git cat-file --filters``), and leaves ``memhtml status`` and ``doctor`` with
no edit to report. A real edit then (a changed line, CRLF) is an edit to both, and a
door refuses it.

Each story runs the CLI in this process against the person's real git and a real bare
remote; the other clone syncs through it.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.store.checkout_support import PERSON, clean_environment, git, porcelain
from tests.integration.store.test_uncommitted_edits import assert_refused, cli, done

MUG = "areas/inbox/mug.html"
KETTLE = "areas/inbox/kettle.html"
TEAPOT = "areas/inbox/teapot.html"
MOVED_TEAPOT = "areas/kitchen/teapot.html"
CONFIG = ".memhtml/config.toml"

SETTINGS: dict[str, tuple[str | None, str | None, bool]] = {
    # name: (core.autocrlf, a committed .gitattributes line, files checked out CRLF)
    "autocrlf=true": ("true", None, True),
    "autocrlf=input": ("input", None, False),
    "* text eol=crlf": (None, "* text eol=crlf", True),
    "*.html text eol=crlf": (None, "*.html text eol=crlf", True),
    "* -text": (None, "* -text", False),
    "filter-free attributes": (None, "*.html diff=html\n*.xml -diff linguist-generated", False),
}


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A bare remote holding a published store of two memories (the kettle links to
    the mug) and a committed settings file, made once; each test clones its own copy."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        env = clean_environment(patch, home)
        base = tmp_path_factory.mktemp("published")
        store, remote = base / "store", base / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True,
                       env=env)
        done("init", store)
        done("write", "--store", store, "--title", "Mug", "--claim",
             "The blue mug is Ada's.", "--path", MUG)
        done("write", "--store", store, "--title", "Kettle", "--claim",
             "The kettle is descaled on Mondays.", "--link", f"relates_to={MUG}",
             "--path", KETTLE)
        done("publish", "--store", store)
        (store / CONFIG).write_text("# The store's own settings.\n", encoding="utf-8")
        git(store, env, "add", CONFIG)
        git(store, env, *PERSON, "commit", "-q", "-m", "settings")
        git(store, env, "remote", "add", "origin", str(remote))
        done("sync", "--store", store)
        yield remote


@pytest.fixture
def clones(published: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
           ) -> tuple[Path, Path, dict[str, str]]:
    """The person's clone and another one, of a fresh copy of the remote."""
    env = clean_environment(monkeypatch, tmp_path / "home")
    remote = tmp_path / "remote.git"
    shutil.copytree(published, remote)
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    done("clone", str(remote), mine)
    done("clone", str(remote), theirs)
    return mine, theirs, env


def turn_on(root: Path, env: dict[str, str], autocrlf: str | None, line: str | None) -> None:
    """The person's setting, then git's own checkout of every file under it."""
    if autocrlf is not None:
        git(root, env, "config", "core.autocrlf", autocrlf)
    if line is not None:
        attributes = root / ".gitattributes"
        attributes.write_text(attributes.read_text(encoding="utf-8") + line + "\n",
                              encoding="utf-8")
        git(root, env, "add", ".gitattributes")
        git(root, env, *PERSON, "commit", "-q", "-m", "my line endings")
    git(root, env, "rm", "-q", "-r", "--cached", ".")
    git(root, env, "reset", "-q", "--hard")


def assert_clean(root: Path, env: dict[str, str]) -> None:
    """git sees nothing to commit and no difference, staged or not."""
    assert porcelain(root, env) == []
    assert git(root, env, "diff").stdout == ""
    assert git(root, env, "diff", "--cached").stdout == ""


def assert_as_git_checks_out(root: Path, env: dict[str, str], paths: list[str]) -> None:
    for path in paths:
        if not (root / path).exists():
            continue
        expected = subprocess.run(["git", "cat-file", "--filters", f"HEAD:{path}"], cwd=root,
                                  env=env, capture_output=True, check=True).stdout
        assert (root / path).read_bytes() == expected, path


def tracked(root: Path, env: dict[str, str]) -> list[str]:
    return git(root, env, "ls-files").stdout.splitlines()


def assert_memhtml_sees_no_edit(root: Path) -> None:
    status = done("status", "--store", root)
    assert status["uncommitted"] == [], status
    _, doctor = cli("doctor", "--store", root)
    kinds = {finding["kind"] for finding in doctor["findings"]}
    assert not kinds & {"uncommitted", "checkout", "unmerged"}, doctor


def door(root: Path, env: dict[str, str], *tokens: str | Path) -> Any:
    answer = done(*tokens, "--store", root)
    assert_clean(root, env)
    return answer


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_every_door_works_in_the_person_s_checkout(
        clones: tuple[Path, Path, dict[str, str]], setting: str) -> None:
    mine, theirs, env = clones
    autocrlf, line, crlf = SETTINGS[setting]
    turn_on(mine, env, autocrlf, line)
    assert_clean(mine, env)
    assert (b"\r\n" in (mine / KETTLE).read_bytes()) is crlf

    door(mine, env, "write", "--title", "Teapot", "--claim", "The teapot is cracked.",
         "--path", TEAPOT)
    door(mine, env, "label", KETTLE, "person:ada")
    corrected = door(mine, env, "correct", KETTLE, "--title", "Kettle", "--claim",
                     "The kettle is descaled on Fridays.")["path"]
    door(mine, env, "archive", MUG)
    door(mine, env, "move", TEAPOT, "areas/kitchen/")
    door(mine, env, "publish")
    assert (b"\r\n" in (mine / MOVED_TEAPOT).read_bytes()) is crlf
    # The store's settings file, checked out like the rest, takes a recorded choice.
    assert door(mine, env, "embed", "--embedder", "hashing")["recorded"]["commit"]
    assert_as_git_checks_out(mine, env, [CONFIG])

    # Sync with the other clone: it writes and pushes, the person's sync merges both
    # ways, and the other clone takes everything (the person's attributes line too).
    done("write", "--store", theirs, "--title", "Lunch", "--claim", "Lunch is at noon.",
         "--path", "areas/inbox/lunch.html")
    done("sync", "--store", theirs)
    door(mine, env, "sync")
    assert (mine / "areas/inbox/lunch.html").is_file()
    assert (b"\r\n" in (mine / "areas/inbox/lunch.html").read_bytes()) is crlf
    before = git(theirs, env, "rev-parse", "HEAD").stdout.strip()
    door(theirs, env, "sync")
    moved = git(theirs, env, "diff", "--name-only", before, "HEAD").stdout.splitlines()
    assert MOVED_TEAPOT in moved
    assert_as_git_checks_out(theirs, env, moved)
    assert_as_git_checks_out(mine, env, tracked(mine, env))
    for root in (mine, theirs):
        assert_memhtml_sees_no_edit(root)

    # A person's edit: a changed line, saved with CRLF endings, is an edit to both.
    target = mine / corrected
    target.write_bytes(target.read_bytes().replace(b"Fridays", b"Sundays")
                       + b"<!-- my note -->\r\n")
    assert porcelain(mine, env) == [f" M {corrected}"]
    status = done("status", "--store", mine)
    assert [(e["path"], e["kind"]) for e in status["uncommitted"]] == [(corrected, "modified")]
    edited = target.read_bytes()
    code, answer = cli("label", corrected, "person:grace", "--store", mine)
    assert code == 1, answer
    assert_refused(answer, corrected)
    assert target.read_bytes() == edited


def test_a_pulled_attributes_line_applies_to_the_files_that_move_with_it(
        clones: tuple[Path, Path, dict[str, str]]) -> None:
    """The other clone commits ``* text eol=crlf`` with a new memory, later takes the
    line out with another: each sync brings the person's checkout to what ``git
    checkout`` of the new tip writes (the attributes file itself included), and git
    sees nothing to commit."""
    mine, theirs, env = clones
    for line, changed in (("* text eol=crlf\n", True), ("", False)):
        attributes = theirs / ".gitattributes"
        kept = [ln for ln in attributes.read_text(encoding="utf-8").splitlines(keepends=True)
                if "eol=crlf" not in ln]
        attributes.write_text("".join(kept) + line, encoding="utf-8")
        git(theirs, env, "add", ".gitattributes")
        git(theirs, env, *PERSON, "commit", "-q", "-m", "line endings")
        turn_on(theirs, env, None, None)
        written = done("write", "--store", theirs, "--title", f"Note {changed}", "--claim",
                       f"Line endings changed: {changed}.")["path"]
        done("label", "--store", theirs, KETTLE, f"topic:eol-{changed}".lower())
        done("sync", "--store", theirs)
        before = git(mine, env, "rev-parse", "HEAD").stdout.strip()
        done("sync", "--store", mine)
        moved = git(mine, env, "diff", "--name-only", before, "HEAD").stdout.splitlines()
        assert {".gitattributes", written, KETTLE} <= set(moved)
        assert_as_git_checks_out(mine, env, moved)
        assert (b"\r\n" in (mine / written).read_bytes()) is changed
        assert (b"\r\n" in (mine / ".gitattributes").read_bytes()) is changed
        # A file the sync did not move keeps the endings it was written with; once the
        # line is gone, git calls such a file changed only while its entry is racily
        # clean (written in the second the index was). Whatever git says, memhtml says.
        seen = {e["path"] for e in done("status", "--store", mine)["uncommitted"]}
        out = git(mine, env, "--no-optional-locks", "status", "--porcelain").stdout
        listed = {line[3:] for line in out.splitlines()}
        assert not listed & set(moved)
        assert seen == listed, (seen, listed)
