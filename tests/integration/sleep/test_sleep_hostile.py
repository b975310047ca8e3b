"""``memhtml sleep`` used as a careless or hostile person would: the wrong order, the
wrong input, a store in a state nobody planned for.

Every refusal must be a clear error (exit 1, or 2 for a usage error) that leaves main,
the run branches and the state database as they were. Files a phase cannot read
(unparsable, not UTF-8, symbolic links) are never moved or rewritten.

The commands run in this process through the CLI's own entry (``app``), with the
system clock pinned to one instant (the run is stamped by one clock read, and the
day names the run) and an environment free of the developer's own settings.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest

from memhtml.adapters.clock import SystemClock
from memhtml.adapters.git import PygitService
from memhtml.compose import value_of
from memhtml.contracts.services import PathChange, Signature
from memhtml.sleep.contract import branch_of, is_decisions_path, ledger_path
from tests.integration.cli.cli_support import call, call_text, usage_code
from tests.integration.sleep.kill_support import PlaneRows, child, rows_at
from tests.integration.sleep.sleep_support import (
    LINKED,
    RUN_AT,
    RUN_ID,
    SHARE_FOR_THE_DEMO,
    build_sleep_demo,
    dangle,
)
from tests.integration.store.checkout_support import (
    PERSON,
    checkout_findings,
    clean_environment,
    git,
    porcelain,
)

BRANCH = branch_of(RUN_ID)
HAND = Signature("A Person", "person@example.org")
ARCHIVED = "areas/checkout/verdict-idempotency-keys.html"
"""Archived by ``dangle`` without its inbound links rewritten (integrity repairs them)."""
DELETED = "areas/checkout/incident-double-charge-2026-03.html"
"""Deleted by ``dangle`` (integrity drops the hrefs to it)."""
LINKER = "areas/checkout/arc-payments-hardening.html"
"""A memory linking to both, which integrity rewrites."""


# -- fixtures ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo") / "store"
    build_sleep_demo(root)
    dangle(root)
    return root


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """A clean environment, and the system clock pinned to the run's instant."""
    monkeypatch.setattr(SystemClock, "now", lambda self: RUN_AT)
    return clean_environment(monkeypatch, tmp_path / "home")


@pytest.fixture
def store(demo: Path, tmp_path: Path, env: dict[str, str]) -> Path:
    root = tmp_path / "store"
    shutil.copytree(demo, root, symlinks=True)
    return root


# -- what must not change ----------------------------------------------------------------


def refs(root: Path) -> dict[str, str]:
    repo = pygit2.Repository(str(root))
    return {name: str(repo.references[name].resolve().target)
            for name in repo.references if name.startswith("refs/")}


def _state_db(root: Path) -> Path:
    git_dir = Path(pygit2.Repository(str(root)).path)
    return git_dir / "memhtml" / "state.db"


def state_of(root: Path) -> object:
    """The state plane's rows; a file sqlite cannot read (or from another schema) as
    its bytes; None when there is no file."""
    path = _state_db(root)
    if not path.exists():
        return None
    try:
        return rows_at(path)
    except sqlite3.DatabaseError:
        return path.read_bytes()


@dataclass(frozen=True)
class Held:
    refs: dict[str, str]
    state: object
    memhtml_dir: tuple[str, ...]


def held(root: Path) -> Held:
    directory = _state_db(root).parent
    listing = tuple(sorted(p.name for p in directory.iterdir())) if directory.exists() else ()
    return Held(refs(root), state_of(root), listing)


def unchanged(root: Path, before: Held) -> None:
    after = held(root)
    assert after.refs == before.refs, "refs moved"
    assert after.state == before.state, "the state plane changed"


def clear(text: str) -> None:
    """An error a person can act on: said in one line, no traceback."""
    assert "Traceback" not in text, text
    assert text.strip(), "no message at all"


def run(capsys: pytest.CaptureFixture[str], root: Path, *more: str) -> tuple[int, Any]:
    return call(capsys, "sleep", "run", *more, "--store", str(root), "--json")


def sleep(capsys: pytest.CaptureFixture[str], command: str, root: Path, *more: str
          ) -> tuple[int, Any]:
    return call(capsys, "sleep", command, *more, "--store", str(root), "--json")


def tip_of(root: Path, name: str = BRANCH) -> str:
    return refs(root)[f"refs/heads/{name}"]


def entries(root: Path, commit: str) -> dict[str, tuple[int, str]]:
    """Every path of ``commit``'s tree: its mode and blob."""
    repo = pygit2.Repository(str(root))
    found: dict[str, tuple[int, str]] = {}

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            if entry.type_str == "tree":
                walk(repo[entry.id].peel(pygit2.Tree), f"{prefix}{entry.name}/")
            else:
                found[f"{prefix}{entry.name}"] = (int(entry.filemode), str(entry.id))

    walk(repo[commit].peel(pygit2.Tree), "")
    return found


def hand_commit_on(root: Path, ref: str, changes: list[PathChange], message: str) -> str:
    """A commit a person makes on ``ref`` with their own git (here, the adapter)."""
    service = value_of(PygitService.open(root / ".git"))
    at = value_of(service.resolve(ref))
    return value_of(service.commit(f"refs/heads/{ref}", at, changes, message + "\n", HAND,
                                   RUN_AT))


# -- the wrong order, the wrong words --------------------------------------------------------


@pytest.mark.parametrize("phases", [("defragment",), ("integrity", "defragment"), ("",),
                                    ("Integrity",)])
def test_an_unknown_phase_is_a_usage_error_that_creates_nothing(
        store: Path, capsys: pytest.CaptureFixture[str], phases: tuple[str, ...]) -> None:
    before = held(store)
    tokens = [token for phase in phases for token in ("--phase", phase)]
    assert usage_code(capsys, "sleep", "run", *tokens, "--store", str(store)) == 2
    assert usage_code(capsys, "sleep", "run", "--dry-run", *tokens, "--store",
                      str(store)) == 2
    unchanged(store, before)
    assert held(store).memhtml_dir == before.memhtml_dir, "nothing created"


def test_merge_review_and_abort_with_no_run_refuse(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = held(store)
    for command in ("merge", "review", "abort", "resume"):
        code, out, err = call_text(capsys, "sleep", command, "--store", str(store))
        assert code == 1, (command, out, err)
        assert "no sleep run in this clone" in err and "sleep run" in err, (command, err)
        clear(err)
    code, refused = sleep(capsys, "merge", store, "2026-01-01")
    assert code == 1 and refused["refusal"] == "no-run", refused
    assert refused["marks_pending"] is None and refused["marks_applied"] is None
    for bogus in ("bogus", "../main", "main", "2026-13-45x", "sleep/../../main"):
        code, out, err = call_text(capsys, "sleep", "merge", bogus, "--store", str(store))
        assert code == 2 and "is not a run id" in err, (bogus, err)
    unchanged(store, before)
    # A dry run cuts nothing, so there is still nothing to merge. (It opens the state
    # plane, which makes an empty database where there was none: no row is written.)
    code, report = run(capsys, store, "--dry-run")
    assert code == 0 and report["dry_run"] and report["commits"] == []
    code, _, err = call_text(capsys, "sleep", "merge", "--store", str(store))
    assert code == 1 and "no sleep run" in err
    assert refs(store) == before.refs
    # Refusals and a dry run read the plane at most: none of them creates it.
    assert state_of(store) is None and rows_at(_state_db(store)) == EMPTY


def test_a_dry_run_writes_no_state(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = call(capsys, "read", LINKED, "--store", str(store), "--json")
    assert code == 0
    before = held(store)
    assert before.state != EMPTY, "the read is logged"
    code, report = run(capsys, store, "--dry-run")
    assert code == 0 and report["dry_run"], report
    unchanged(store, before)


def test_merge_twice_moves_nothing_the_second_time(
        store: Path, capsys: pytest.CaptureFixture[str], env: dict[str, str]) -> None:
    code, report = run(capsys, store)
    assert code == 0, report
    code, first = sleep(capsys, "merge", store, RUN_ID)
    assert code == 0 and first["merged"] and first["fast_forwarded"]
    before = held(store)
    code, second = sleep(capsys, "merge", store, RUN_ID)
    assert code == 0 and second["merged"] and not second["fast_forwarded"], second
    assert "already holds" in second["reason"]
    unchanged(store, before)
    assert porcelain(store, env) == []


def test_abort_then_merge_refuses_and_moves_nothing(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main = refs(store)["refs/heads/main"]
    code, report = run(capsys, store)
    assert code == 0
    code, aborted = sleep(capsys, "abort", store, RUN_ID)
    assert code == 0 and aborted["state"] == "mergeable" and aborted["tip"] == report["head_sha"]
    before = held(store)
    assert f"refs/heads/{BRANCH}" not in before.refs
    code, _, err = call_text(capsys, "sleep", "merge", "--store", str(store))
    assert code == 1 and "no sleep run" in err
    code, refused = sleep(capsys, "merge", store, RUN_ID)
    assert code == 1 and refused["refusal"] == "no-run"
    code, _, err = call_text(capsys, "sleep", "abort", RUN_ID, "--store", str(store))
    assert code == 1 and "no sleep run" in err, "an abort of an aborted run is refused"
    unchanged(store, before)
    assert before.refs["refs/heads/main"] == main
    # The aborted run's id is free again: nothing of it reached main.
    code, again = run(capsys, store)
    assert code == 0 and again["run_id"] == RUN_ID


def test_resume_with_nothing_to_resume(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = held(store)
    code, _, err = call_text(capsys, "sleep", "resume", "--store", str(store))
    assert code == 1 and "no sleep run" in err
    code, _, err = call_text(capsys, "sleep", "resume", "2026-01-01", "--store", str(store))
    assert code == 1 and "no sleep run '2026-01-01'" in err
    unchanged(store, before)

    # A run that finished: resume skips every phase it did and changes nothing.
    code, report = run(capsys, store)
    assert code == 0
    code, resumed = sleep(capsys, "resume", store)
    assert code == 0 and resumed["resumed"], resumed
    assert resumed["head_sha"] == report["head_sha"] == tip_of(store)
    statuses = {p["phase"]: p["status"] for p in resumed["phases"]}
    assert len(statuses) == 17
    assert all(statuses[p] == "skipped" for p in ("integrity", "state-export", "report"))

    # A merged run: refused, nothing moves.
    code, merged = sleep(capsys, "merge", store)
    assert code == 0 and merged["merged"]
    before = held(store)
    code, _, err = call_text(capsys, "sleep", "resume", RUN_ID, "--store", str(store))
    assert code == 1 and "already merged" in err, err
    clear(err)
    unchanged(store, before)


# -- stores nobody planned for -------------------------------------------------------------


@pytest.mark.parametrize("bare", [False, True], ids=["checkout", "bare"])
def test_a_run_on_an_unborn_store_refuses_and_creates_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], env: dict[str, str],
        bare: bool) -> None:
    root = tmp_path / ("unborn.git" if bare else "unborn")
    pygit2.init_repository(str(root), bare=bare, initial_head="main")
    listing = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    for dry in ((), ("--dry-run",)):
        code, answer = run(capsys, root, *dry)
        assert code == 1, answer
        # An unborn repository was never made a store: refused before a run is planned.
        assert answer["code"] == "ERR_NOT_A_STORE", answer
    for command in ("merge", "status", "plan", "resume", "abort", "review"):
        code, out, err = call_text(capsys, "sleep", command, "--store", str(root))
        assert code == 1, (command, out, err)
        clear(err)
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == listing, \
        "nothing created"


def test_a_run_and_merge_on_a_bare_repository(
        demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "store.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(demo), str(root)], check=True,
                   env=env)
    # A bare repository has no checkout to read .memhtml/config.toml from.
    monkeypatch.setenv("MEMHTML_SLEEP_ARCHIVE_SHARE", SHARE_FOR_THE_DEMO)
    main = refs(root)["refs/heads/main"]
    code, report = run(capsys, root)
    assert code == 0, report
    assert report["base_sha"] == main and refs(root)["refs/heads/main"] == main
    code, merged = sleep(capsys, "merge", root)
    assert code == 0 and merged["merged"] and merged["synced"] == [], merged
    assert refs(root)["refs/heads/main"] == report["head_sha"]


EMPTY = PlaneRows((), (), (), ())
GARBAGE = b"this is not a sqlite database" * 100


def _newer_schema(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY)")
    db.execute("INSERT INTO schema_version (version) VALUES (1), (99)")
    db.commit()
    db.close()


def _broken_state(store: Path, kind: str) -> Path:
    path = _state_db(store)
    for stale in path.parent.glob("state.db*"):
        stale.unlink()
    if kind == "garbage":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(GARBAGE)
    else:
        _newer_schema(path)
    return path


@pytest.mark.parametrize("kind", ["garbage", "newer-schema"])
def test_an_unusable_state_database_refuses_the_run_naming_it(
        store: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    path = _broken_state(store, kind)
    data = path.read_bytes()
    main = refs(store)["refs/heads/main"]
    code, report = run(capsys, store)
    assert code == 1, report
    preflight = report["phases"][0]
    assert preflight["status"] == "failed" and str(path) in preflight["reason"], preflight
    assert ("newer than this memhtml" if kind == "newer-schema" else "not a usable") in \
        preflight["reason"]
    assert report["commits"] == [] and report["head_sha"] == report["base_sha"] == main
    assert {p["status"] for p in report["phases"][1:]} == {"blocked"}
    assert path.read_bytes() == data, "the file is left exactly as it was"
    assert sorted(p.name for p in path.parent.glob("state.db*")) == ["state.db"]
    assert refs(store)["refs/heads/main"] == main
    # A dry run refuses the same way, and writes nothing either.
    code, dry = run(capsys, store, "--dry-run")
    assert code == 1 and str(path) in dry["phases"][0]["reason"]
    assert path.read_bytes() == data


def test_a_run_refused_for_its_state_database_leaves_no_branch(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _broken_state(store, "garbage")
    before = refs(store)
    code, _ = run(capsys, store)
    assert code == 1
    assert refs(store) == before, "a refused run created nothing"
    _state_db(store).unlink()
    code, report = run(capsys, store)
    assert code == 0 and report["run_id"] == RUN_ID, "the day's name is still free"


def test_an_empty_run_is_refused_by_merge(
        store: Path, capsys: pytest.CaptureFixture[str], env: dict[str, str]) -> None:
    # A branch with no commit: what a run killed just after its cut leaves.
    git(store, env, "branch", BRANCH, "main")
    code, status = sleep(capsys, "status", store)
    assert code == 0 and status["runs"][0]["state"] == "empty"
    before = held(store)
    code, merged = sleep(capsys, "merge", store)
    unchanged(store, before)
    assert (code, merged["merged"], merged["refusal"]) == (1, False, "empty"), merged
    assert merged["marks_pending"] is None and merged["marks_applied"] is None


def _odd_files(store: Path, env: dict[str, str]) -> dict[str, bytes]:
    """A person's files no phase can read, each linking to an archived and a deleted
    memory, and a readable memory linking to each of them. Returns the odd files by
    path (a symbolic link by its target)."""
    checkout = store / "areas" / "checkout"
    broken = checkout / "broken.html"
    broken.write_text(
        "<!doctype html><html><head><title>Broken</title></head><body><p>No article, no "
        f'claim. <a href="/{ARCHIVED}">archived</a> <a href="/{DELETED}">deleted</a></p>'
        "</body></html>\n", encoding="utf-8")
    latin = checkout / "latin1.html"
    latin.write_bytes(
        b'<!doctype html><html><head><meta charset="utf-8"><title>Caf\xe9</title></head>'
        b'<body><article><p><mark>Caf\xe9 \xff\xfe</mark></p><a href="/' + ARCHIVED.encode()
        + b'">x</a></article></body></html>\n')
    os.symlink("checkout-api-overview.html", checkout / "alias.html")
    os.symlink(f"../../{DELETED}", store / "areas" / "oncall" / "dangling-alias.html")
    os.symlink(f"../../{ARCHIVED}", store / "areas" / "oncall" / "archived-alias.html")
    odd = ("areas/checkout/broken.html", "areas/checkout/latin1.html",
           "areas/checkout/alias.html", "areas/oncall/dangling-alias.html",
           "areas/oncall/archived-alias.html")
    linker = store / LINKER
    anchor = f'<link rel="memhtml-relates-to" href="/{DELETED}">\n'
    text = linker.read_text(encoding="utf-8")
    assert anchor in text
    linker.write_text(text.replace(anchor, anchor + "".join(
        f'<link rel="memhtml-relates-to" href="/{path}">\n' for path in odd)),
        encoding="utf-8")
    git(store, env, "add", "-A")
    git(store, env, *PERSON, "commit", "-q", "-m", "a person's odd files")
    return {path: (os.readlink(store / path).encode() if (store / path).is_symlink()
                   else (store / path).read_bytes()) for path in odd}


def test_unreadable_and_symlinked_files_are_never_moved_or_rewritten(
        store: Path, capsys: pytest.CaptureFixture[str], env: dict[str, str]) -> None:
    odd = _odd_files(store, env)
    base = refs(store)["refs/heads/main"]
    before = {path: entries(store, base)[path] for path in odd}
    code, report = run(capsys, store)
    assert code == 0, report
    phases = {p["phase"]: p for p in report["phases"]}
    assert phases["preflight"]["counts"]["skipped"] >= len(odd)
    integrity = phases["integrity"]
    assert integrity["counts"]["unreadable_targets"] == len(odd), integrity
    assert integrity["counts"]["repaired"] and integrity["counts"]["dropped"], integrity
    assert any(LINKER in w and "not a readable memory" in w for w in integrity["warnings"])
    tip = tip_of(store)
    at_tip = entries(store, tip)
    assert {path: at_tip.get(path) for path in odd} == before
    blob = pygit2.Repository(str(store))[at_tip[LINKER][1]]
    assert isinstance(blob, pygit2.Blob)
    linker = blob.data.decode()
    assert all(f'href="/{path}"' in linker for path in odd), "the edges to them are left"
    assert f'href="/{DELETED}"' not in linker
    moved = [p for p in at_tip if any(p.endswith(name) and p != name for name in odd)]
    assert moved == [], "none of them was moved (under archive/ or anywhere)"

    code, merged = sleep(capsys, "merge", store)
    assert code == 0 and merged["merged"], merged
    assert {path: entries(store, refs(store)["refs/heads/main"]).get(path)
            for path in odd} == before
    for path, data in odd.items():
        target = store / path
        now = os.readlink(target).encode() if target.is_symlink() else target.read_bytes()
        assert now == data, path
    assert porcelain(store, env) == []
    assert checkout_findings(store) == []


def test_a_symlinked_generated_page_is_never_rewritten(
        store: Path, capsys: pytest.CaptureFixture[str], env: dict[str, str]) -> None:
    page = store / "areas" / "oncall" / "index.html"
    page.unlink()
    os.symlink("../checkout/sakura-auth-timeout-8s.html", page)
    git(store, env, "add", "-A")
    git(store, env, *PERSON, "commit", "-q", "-m", "my own index")
    path = "areas/oncall/index.html"
    before = entries(store, refs(store)["refs/heads/main"])[path]
    code, report = run(capsys, store)
    assert code == 0, report
    assert entries(store, tip_of(store)).get(path) == before


def test_a_symlinked_access_export_fails_its_phase_and_is_left(
        store: Path, capsys: pytest.CaptureFixture[str], env: dict[str, str]) -> None:
    export = store / ".memhtml" / "state" / "access.jsonl"
    export.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(f"../../{LINKED}", export)
    git(store, env, "add", "-A")
    git(store, env, *PERSON, "commit", "-q", "-m", "a link where the export goes")
    path = ".memhtml/state/access.jsonl"
    before = entries(store, refs(store)["refs/heads/main"])[path]
    code, report = run(capsys, store)
    assert code == 1, "a phase failed"
    phases = {p["phase"]: p for p in report["phases"]}
    assert phases["state-export"]["status"] == "failed"
    assert "symbolic link" in phases["state-export"]["reason"]
    assert phases["integrity"]["status"] == "done" and phases["report"]["status"] == "done"
    assert report["failed"] == ["state-export"]
    assert entries(store, tip_of(store))[path] == before


def test_a_run_while_a_persons_git_holds_the_index_lock(
        store: Path, capsys: pytest.CaptureFixture[str], env: dict[str, str]) -> None:
    lock = store / ".git" / "index.lock"
    lock.write_bytes(b"")
    code, report = run(capsys, store)
    assert code == 0, "commits are built in memory: the run needs no index"
    assert lock.exists() and lock.read_bytes() == b""
    before = held(store)
    code, out, err = call_text(capsys, "sleep", "merge", "--store", str(store))
    assert code == 1 and "index.lock" in err and "nothing was written" in err, (out, err)
    clear(err)
    unchanged(store, before)
    assert lock.exists(), "a lock a live git may hold is never taken away"
    lock.unlink()
    code, merged = sleep(capsys, "merge", store)
    assert code == 0 and merged["merged"] and not merged["checkout_pending"], merged
    assert refs(store)["refs/heads/main"] == report["head_sha"]
    assert porcelain(store, env) == []


def test_a_persons_commit_beside_the_run_is_kept_and_the_run_lands_on_it(
        store: Path, capsys: pytest.CaptureFixture[str], env: dict[str, str]) -> None:
    code, report = run(capsys, store)
    assert code == 0
    note = store / "notes.txt"
    note.write_text("mine\n", encoding="utf-8")
    git(store, env, "add", "notes.txt")
    git(store, env, *PERSON, "commit", "-q", "-m", "a person's own commit")
    mine = refs(store)["refs/heads/main"]
    code, status = sleep(capsys, "status", store)
    assert code == 0 and status["runs"][0]["state"] == "main-advanced"
    code, merged = sleep(capsys, "merge", store)
    assert code == 0 and merged["merged"] and not merged["fast_forwarded"], merged
    assert merged["replayed_onto"] == mine
    main = refs(store)["refs/heads/main"]
    assert merged["merge_commit"] == main
    repo = pygit2.Repository(str(store))
    assert [str(p) for p in repo[main].peel(pygit2.Commit).parent_ids] == [
        mine, report["head_sha"]]
    assert (store / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert (store / f".memhtml/sleep/{RUN_ID}.html").is_file()
    assert porcelain(store, env) == []
    code, status = sleep(capsys, "status", store)
    assert code == 0 and status["runs"][0]["state"] == "merged"


def test_a_persons_edit_of_a_file_the_run_changed_refuses_naming_it(
        store: Path, capsys: pytest.CaptureFixture[str], env: dict[str, str]) -> None:
    code, _ = run(capsys, store)
    assert code == 0
    assert LINKER in tree_paths(store, tip_of(store), changed_from="main")
    path = store / LINKER
    path.write_text(path.read_text(encoding="utf-8").replace(
        "</article>", "<p>A person's own line.</p>\n</article>"), encoding="utf-8")
    git(store, env, "add", LINKER)
    git(store, env, *PERSON, "commit", "-q", "-m", "a person's edit")
    before = held(store)
    code, refused = sleep(capsys, "merge", store)
    assert code == 1 and refused["refusal"] == "conflict", refused
    assert refused["code"] == "ERR_MERGE_CONFLICT" and refused["conflicts"] == [LINKER]
    assert refused["violations"] == [LINKER] and LINKER in refused["error"]
    assert refused["marks_pending"] is None and refused["marks_applied"] is None
    unchanged(store, before)
    code, out, err = call_text(capsys, "sleep", "merge", "--store", str(store))
    assert code == 1 and LINKER in out + err, (out, err)
    # The operator runs again: the next run is cut at the new main, and merges.
    code, again = run(capsys, store)
    assert code == 0 and again["run_id"] == f"{RUN_ID}-2"
    code, merged = sleep(capsys, "merge", store)
    assert code == 0 and merged["merged"] and merged["fast_forwarded"], merged
    assert "A person's own line." in path.read_text(encoding="utf-8")
    assert porcelain(store, env) == []


def tree_paths(root: Path, rev: str, *, changed_from: str) -> set[str]:
    """Paths whose blob differs between ``changed_from`` and ``rev``."""
    out = subprocess.run(["git", "diff", "--name-only", changed_from, rev], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_a_ledger_line_that_does_not_parse_is_counted_and_skipped(
        store: Path, capsys: pytest.CaptureFixture[str], env: dict[str, str]) -> None:
    code, _ = run(capsys, store)
    assert code == 0
    ledger = (b"not json at all\n"
              b'{"kind":"session-consolidated","session":"by-hand"}\n'
              b'{"kind":"edge-promoted","key":"k"}\n'
              b'["a list"]\n'
              b'{"kind":"no-such-kind","session":"x"}\n'
              b"\xff\xfe\n"
              b"\n")
    hand_commit_on(store, BRANCH, [PathChange(ledger_path(RUN_ID), ledger)],
                   "a person's edit of the ledger")
    code, status = sleep(capsys, "status", store)
    assert code == 0 and status["runs"][0]["state"] == "mergeable", status
    code, review = sleep(capsys, "review", store)
    assert code == 0 and review["run_id"] == RUN_ID
    code, merged = sleep(capsys, "merge", store)
    assert code == 0 and merged["merged"], merged
    assert (merged["marks_pending"], merged["marks_applied"], merged["marks_unparsed"]) == \
        (1, 1, 5), merged
    rows = state_of(store)
    assert isinstance(rows, PlaneRows)
    assert [row[:2] for row in rows.consolidations] == [("by-hand", RUN_ID)]
    assert porcelain(store, env) == []


def test_a_memory_deleted_by_hand_on_the_branch_refuses_the_merge(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = run(capsys, store)
    assert code == 0
    # A memory of the base the run left live (the night archives what decayed into
    # the evict band, and an archived memory is not lost).
    base, tip = entries(store, report["base_sha"]), entries(store, tip_of(store))
    victim = LINKED if LINKED in tip else min(
        p for p in base.keys() & tip.keys()
        if p.startswith("areas/") and p.endswith(".html") and not p.endswith("index.html"))
    hand_commit_on(store, BRANCH, [PathChange(victim, None)], "a careless deletion")
    before = held(store)
    code, refused = sleep(capsys, "merge", store)
    assert code == 1 and refused["refusal"] == "lost", refused
    assert refused["lost"] == [victim] and victim in refused["reason"]
    assert refused["marks_pending"] is None
    unchanged(store, before)


def test_two_runs_the_same_day(store: Path, capsys: pytest.CaptureFixture[str],
                               env: dict[str, str]) -> None:
    main = refs(store)["refs/heads/main"]
    code, first = run(capsys, store)
    assert code == 0 and first["run_id"] == RUN_ID
    code, second = run(capsys, store)
    assert code == 0 and second["run_id"] == f"{RUN_ID}-2", second
    assert first["base_sha"] == second["base_sha"] == main
    assert first["stamp"] == second["stamp"]
    assert refs(store)["refs/heads/main"] == main, "no run moves main"
    code, status = sleep(capsys, "status", store)
    assert [(r["run_id"], r["state"]) for r in status["runs"]] == [
        (f"{RUN_ID}-2", "mergeable"), (RUN_ID, "mergeable")]
    # The same input at the same instant: two runs make the same tree, but for the files
    # named by the run (its report, its decisions, and its ledger when a phase recorded
    # anything).
    apart = entries(store, first["head_sha"]).keys() - entries(store, second["head_sha"]).keys()
    assert f".memhtml/sleep/{RUN_ID}.html" in apart
    assert {p for p in apart if not is_decisions_path(p, RUN_ID)} <= {
        f".memhtml/sleep/{RUN_ID}.html", ledger_path(RUN_ID)}
    code, merged = sleep(capsys, "merge", store)
    assert code == 0 and merged["run_id"] == f"{RUN_ID}-2"
    before = held(store)
    code, refused = sleep(capsys, "merge", store, RUN_ID)
    assert code == 1 and refused["refusal"] == "main-advanced"
    unchanged(store, before)
    # The third run's name: -2 is on main (its report), the first still has its branch.
    code, third = run(capsys, store)
    assert code == 0 and third["run_id"] == f"{RUN_ID}-3", third
    assert porcelain(store, env) == []


def test_status_review_and_plan_read_a_refused_store_without_writing(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _broken_state(store, "garbage")
    before = held(store)
    code, plan = sleep(capsys, "plan", store)
    assert code == 0 and plan["verdict"] != "no-signal", plan
    code, status = sleep(capsys, "status", store)
    assert code == 0 and status["runs"] == []
    unchanged(store, before)
    assert path.read_bytes() == GARBAGE
    assert json.dumps(plan)  # a plain answer


def test_two_runs_started_at_once_take_two_names(
        store: Path, tmp_path: Path, env: dict[str, str]) -> None:
    main = refs(store)["refs/heads/main"]
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda n: child(store, 0, env, tmp_path / f"trace-{n}", "sleep",
                                             "run", "--json", busy=False), (1, 2)))
    assert [d.code for d in done] == [0, 0], [d.output for d in done]
    ids = sorted(json.loads(d.stdout)["run_id"] for d in done)
    assert ids == [RUN_ID, f"{RUN_ID}-2"]
    assert refs(store)["refs/heads/main"] == main
    assert tip_of(store) != tip_of(store, f"{BRANCH}-2")
