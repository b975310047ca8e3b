"""``memhtml sync`` holds every path a remote brings to the doors' own rules, and says
which live memories a remote deleted.

A path a write would refuse (a name no checkout can hold, a case or Unicode twin, a
symbolic link where the layout keeps a directory, a Windows device name, anything
under the state directory) refuses the whole sync before anything moves, each such
path named with its rule, ``ERR_REMOTE_PATHS_REFUSED`` under ``--json``. The local
branch and the checkout stay as they were, and every door keeps working: a write
commits, ``task add``, ``archive`` and ``publish`` run, ``status`` answers.

A remote that deletes live memories outright is merged (a person may delete on
purpose), and the summary names each one; ``memhtml restore PATH`` brings it back
as a new commit, which the next sync pushes.

Every remote here is a real bare repository written by plain ``git push`` from an
attacker's repository, one over ``git daemon`` (git://).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest

from memhtml.contracts.paths import shown_path
from tests.integration.cli.cli_support import call, call_text
from tests.integration.sync.remote_trees import (
    LINK,
    Attacker,
    Entry,
    checkout_state,
    tip,
    tree_paths,
)
from tests.integration.sync.sync_support import git

REFUSED = "ERR_REMOTE_PATHS_REFUSED"
LONG = "x" * 300
"""A file name git holds and no file system a clone lands on can write (over 255 bytes)."""


@pytest.fixture(autouse=True)
def _plain_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """git as installed, without the developer's own config."""
    empty = tmp_path / "gitconfig"
    empty.write_text("[user]\n\tname = Pat\n\temail = pat@example.invalid\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def _ok(capsys: pytest.CaptureFixture[str], *tokens: str) -> dict[str, Any]:
    code, answer = call(capsys, *tokens, "--json")
    assert code == 0, answer
    return dict(answer)


def _write(capsys: pytest.CaptureFixture[str], store: Path, title: str) -> str:
    answer = _ok(capsys, "write", "--title", title, "--claim", f"{title} is remembered.",
                 "--store", str(store))
    return str(answer["new"][0])


@dataclass(frozen=True)
class Shared:
    """One store syncing through a remote, with one memory both have, and an attacker
    who can push anything to that remote."""

    store: Path
    remote: Path
    attacker: Attacker
    memory: str
    base: str
    """The commit the store and the remote shared after the first sync."""

    def push(self, files: Mapping[str, Entry | None], *, diverged: bool = False) -> str:
        """The attacker's commit of ``files`` over the store's branch (``diverged``: over
        ``base`` while the store has a commit of its own, so the sync merges)."""
        return self.attacker.push_tree(str(self.store), self.base if diverged else
                                       str(tip(self.store)), files)


@pytest.fixture
def shared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Shared:
    remote = tmp_path / "remote.git"
    pygit2.init_repository(str(remote), bare=True, initial_head="main")
    store = tmp_path / "store"
    _ok(capsys, "init", str(store))
    git(store, "remote", "add", "origin", str(remote))
    memory = _write(capsys, store, "Coffee")
    _ok(capsys, "sync", "--store", str(store))
    base = tip(store)
    assert base is not None and tip(remote) == base
    return Shared(store, remote, Attacker.beside(tmp_path / "attacker.git", str(remote)),
                  memory, base)


def _refused(capsys: pytest.CaptureFixture[str], store: Path, paths: list[str]
             ) -> dict[str, Any]:
    """A sync refused naming exactly ``paths``, each once, in path order."""
    code, answer = call(capsys, "sync", "--store", str(store), "--json")
    assert code == 1, answer
    assert answer["ok"] is False and answer["code"] == REFUSED, answer
    assert "nothing was brought in" in answer["error"], answer
    named = [v.split(" refused: ", 1)[0] for v in answer["violations"]]
    assert named == [f"path {shown_path(p)}" for p in sorted(paths)], answer
    return dict(answer)


def _doors_work(capsys: pytest.CaptureFixture[str], store: Path, title: str) -> None:
    """A write commits on the store's branch and status answers."""
    before = tip(store)
    wrote = _write(capsys, store, title)
    assert tip(store) != before and wrote in tree_paths(store)
    assert (store / wrote).is_file()
    status = _ok(capsys, "status", "--store", str(store))
    assert status["commit"] == tip(store), status


def _diverge(capsys: pytest.CaptureFixture[str], shared: Shared) -> None:
    _write(capsys, shared.store, "Lunch")


@pytest.mark.parametrize("history", ["descendant", "diverged"])
def test_a_name_too_long_for_any_file_system_is_refused_not_a_crash(
        shared: Shared, capsys: pytest.CaptureFixture[str], history: str) -> None:
    """A 300-byte name crashed the checkout walk (``File name too long``); now it is
    one of the paths the refusal names, in text and in JSON, and nothing moves."""
    diverged = history == "diverged"
    if diverged:
        _diverge(capsys, shared)
    long_file = f"areas/inbox/{LONG}.html"
    long_dir = "areas/" + "\u00e9" * 130 + "/x.html"
    shared.push({long_file: Entry(b"long\n"), long_dir: Entry(b"deep\n")}, diverged=diverged)
    before, seen = tip(shared.store), checkout_state(shared.store)

    code, out, err = call_text(capsys, "sync", "--store", str(shared.store))
    assert code == 1, out + err
    assert "Traceback" not in out + err and "OSError" not in out + err
    assert "255-byte limit" in err, err
    _refused(capsys, shared.store, [long_file, long_dir])

    assert tip(shared.store) == before and checkout_state(shared.store) == seen
    _doors_work(capsys, shared.store, "After the refusal")

    # The remote is fixed where it was broken: the paths removed again. The hostile
    # commit stays in history, but the tree the sync brings holds nothing refused.
    shared.attacker.push_tree(str(shared.remote), str(tip(shared.remote)),
                              {long_file: None, long_dir: None}, "fixed")
    done = _ok(capsys, "sync", "--store", str(shared.store))
    assert done["action"] == "merged" and done["pushed"] is True, done
    assert tip(shared.remote) == tip(shared.store)
    assert not any(len(p.encode()) > 255 for p in tree_paths(shared.store))


@pytest.mark.parametrize("history", ["descendant", "diverged"])
def test_case_and_normalization_twins_are_refused(
        shared: Shared, capsys: pytest.CaptureFixture[str], history: str) -> None:
    """A twin of a memory this clone has is the offending path; two new twins are both
    offending, since neither is here to keep its name."""
    diverged = history == "diverged"
    if diverged:
        _diverge(capsys, shared)
    composed = unicodedata.normalize("NFC", "areas/inbox/caf\u00e9.html")
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    twins = {"areas/inbox/Coffee.html": Entry(b"case\n"),
             composed: Entry(b"nfc\n"), decomposed: Entry(b"nfd\n"),
             "Areas/notes.html": Entry(b"directory twin\n")}
    shared.push(twins, diverged=diverged)
    before, seen = tip(shared.store), checkout_state(shared.store)

    answer = _refused(capsys, shared.store, list(twins))

    by_path = dict(zip(sorted(twins), answer["violations"], strict=True))
    assert "differs only by case" in by_path["areas/inbox/Coffee.html"]
    assert "'areas/inbox/coffee.html'" in by_path["areas/inbox/Coffee.html"]
    assert "composed in one and decomposed in the other" in by_path[decomposed]
    assert "\\u0301" in by_path[decomposed], "the decomposed name prints unlike the other"
    assert "directory 'Areas'" in by_path["Areas/notes.html"]
    assert tip(shared.store) == before and checkout_state(shared.store) == seen
    _doors_work(capsys, shared.store, "After the twins")


LAYOUT_LINKS = ("areas/tasks", "archive", "memhtml-site", "resources/people", "areas/deploy",
                ".gitignore", "index.html", ".memhtml/sleep")


@pytest.mark.parametrize("history", ["descendant", "diverged"])
def test_a_symbolic_link_at_a_layout_path_is_refused_and_every_door_keeps_working(
        shared: Shared, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        history: str) -> None:
    """Once brought in, a link at ``areas/tasks``, ``archive`` or ``memhtml-site`` made
    ``task add``, ``archive`` and ``publish`` refuse. A link elsewhere is a file that
    is not a memory, and may come along: here it waits with the rest."""
    diverged = history == "diverged"
    if diverged:
        _diverge(capsys, shared)
    outside = str(tmp_path / "outside").encode()
    files: dict[str, Entry | None] = {p: Entry(outside, LINK) for p in LAYOUT_LINKS}
    files["areas/inbox/link.html"] = Entry(outside, LINK)
    shared.push(files, diverged=diverged)
    before, seen = tip(shared.store), checkout_state(shared.store)

    answer = _refused(capsys, shared.store, list(LAYOUT_LINKS))
    assert all("symbolic link" in v for v in answer["violations"]), answer

    assert tip(shared.store) == before and checkout_state(shared.store) == seen
    store = str(shared.store)
    _ok(capsys, "task", "add", "--title", "Rotate the key", "--claim", "Rotate it.",
        "--store", store)
    _ok(capsys, "archive", shared.memory, "--store", store)
    _ok(capsys, "publish", "--store", store)
    held = tree_paths(shared.store)
    assert "areas/tasks/rotate-the-key.html" in held
    assert any(p.startswith("archive/") and p.endswith("/" + shared.memory) for p in held)
    assert "memhtml-site/memhtml.css" in held and "areas/inbox/link.html" not in held
    for path in LAYOUT_LINKS:
        assert not (shared.store / path).is_symlink(), path


@pytest.mark.parametrize(("path", "rule"), [
    ("areas/inbox/con.html", "device name CON"),
    ("areas/inbox/what?.html", "does not allow"),
    ("areas/inbox/trailing.", "ends in a dot"),
    (".memhtml/snapshots/planted.bin", "state directory"),
    (".MEMHTML/config.toml", "any spelling"),
])
def test_a_name_some_file_system_reads_otherwise_is_refused(
        shared: Shared, capsys: pytest.CaptureFixture[str], path: str, rule: str) -> None:
    shared.push({path: Entry(b"x\n"), "notes/fine.txt": Entry(b"fine\n")})
    before = tip(shared.store)
    answer = _refused(capsys, shared.store, [path])
    assert rule in answer["violations"][0], answer
    assert tip(shared.store) == before
    assert "notes/fine.txt" not in tree_paths(shared.store), "nothing of the sync landed"


def test_what_travels_with_a_store_is_brought_in(
        shared: Shared, capsys: pytest.CaptureFixture[str]) -> None:
    """Under ``.memhtml/`` a store carries its settings and the sleep run's reports on
    purpose: a remote adding or editing those is a sync like any other."""
    config = (shared.store / ".memhtml" / "store.toml").read_bytes()
    shared.push({".memhtml/sleep/2026-01-01.html": Entry(b"<p>report</p>\n"),
                 ".memhtml/store.toml": Entry(config + b"# noted\n"),
                 "areas/inbox/link.html": Entry(b"../../outside", LINK)})
    done = _ok(capsys, "sync", "--store", str(shared.store))
    assert done["action"] == "fast-forward", done
    assert {".memhtml/sleep/2026-01-01.html", "areas/inbox/link.html"} <= tree_paths(
        shared.store)


def test_a_name_this_clone_already_has_is_not_judged_as_new(
        shared: Shared, capsys: pytest.CaptureFixture[str]) -> None:
    """A store may hold a name from before these rules (made with plain git): another
    clone editing it is brought in; a new name like it is refused."""
    legacy = "areas/inbox/what?.html"
    (shared.store / legacy).write_text("legacy\n")
    git(shared.store, "add", legacy)
    git(shared.store, "commit", "-qm", "a name from before")
    assert _ok(capsys, "sync", "--store", str(shared.store))["pushed"] is True
    shared.push({legacy: Entry(b"edited elsewhere\n")})
    done = _ok(capsys, "sync", "--store", str(shared.store))
    assert done["action"] == "fast-forward", done
    assert (shared.store / legacy).read_text() == "edited elsewhere\n"

    shared.push({"areas/inbox/again?.html": Entry(b"new\n")})
    _refused(capsys, shared.store, ["areas/inbox/again?.html"])


def test_a_name_too_long_already_in_the_branch_crashes_no_command(
        shared: Shared, capsys: pytest.CaptureFixture[str]) -> None:
    """The checkout walk meets tree names from anywhere (a person's plumbing, an older
    release): one no file system can hold is absent from the checkout, never an
    ``OSError``, for every command that compares the checkout with the branch."""
    long_file = f"areas/inbox/{LONG}.html"
    blob = _blob(shared.store, b"long\n")
    git(shared.store, "update-index", "--add", "--cacheinfo", f"100644,{blob},{long_file}")
    git(shared.store, "commit", "-qm", "a name no checkout can hold")
    store = str(shared.store)
    for command in (("status",), ("doctor",), ("write", "--title", "After", "--claim", "Ok."),
                    ("archive", shared.memory), ("sync",)):
        code, out, err = call_text(capsys, *command, "--store", store)
        assert "Traceback" not in out + err and "OSError" not in out + err, (command, err)
        assert code in (0, 1), (command, out, err)
    assert _ok(capsys, "write", "--title", "Still", "--claim", "Writes work.",
               "--store", store)["committed"] is True


def _blob(root: Path, data: bytes) -> str:
    made = subprocess.run(["git", "-C", str(root), "hash-object", "-w", "--stdin"],
                          input=data, capture_output=True, check=True)
    return made.stdout.decode().strip()


# -- deletions by the remote ---------------------------------------------------------------


@pytest.mark.parametrize("history", ["fast-forward", "merged"])
def test_live_memories_the_remote_deleted_are_named_and_restore_brings_them_back(
        shared: Shared, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        history: str) -> None:
    """Deleted outright: named. Archived or moved: not a loss, not named."""
    store = shared.store
    tea, lunch, moving = (_write(capsys, store, t) for t in ("Tea", "Lunch", "Moving"))
    _ok(capsys, "sync", "--store", str(store))
    other = tmp_path / "other"
    _ok(capsys, "clone", str(shared.remote), str(other))
    git(other, "rm", "-q", shared.memory, tea)
    git(other, "commit", "-qm", "two facts I no longer want")
    _ok(capsys, "archive", lunch, "--store", str(other))
    _ok(capsys, "move", moving, "areas/kept/", "--store", str(other))
    _ok(capsys, "sync", "--store", str(other))
    if history == "merged":
        _write(capsys, store, "Local fact")

    code, out, err = call_text(capsys, "sync", "--store", str(store))
    assert code == 0, out + err
    assert not (store / shared.memory).exists(), out + err + git(store, "status")
    for path in (shared.memory, tea):
        assert f"deleted by the remote: {path} (memhtml restore {path}" in out, out
    assert f"deleted by the remote: {lunch}" not in out and moving not in out, out
    answer = _ok(capsys, "sync", "--store", str(store))
    assert answer["deleted"] == [], answer  # told once, when it happened
    assert not (store / shared.memory).exists() and shared.memory not in tree_paths(store)

    restored = _ok(capsys, "restore", shared.memory, "--store", str(store))
    assert restored["new"] == [shared.memory], restored
    assert restored["subject"] == f"memhtml restore: {shared.memory}"
    assert "Coffee is remembered." in (store / shared.memory).read_text()
    read = _ok(capsys, "read", shared.memory, "--store", str(store))
    assert read["text"].startswith("Coffee is remembered."), read
    pushed = _ok(capsys, "sync", "--store", str(store))
    assert pushed["pushed"] is True and shared.memory in tree_paths(shared.remote)
    back = _ok(capsys, "sync", "--store", str(other))
    assert back["deleted"] == [] and (other / shared.memory).is_file(), back


def test_the_json_outcome_lists_deletions(shared: Shared, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    tea = _write(capsys, shared.store, "Tea")
    _ok(capsys, "sync", "--store", str(shared.store))
    shared.push({tea: None, shared.memory: None})
    answer = _ok(capsys, "sync", "--store", str(shared.store))
    assert answer["action"] == "fast-forward", answer
    assert answer["deleted"] == sorted([tea, shared.memory]), answer


def test_restore_refuses_what_is_not_a_deleted_memory(
        shared: Shared, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(shared.store)
    archived = _write(capsys, shared.store, "Old news")
    written = tip(shared.store)
    _ok(capsys, "archive", archived, "--store", store)
    first = tip(shared.store)
    assert written is not None
    cases = [
        ((shared.memory,), "holds a memory"),
        # Without --at an archived memory comes back live (test_cli_restore); a version
        # of it from history is refused, naming the way.
        ((archived, "--at", written), f"memhtml restore {archived} (without --at)"),
        (("areas/inbox/never.html",), "was never on main"),
        (("areas/inbox/../x.html",), "refused"),
        ((shared.memory, "--at", "no-such-rev"), "no-such-rev"),
        (("areas/inbox/never.html", "--at", shared.base), "holds no file"),
    ]
    for args, words in cases:
        code, answer = call(capsys, "restore", *args, "--store", store, "--json")
        assert code == 1 and answer["ok"] is False and answer["code"].startswith("ERR_"), args
        assert words in answer["error"], (args, answer)
    assert tip(shared.store) == first, "nothing was committed"


def test_restore_at_a_commit_takes_that_version(
        shared: Shared, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(shared.store)
    _ok(capsys, "label", shared.memory, "topic:drinks", "--store", store)
    git(shared.store, "rm", "-q", shared.memory)
    git(shared.store, "commit", "-qm", "gone")
    restored = _ok(capsys, "restore", shared.memory, "--at", shared.base, "--store", store)
    assert restored["new"] == [shared.memory], restored
    assert "topic:drinks" not in (shared.store / shared.memory).read_text()
    assert git(shared.store, "status", "--porcelain") == ""


# -- doctor --------------------------------------------------------------------------------


def test_doctor_names_a_committed_link_at_a_layout_path(
        shared: Shared, capsys: pytest.CaptureFixture[str]) -> None:
    """A person's own commit is not refused (it is theirs), but doctor says why the
    doors stopped working there."""
    (shared.store / "areas" / "tasks").symlink_to(shared.store / "areas" / "inbox")
    git(shared.store, "add", "areas/tasks")
    git(shared.store, "commit", "-qm", "tasks live in the inbox")
    code, answer = call(capsys, "doctor", "--store", str(shared.store), "--json")
    assert code == 1, answer
    found = [f for f in answer["findings"] if f["kind"] == "layout-link"]
    assert [f["path"] for f in found] == ["areas/tasks"], answer


# -- git daemon ----------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A ``git daemon`` serving ``tmp_path/served`` read-write on a loopback port: the
    served directory and its git:// base URL."""
    if shutil.which("git") is None or subprocess.run(
            ["git", "daemon", "--help"], capture_output=True, check=False).returncode != 0:
        pytest.skip("git daemon is not installed here")
    base = tmp_path / "served"
    base.mkdir()
    port = _free_port()
    process = subprocess.Popen(
        ["git", "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr",
         f"--base-path={base}", f"--port={port}", "--listen=127.0.0.1", str(base)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            assert process.poll() is None, "git daemon exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "git daemon did not start"
                time.sleep(0.05)
        yield base, f"git://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_over_git_daemon_a_hostile_push_is_refused_and_a_deletion_named(
        daemon: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    served, url = daemon
    pygit2.init_repository(str(served / "memory.git"), bare=True, initial_head="main")
    remote = f"{url}/memory.git"
    store = tmp_path / "store"
    _ok(capsys, "init", str(store))
    git(store, "remote", "add", "origin", remote)
    memory = _write(capsys, store, "Coffee")
    tea = _write(capsys, store, "Tea")
    assert _ok(capsys, "sync", "--store", str(store))["pushed"] is True
    attacker = Attacker.beside(tmp_path / "attacker.git", remote)
    hostile = {f"areas/inbox/{LONG}.html": Entry(b"long\n"),
               "areas/tasks": Entry(b"/etc", LINK), "areas/inbox/Tea.html": Entry(b"twin\n")}
    attacker.push_tree(remote, "main", hostile)
    before, seen = tip(store), checkout_state(store)

    _refused(capsys, store, list(hostile))
    assert tip(store) == before and checkout_state(store) == seen
    _doors_work(capsys, store, "Written while refused")

    # The attacker's history is replaced (the remote is theirs to rewrite): a commit
    # of the store's own branch with two memories deleted.
    attacker.push_tree(str(store), str(before), {memory: None, tea: None}, "deleted")
    answer = _ok(capsys, "sync", "--store", str(store))
    assert answer["action"] == "merged" and answer["deleted"] == sorted([memory, tea]), answer
    assert _ok(capsys, "restore", tea, "--store", str(store))["new"] == [tea]
    assert _ok(capsys, "sync", "--store", str(store))["pushed"] is True
    assert git(tmp_path / "attacker.git", "ls-remote", remote, "main").split()[0] == tip(store)
