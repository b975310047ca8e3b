"""The curation phases with no model, fed what a careless or hostile person writes by
hand: files that parse but say odd things, duplicates beside archived, task, linked
and unreadable copies, archive paths already held, detected tasks edited, closed or
deleted by hand between nights.

Each test builds its own store from one demo store made once per module, adds a
person's files in a commit of their own, and runs ``memhtml sleep`` through the CLI's
entry with the system clock pinned (moved a day per night). Whatever the input, a run
ends with an exit code and a report, never a traceback; nothing is lost (every base
memory is active at the tip or at ``archive/<YYYY>/<path>``); tasks, symbolic links and
unreadable files are left byte for byte.

A test marked ``xfail(strict=True)`` pins a defect: its reason says how to reproduce it
and what goes wrong.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pygit2
import pytest

from memhtml.adapters.clock import SystemClock
from memhtml.eval.planted_embedder import ScriptedEmbedder
from memhtml.format import parse_memory
from tests.integration.cli.cli_support import call_text
from tests.integration.sleep.planted_support import serve_embeddings
from tests.integration.sleep.sleep_support import (
    RUN_AT,
    RUN_ID,
    build_sleep_demo,
    run_in_subprocess,
)
from tests.integration.store.checkout_support import (
    PERSON,
    clean_environment,
    git,
    porcelain,
)

YEAR = RUN_AT.year
LINK_MODE = pygit2.enums.FileMode.LINK
_DETECTED = re.compile(r"areas/tasks/det-[0-9a-f]{12}-[^/]+\.html")


# -- fixtures ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("curation") / "store"
    build_sleep_demo(root)
    return root


@dataclass
class Clock:
    """The instant the pinned system clock reads; ``night(n)`` moves it n days on."""

    at: datetime = RUN_AT

    def night(self, n: int) -> None:
        self.at = RUN_AT + timedelta(days=n)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    pinned = Clock()
    monkeypatch.setattr(SystemClock, "now", lambda self: pinned.at)
    return pinned


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, clock: Clock) -> dict[str, str]:
    return clean_environment(monkeypatch, tmp_path / "home")


@pytest.fixture
def store(demo: Path, tmp_path: Path, env: dict[str, str]) -> Path:
    root = tmp_path / "store"
    shutil.copytree(demo, root, symlinks=True)
    return root


# -- a person's files ----------------------------------------------------------------------


def memory(title: str, claim: str, *, kind: str = "semantic", created: str = "2026-06-01T09:00:00Z",
           status: str = "active", body: str = "", metas: Sequence[tuple[str, str]] = (),
           entities: Sequence[str] = (), aliases: Sequence[str] = (),
           links: Sequence[tuple[str, str]] = ()) -> str:
    """A memory file as a person types it. Values go in as written (escape them)."""
    head = [
        "<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f"<title>{title}</title>",
        f'<meta name="memhtml-type" content="{kind}">',
        f'<meta name="memhtml-status" content="{status}">',
        f'<meta name="memhtml-created" content="{created}">',
        f'<meta name="memhtml-updated" content="{created}">',
    ]
    if status == "archived":
        head.append('<meta name="memhtml-archived" content="2026-07-01T00:00:00Z">')
    if kind == "task" and not any(name == "memhtml-task-status" for name, _ in metas):
        head.append('<meta name="memhtml-task-status" content="todo">')
    head += [f'<meta name="{name}" content="{value}">' for name, value in metas]
    head += [f'<meta name="memhtml-entity" content="{e}">' for e in entities]
    head += [f'<meta name="memhtml-alias" content="{a}">' for a in aliases]
    head += [f'<link rel="memhtml-{rel}" href="{href}">' for rel, href in links]
    tail = f" {body}" if body else ""
    return "\n".join([*head, "</head>", "<body>", "<article>",
                      f"<p><mark>{claim}</mark>{tail}</p>", "</article>", "</body>", "</html>",
                      ""])


def put(root: Path, path: str, content: str | bytes) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)


def symlink(root: Path, path: str, target: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, root / path)


HAND_DATE = "2026-11-29T12:00:00Z"
"""Every hand commit's date, so two stores given the same files have the same commits."""


def commit(root: Path, env: dict[str, str], message: str = "a person's own files",
           when: str = HAND_DATE) -> str:
    """Everything in the checkout committed by a person at ``when``, which is also when
    the files arrived on the branch (the day decay and grace count from)."""
    dated = {**env, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    git(root, dated, "add", "-A")
    git(root, dated, *PERSON, "commit", "-q", "-m", message)
    return git(root, dated, "rev-parse", "HEAD").stdout.strip()


# -- the commands ------------------------------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *tokens: str) -> tuple[int, Any, str]:
    """One command in this process: exit code, stdout as JSON, stderr. Never a traceback."""
    code, out, err = call_text(capsys, *tokens)
    assert "Traceback" not in out + err, out + err
    return code, json.loads(out) if out.strip() else None, err


def night(capsys: pytest.CaptureFixture[str], root: Path, *phases: str,
          dry: bool = False) -> dict[str, Any]:
    """``sleep run`` over ``root`` (only ``phases`` when given); its report. Every
    phase that ran must have ended ``done``."""
    tokens = [token for phase in phases for token in ("--phase", phase)]
    code, report, err = cli(capsys, "sleep", "run", *(["--dry-run"] if dry else []),
                            *tokens, "--store", str(root), "--json")
    assert isinstance(report, dict), err
    bad = [(p["phase"], p["status"], p.get("reason")) for p in report["phases"]
           if p["status"] not in ("done", "not-selected", "not-built")]
    assert code == 0 and not bad, bad
    return report


def merge(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    code, merged, err = cli(capsys, "sleep", "merge", "--store", str(root), "--json")
    assert code == 0 and merged["merged"], (merged, err)


def phase(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in report["phases"] if p["phase"] == name)


def counts(report: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = phase(report, name)["counts"]
    return found


# -- reading a commit ----------------------------------------------------------------------------


def tree(root: Path, rev: str) -> dict[str, tuple[int, str]]:
    """Every path of ``rev``'s tree: its mode and blob."""
    repo = pygit2.Repository(str(root))
    found: dict[str, tuple[int, str]] = {}

    def walk(node: pygit2.Tree, prefix: str) -> None:
        for entry in node:
            if entry.type_str == "tree":
                walk(repo[entry.id].peel(pygit2.Tree), f"{prefix}{entry.name}/")
            else:
                found[f"{prefix}{entry.name}"] = (int(entry.filemode), str(entry.id))

    walk(repo.revparse_single(rev).peel(pygit2.Tree), "")
    return found


def text(root: Path, rev: str, path: str) -> str:
    repo = pygit2.Repository(str(root))
    blob = repo.revparse_single(f"{rev}:{path}")
    assert isinstance(blob, pygit2.Blob), path
    return blob.data.decode("utf-8")


def metas(html: str, name: str) -> list[str]:
    return re.findall(rf'<meta name="{name}" content="([^"]*)">', html)


def links(html: str, rel: str) -> list[str]:
    return re.findall(rf'<link rel="memhtml-{rel}" href="([^"]*)">', html)


def _generated(path: str) -> bool:
    return (path.startswith("memhtml-site/") or path.rsplit("/", 1)[-1] == "index.html"
            or not path.endswith(".html"))


def assert_nothing_lost(root: Path, base: str, tip: str) -> None:
    """Every memory active at ``base`` is active at ``tip`` or at archive/<YYYY>/<path>;
    every task, symbolic link and file that does not parse is byte for byte as it was,
    unless an archive elsewhere rewrote a task's href to the file it moved."""
    repo = pygit2.Repository(str(root))
    before, after = tree(root, base), tree(root, tip)
    for path, (mode, blob) in before.items():
        if _generated(path) or path.startswith("archive/"):
            continue
        data = repo[blob].peel(pygit2.Blob).data
        parsed = None if mode == LINK_MODE else parse_memory(
            data.decode("utf-8", errors="strict") if _utf8(data) else "", path).value_or(None)
        if parsed is None:
            assert after.get(path) == (mode, blob), f"{path} (unreadable or a link) changed"
            continue
        if parsed.metas.status != "active":
            continue
        assert path in after or f"archive/{YEAR}/{path}" in after, f"{path} was lost"


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def detected(root: Path, rev: str) -> list[str]:
    return sorted(p for p in tree(root, rev) if _DETECTED.fullmatch(p))


def refs(root: Path) -> dict[str, str]:
    repo = pygit2.Repository(str(root))
    return {name: str(repo.references[name].resolve().target)
            for name in repo.references if name.startswith("refs/")}


def state_rows(root: Path) -> list[str] | None:
    """Every row of the state database, as SQL text (None when there is none)."""
    path = root / ".git" / "memhtml" / "state.db"
    if not path.exists():
        return None
    db = sqlite3.connect(path)
    try:
        return list(db.iterdump())
    finally:
        db.close()


def reads(capsys: pytest.CaptureFixture[str], root: Path, path: str, times: int = 1) -> None:
    """A person reading a memory (each read is logged in the state plane)."""
    for _ in range(times):
        code, _, err = cli(capsys, "read", path, "--store", str(root), "--json")
        assert code == 0, err


# == entity-resolution and person-links ========================================================


def test_odd_but_parseable_entity_values_are_respelled_or_left(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    odd = "areas/odd/entities.html"
    put(store, odd, memory("Odd entities", "This memory names odd entities.", entities=[
        "service:Checkout   API", "service:cafe\u0301", "service:caf\u00e9", "service:---",
        "person:", "tool:\u65e5\u672c\u8a9e", "nocolon", ":noname", "service:a&amp;b",
        "person:\u00c9LODIE"]))
    put(store, "areas/odd/other.html", memory("Odd two", "Another memory names odd ones.",
                                              entities=["person:\u00e9lodie", "service:a&b"]))
    base = commit(store, env)
    report = night(capsys, store, "entity-resolution", "person-links")
    assert phase(report, "entity-resolution")["warnings"] == []
    tip = report["head_sha"]
    entities = metas(text(store, tip, odd), "memhtml-entity")
    # Casing, spacing and separators fold onto the name the store already uses; the
    # two Unicode spellings of one word become one line; what names nothing is left.
    assert "service:checkout-api" in entities and "service:Checkout   API" not in entities
    assert entities.count("service:caf\u00e9") == 1 and "service:cafe\u0301" not in entities
    for kept in ("service:---", "person:", "tool:\u65e5\u672c\u8a9e", "nocolon", ":noname"):
        assert kept in entities, kept
    assert "person:\u00e9lodie" in entities
    minted = [p for p in tree(store, tip).keys() - tree(store, base).keys()
              if p.startswith("resources/people/") and not _generated(p)]
    assert minted == ["resources/people/elodie.html"], minted
    home = text(store, tip, minted[0])
    assert metas(home, "memhtml-author") == ["agent:sleep"]
    assert metas(home, "memhtml-entity") == ["person:\u00e9lodie"]
    for path in (odd, "areas/odd/other.html"):
        assert links(text(store, tip, path), "about-person") == [f"/{minted[0]}"]
    assert_nothing_lost(store, base, tip)


def test_one_value_that_cannot_be_respelled_does_not_hold_back_its_file(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    path = "areas/odd/mixed.html"
    put(store, path, memory("Mixed", "This memory names a team oddly.",
                            entities=["Team:Platform", "person:Ines Marechal"]))
    base = commit(store, env)
    report = night(capsys, store, "entity-resolution", "person-links")
    tip = report["head_sha"]
    assert_nothing_lost(store, base, tip)
    assert "resources/people/ines-marechal-2.html" not in tree(store, tip)
    assert "person:ines-marechal" in metas(text(store, tip, path), "memhtml-entity")


def test_a_person_file_naming_no_one_declares_no_aliases(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    put(store, "resources/people/nobody.html", memory(
        "Nobody", "A person file that names no one.", entities=["person:"],
        aliases=["kenji-sato", "tomasz-wojcik"]))
    base = commit(store, env)
    report = night(capsys, store, "entity-resolution", "person-links")
    tip = report["head_sha"]
    assert_nothing_lost(store, base, tip)
    assert counts(report, "entity-resolution")["merged"] == 0
    kenji = text(store, tip, "resources/people/kenji-sato.html")
    assert "person:kenji-sato" in metas(kenji, "memhtml-entity")


def test_a_roster_under_people_does_not_fuse_the_people_it_names(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    put(store, "resources/people/oncall-roster.html", memory(
        "On-call roster", "The on-call roster lists who carries the pager.",
        entities=["person:priya-raman", "person:ines-marechal", "person:kenji-sato"]))
    base = commit(store, env)
    report = night(capsys, store, "entity-resolution", "person-links")
    tip = report["head_sha"]
    assert_nothing_lost(store, base, tip)
    for name in ("ines-marechal", "kenji-sato", "priya-raman"):
        own = text(store, tip, f"resources/people/{name}.html")
        assert f"person:{name}" in metas(own, "memhtml-entity"), name


def test_markup_in_entity_names_stays_text_in_every_file_the_night_writes(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    put(store, "areas/odd/markup-a.html", memory("Markup A", "Memory a names marked-up things.",
                                                 entities=[
        "Team:&lt;SCRIPT&gt;alert(1)&lt;/SCRIPT&gt;", "service:&lt;i&gt;billing-core",
        "person:&lt;b&gt;Evil&lt;/b&gt;"]))
    put(store, "areas/odd/markup-b.html", memory("Markup B", "Memory b names marked-up things.",
                                                 entities=["service:&lt;b&gt;billing-cron"]))
    base = commit(store, env)
    report = night(capsys, store)
    tip = report["head_sha"]
    assert_nothing_lost(store, base, tip)
    written = [p for p, entry in tree(store, tip).items()
               if entry != tree(store, base).get(p) and p.endswith(".html")]
    tasks = [p for p in written if _DETECTED.fullmatch(p)]
    minted = [p for p in written if p.startswith("resources/people/") and not _generated(p)
              and p not in tree(store, base)]
    assert len(tasks) == 1 and len(minted) == 1, (tasks, minted)
    for path in written:
        page = text(store, tip, path)
        # Markup from a name may sit in an attribute value, never in the document.
        outside = re.sub(r'"[^"]*"', '""', page).lower()
        assert "<script" not in outside and "<b>" not in outside and "<i>" not in outside, path
    for path in (*tasks, *minted):
        assert parse_memory(text(store, tip, path), path).value_or(None) is not None, path


def test_an_alias_naming_another_persons_file_is_taken_at_its_word(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    # A declared alias is a person's assertion of identity and merges on night one, even
    # when it is the name another person file carries: that is how two files for one
    # person are joined. The name with more memories survives; no file is lost.
    put(store, "resources/people/alice-ng.html", memory(
        "Alice Ng", "Alice Ng leads the payments team.", entities=["person:alice-ng"],
        aliases=["priya-raman"]))
    put(store, "areas/odd/alice.html", memory("Alice review", "Alice reviewed the retries.",
                                              entities=["person:alice-ng"]))
    base = commit(store, env)
    report = night(capsys, store, "entity-resolution", "person-links")
    tip = report["head_sha"]
    assert_nothing_lost(store, base, tip)
    after = tree(store, tip)
    assert counts(report, "person-links")["files_minted"] == 0
    assert "resources/people/alice-ng.html" in after
    for path in ("resources/people/alice-ng.html", "areas/odd/alice.html"):
        assert metas(text(store, tip, path), "memhtml-entity") == ["person:priya-raman"]
    assert links(text(store, tip, "areas/odd/alice.html"), "about-person") == [
        "/resources/people/priya-raman.html"]


def test_two_files_for_one_person_link_to_the_older(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    put(store, "resources/people/kenji.html", memory(
        "Kenji again", "Kenji Sato is the vendor contact.", entities=["person:Kenji Sato"],
        created="2026-10-01T00:00:00Z"))
    put(store, "areas/odd/kenji-call.html", memory(
        "Vendor call", "Kenji moved the vendor call to Fridays.", entities=["person:kenji-sato"]))
    base = commit(store, env)
    report = night(capsys, store, "entity-resolution", "person-links")
    tip = report["head_sha"]
    assert_nothing_lost(store, base, tip)
    assert counts(report, "person-links")["files_minted"] == 0
    home = "/resources/people/kenji-sato.html"
    for path in ("resources/people/kenji.html", "areas/odd/kenji-call.html"):
        assert links(text(store, tip, path), "about-person") == [home], path
        assert metas(text(store, tip, path), "memhtml-entity") == ["person:kenji-sato"]
    assert links(text(store, tip, "resources/people/kenji-sato.html"), "about-person") == []


def test_a_task_under_people_is_no_ones_person_file(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    task = "resources/people/bob-lee.html"
    put(store, task, memory("Bob Lee", "Call Bob Lee about the on-call swap.", kind="task",
                            entities=["person:bob-lee"], aliases=["bobby"]))
    put(store, "areas/odd/bob.html", memory("Bob note", "Bob Lee owns the pager rota.",
                                            entities=["person:bob-lee", "person:bobby"]))
    base = commit(store, env)
    report = night(capsys, store, "entity-resolution", "person-links")
    tip = report["head_sha"]
    assert_nothing_lost(store, base, tip)
    assert tree(store, tip)[task] == tree(store, base)[task], "the task is never touched"
    note = text(store, tip, "areas/odd/bob.html")
    # A task's alias declares nothing, and the memory links to a minted person file,
    # never to the task.
    assert metas(note, "memhtml-entity") == ["person:bob-lee", "person:bobby"]
    homes = links(note, "about-person")
    assert f"/{task}" not in homes and len(homes) == 2
    assert all(metas(text(store, tip, h.lstrip("/")), "memhtml-author") == ["agent:sleep"]
               for h in homes)


def test_a_person_file_path_held_by_an_unreadable_file_or_a_link(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    put(store, "resources/people/zed-quux.html", b"<p>not a memory \xff</p>\n")
    symlink(store, "resources/people/yan-li.html", "kenji-sato.html")
    put(store, "areas/odd/people.html", memory(
        "Two people", "Zed and Yan rotate the pager.",
        entities=["person:zed-quux", "person:yan-li"]))
    base = commit(store, env)
    report = night(capsys, store, "entity-resolution", "person-links")
    tip = report["head_sha"]
    assert_nothing_lost(store, base, tip)
    assert counts(report, "person-links")["files_minted"] == 2
    homes = sorted(links(text(store, tip, "areas/odd/people.html"), "about-person"))
    assert homes == ["/resources/people/yan-li-2.html", "/resources/people/zed-quux-2.html"]


def test_review_band_and_guarded_names_become_tasks_that_close_when_resolved(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    for n, name in enumerate(("billing-core", "billing-cron", "postgres-14", "postgres-15")):
        put(store, f"areas/odd/{name}.html", memory(
            f"About {name}", f"Memory {n} is about {name}.", entities=[f"service:{name}"]))
    base = commit(store, env)
    first = night(capsys, store, "entity-resolution")
    done = counts(first, "entity-resolution")
    assert (done["merged"], done["review_candidates"], done["tasks_minted"]) == (0, 2, 2), done
    tasks = detected(store, first["head_sha"])
    assert len(tasks) == 2
    for path in tasks:
        task = text(store, first["head_sha"], path)
        assert metas(task, "memhtml-tag") == ["detected", "entity-resolution"]
        assert "measured (ratio)" in task
    assert_nothing_lost(store, base, first["head_sha"])
    merge(capsys, store)
    # A person settles one pair by hand; the other is still in doubt.
    cron = store / "areas/odd/billing-cron.html"
    cron.write_text(cron.read_text(encoding="utf-8").replace(
        "service:billing-cron", "service:billing-core"), encoding="utf-8")
    commit(store, env, "billing-cron is billing-core")
    clock.night(1)
    second = night(capsys, store, "entity-resolution")
    again = counts(second, "entity-resolution")
    # The pair still in doubt stands as its task states it: left alone, not restamped.
    assert (again["tasks_minted"], again["tasks_unchanged"], again["tasks_closed"]) == (0, 1, 1)
    left = detected(store, second["head_sha"])
    assert len(left) == 1 and "postgres" in left[0]
    closed = next(p for p in tasks if p not in left)
    assert f"archive/{YEAR}/{closed}" in tree(store, second["head_sha"])
    body = git(store, env, "log", "-1", "--format=%B", second["head_sha"]).stdout
    assert "no longer detected" in body


# == dedup-merge ============================================================================


def test_thirty_copies_fold_into_the_oldest_in_one_night(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    copies = [f"areas/flood/copy-{n:02d}.html" for n in range(30)]
    for n, path in enumerate(copies):
        # The newest copy has the smallest minute but the latest day: age decides.
        created = f"2026-05-{1 + n:02d}T09:{59 - n:02d}:00Z"
        put(store, path, memory("Flood copy", "The flood gate closes at 18:00 on weekdays.",
                                created=created, body="Ops confirmed it."))
    base = commit(store, env)
    report = night(capsys, store, "dedup-merge")
    done = counts(report, "dedup-merge")
    assert (done["folded"], done["hash_twins"], done["vetoed"], done["capped"]) == (29, 29, 0, 0)
    tip = report["head_sha"]
    after = tree(store, tip)
    keeper = text(store, tip, copies[0])
    assert sorted(links(keeper, "supersedes")) == [f"/archive/{YEAR}/{p}" for p in copies[1:]]
    for path in copies[1:]:
        assert path not in after
        archived = text(store, tip, f"archive/{YEAR}/{path}")
        assert metas(archived, "memhtml-superseded-by") == [f"/{copies[0]}"]
        assert metas(archived, "memhtml-status") == ["archived"]
    assert_nothing_lost(store, base, tip)
    # The next night finds nothing more to fold.
    merge(capsys, store)
    again = night(capsys, store, "dedup-merge")
    assert counts(again, "dedup-merge")["folded"] == 0
    assert again["commits"] == []


def test_a_copy_whose_original_is_archived_a_task_a_link_or_unreadable_is_not_folded(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    later = "2026-08-01T00:00:00Z"
    put(store, f"archive/{YEAR}/areas/odd/old.html", memory(
        "Old", "The archived claim is stated twice.", status="archived",
        created="2026-01-01T00:00:00Z"))
    put(store, "areas/odd/new.html", memory("Old", "The archived claim is stated twice.",
                                            created=later))
    task = "areas/tasks/check-the-boiler.html"
    put(store, task, memory("Check the boiler", "Check the boiler pressure every Monday.",
                            kind="task", created="2026-01-01T00:00:00Z"))
    put(store, "areas/odd/boiler.html", memory(
        "Check the boiler", "Check the boiler pressure every Monday.", created=later))
    put(store, "areas/odd/orig.html", memory("Linked", "The linked claim is stated once.",
                                             created=later))
    symlink(store, "areas/odd/aaa-link.html", "orig.html")
    latin = memory("Latin", "The latin claim is stated twice.", created="2026-03-01T00:00:00Z",
                   body="Caf\u00e9.")
    put(store, "areas/odd/latin-old.html", latin.encode("latin-1"))
    put(store, "areas/odd/latin-new.html", latin.replace("2026-03-01", "2026-08-01"))
    base = commit(store, env)
    report = night(capsys, store, "dedup-merge")
    done = counts(report, "dedup-merge")
    assert (done["folded"], done["vetoed"], done["tasks_minted"]) == (0, 0, 0), done
    assert report["commits"] == []
    assert counts(report, "preflight")["skipped"] >= 2
    assert_nothing_lost(store, base, report["head_sha"])
    after = tree(store, report["head_sha"])
    for path in (task, "areas/odd/boiler.html", "areas/odd/aaa-link.html",
                 "areas/odd/latin-old.html"):
        assert after[path] == tree(store, base)[path], path


def test_an_archive_path_already_taken_is_a_counted_refusal(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    pairs = ("memory", "junk", "link")
    for name in pairs:
        for suffix, created in (("a", "2026-03-01T00:00:00Z"), ("b", "2026-08-01T00:00:00Z")):
            put(store, f"areas/odd/{name}-{suffix}.html", memory(
                name.title(), f"The {name} claim is stated twice.", created=created))
    taken = {name: f"archive/{YEAR}/areas/odd/{name}-b.html" for name in pairs}
    put(store, taken["memory"], memory("Someone else", "A different memory, archived earlier.",
                                       status="archived"))
    put(store, taken["junk"], b"not a memory at all \xff\n")
    symlink(store, taken["link"], "memory-b.html")
    put(store, "areas/odd/fold-a.html", memory("Fold", "The fold claim is stated twice.",
                                               created="2026-03-01T00:00:00Z"))
    put(store, "areas/odd/fold-b.html", memory("Fold", "The fold claim is stated twice.",
                                               created="2026-08-01T00:00:00Z"))
    base = commit(store, env)
    report = night(capsys, store, "dedup-merge")
    done = counts(report, "dedup-merge")
    # An earlier archive of the same path only sends the fold to the year's next folder;
    # a file that is not a memory (junk, a link) holding the name refuses it.
    assert (done["folded"], done["refused"]) == (2, 2), done
    warnings = phase(report, "dedup-merge")["warnings"]
    assert len(warnings) == 2 and all("is a file that is not a memory" in w
                                      for w in warnings), warnings
    tip = report["head_sha"]
    before, after = tree(store, base), tree(store, tip)
    for name in pairs:
        assert after[taken[name]] == before[taken[name]], name
    for name in ("junk", "link"):
        assert after[f"areas/odd/{name}-b.html"] == before[f"areas/odd/{name}-b.html"]
        assert links(text(store, tip, f"areas/odd/{name}-a.html"), "supersedes") == []
    assert "areas/odd/memory-b.html" not in after
    assert links(text(store, tip, "areas/odd/memory-a.html"), "supersedes") == [
        f"/archive/{YEAR}-2/areas/odd/memory-b.html"]
    assert links(text(store, tip, "areas/odd/fold-a.html"), "supersedes") == [
        f"/archive/{YEAR}/areas/odd/fold-b.html"]
    assert_nothing_lost(store, base, tip)


WARMER = ("The epsilon cache warmer runs before every deploy of the storefront and the "
          "checkout api in all regions during the weekly release window")


def test_mined_pairs_fold_or_are_vetoed_and_a_task_is_never_a_partner(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMHTML_EMBEDDER", "hashing")
    early, late = "2026-03-01T00:00:00Z", "2026-08-01T00:00:00Z"
    put(store, "areas/near/on.html", memory("Warmer", f"{WARMER} and it is enabled.",
                                            created=early))
    put(store, "areas/near/off.html", memory("Warmer", f"{WARMER} and it is not enabled.",
                                             created=late))
    task = "areas/tasks/warmer-task.html"
    put(store, task, memory("Warmer task", f"{WARMER} as of today.", kind="task",
                            created="2026-01-01T00:00:00Z"))
    put(store, "areas/near/after-task.html", memory("Warmer task", f"{WARMER} as of today!",
                                                    created=late))
    put(store, "areas/near/zeta-a.html", memory("Zeta", f"The zeta{WARMER[3:]}.", created=early))
    put(store, "areas/near/zeta-b.html", memory("Zeta", f"The zeta{WARMER[3:]} today.",
                                                created=late))
    base = commit(store, env)
    assert cli(capsys, "embed", "--store", str(store), "--json")[0] == 0
    report = night(capsys, store, "dedup-merge")
    done = counts(report, "dedup-merge")
    assert (done["mined"], done["folded"], done["vetoed_negation"], done["tasks_minted"]) == (
        2, 1, 1, 1), done
    tip = report["head_sha"]
    after = tree(store, tip)
    assert "areas/near/zeta-b.html" not in after
    assert links(text(store, tip, "areas/near/zeta-a.html"), "supersedes") == [
        f"/archive/{YEAR}/areas/near/zeta-b.html"]
    (found,) = detected(store, tip)
    statement = text(store, tip, found)
    assert re.search(r"\(cosine 0\.9[2-9]\d\d\)", statement) and "(negation)" in statement
    assert after[task] == tree(store, base)[task]
    assert "areas/near/after-task.html" in after
    assert_nothing_lost(store, base, tip)


def test_dedup_merge_alone_commits_only_its_own_phase(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    put(store, "areas/odd/one-a.html", memory("One", "The one claim is stated twice.",
                                              created="2026-03-01T00:00:00Z",
                                              entities=["person:Zed Quux"],
                                              metas=[("memhtml-valid-until", "2026-01-01")]))
    put(store, "areas/odd/one-b.html", memory("One", "The one claim is stated twice.",
                                              created="2026-08-01T00:00:00Z",
                                              entities=["person:Zed Quux"],
                                              metas=[("memhtml-valid-until", "2026-01-01")]))
    base = commit(store, env)
    report = night(capsys, store, "dedup-merge")
    statuses = {p["phase"]: p["status"] for p in report["phases"]}
    assert statuses["preflight"] == statuses["dedup-merge"] == "done"
    assert {s for p, s in statuses.items() if p not in ("preflight", "dedup-merge")} <= {
        "not-selected", "not-built"}
    assert len(report["commits"]) == 1
    tip = report["head_sha"]
    changed = {p for p in tree(store, base).keys() | tree(store, tip).keys()
               if tree(store, base).get(p) != tree(store, tip).get(p)}
    # The fold, and the run's record of it (its decisions file).
    assert changed == {"areas/odd/one-a.html", "areas/odd/one-b.html",
                       f"archive/{YEAR}/areas/odd/one-b.html",
                       f".memhtml/sleep/{report['run_id']}.dedup-merge.decisions.jsonl"}, changed
    assert_nothing_lost(store, base, tip)


def test_retention_triage_counts_an_archive_path_already_taken(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    # Retention reads the post-merge set, so it runs only with dedup-merge. A first run,
    # aborted, says which memories the evict band holds.
    main = refs(store)["refs/heads/main"]
    probe = night(capsys, store, "dedup-merge", "retention-triage")
    evicted = sorted(p for p in tree(store, probe["head_sha"]).keys() - tree(store, main).keys()
                     if p.startswith(f"archive/{YEAR}/"))
    assert len(evicted) == counts(probe, "retention-triage")["evict"] >= 2
    assert cli(capsys, "sleep", "abort", RUN_ID, "--store", str(store), "--json")[0] == 0
    occupied = evicted[0]
    target = occupied.removeprefix(f"archive/{YEAR}/")
    # A file that is not a memory holds the name (an earlier archive of the path would
    # only send this one to the year's next folder).
    put(store, occupied, b"not a memory at all \xff\n")
    base = commit(store, env)
    report = night(capsys, store, "dedup-merge", "retention-triage")
    done = counts(report, "retention-triage")
    assert (done["evict"], done["refused"], done["archived"]) == (
        len(evicted), 1, len(evicted) - 1), done
    assert any("is a file that is not a memory" in w
               for w in phase(report, "retention-triage")["warnings"])
    tip = report["head_sha"]
    assert tree(store, tip)[occupied] == tree(store, base)[occupied]
    assert tree(store, tip)[target] == tree(store, base)[target]
    assert_nothing_lost(store, base, tip)


# == detected tasks edited by hand ===========================================================


def _flip(root: Path, name: str, negated: bool = True) -> None:
    """Two files with one claim whose bodies disagree: a frame-key pair the veto refuses."""
    put(root, f"areas/flip/{name}-a.html", memory(
        f"Flag {name}", f"The {name} flag is set in production.",
        created="2026-03-01T00:00:00Z", body=f"The {name} feature is enabled."))
    second = (f"The {name} feature is not enabled." if negated
              else f"The {name} flag was removed.")
    put(root, f"areas/flip/{name}-b.html", memory(
        f"Flag {name}" if negated else f"Flag {name} gone",
        f"The {name} flag is set in production." if negated else second,
        created="2026-08-01T00:00:00Z", body=second if negated else ""))


def _first_night_task(store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
                      ) -> tuple[str, str]:
    """A vetoed pair's task minted and merged; (its path, the tip that minted it)."""
    _flip(store, "alpha")
    commit(store, env)
    report = night(capsys, store, "dedup-merge")
    done = counts(report, "dedup-merge")
    assert (done["vetoed"], done["vetoed_negation"], done["tasks_minted"]) == (1, 1, 1), done
    tasks = detected(store, report["head_sha"])
    assert len(tasks) == 1
    task = text(store, report["head_sha"], tasks[0])
    assert metas(task, "memhtml-author") == ["agent:sleep"]
    assert "measured (predicate): negation" in task
    merge(capsys, store)
    return tasks[0], report["head_sha"]


def test_a_detected_task_edited_by_hand_keeps_the_edit(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    path, _ = _first_night_task(store, env, capsys)
    task = store / path
    task.write_text(task.read_text(encoding="utf-8").replace(
        "</article>", "<p>Checked with ops: both stand for now.</p>\n</article>"),
        encoding="utf-8")
    base = commit(store, env, "my notes on the task")
    clock.night(1)
    report = night(capsys, store, "dedup-merge")
    done = counts(report, "dedup-merge")
    # The finding stands as the task states it: the task, note and all, is left alone,
    # and the night has nothing else to do.
    assert (done["tasks_minted"], done["tasks_refreshed"], done["tasks_unchanged"]) == (
        0, 0, 1), done
    assert report["quiet"] and report["head_sha"] == base and not report["commits"]
    assert detected(store, base) == [path]
    assert "Checked with ops: both stand for now." in text(store, base, path)


def test_a_detected_task_set_done_in_its_file_closes_once_the_finding_goes(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    path, _ = _first_night_task(store, env, capsys)
    task = store / path
    task.write_text(task.read_text(encoding="utf-8").replace(
        'memhtml-task-status" content="todo"', 'memhtml-task-status" content="done"'),
        encoding="utf-8")
    commit(store, env, "done with it")
    clock.night(1)
    second = night(capsys, store, "dedup-merge")
    assert counts(second, "dedup-merge")["tasks_minted"] == 0
    assert detected(store, second["head_sha"]) == [path]
    # Nothing else changed: that night had nothing to do, so there is nothing to merge.
    assert second["quiet"] and not second["commits"]
    _flip(store, "alpha", negated=False)
    base = commit(store, env, "the flag is gone")
    clock.night(2)
    third = night(capsys, store, "dedup-merge")
    assert counts(third, "dedup-merge")["tasks_closed"] == 1
    assert detected(store, third["head_sha"]) == []
    assert f"archive/{YEAR}/{path}" in tree(store, third["head_sha"])
    assert_nothing_lost(store, base, third["head_sha"])


def test_a_deleted_detected_task_comes_back_once_while_the_finding_stands(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    path, _ = _first_night_task(store, env, capsys)
    (store / path).unlink()
    base = commit(store, env, "I do not want this task")
    clock.night(1)
    report = night(capsys, store, "dedup-merge")
    assert counts(report, "dedup-merge")["tasks_minted"] == 1
    assert detected(store, report["head_sha"]) == [path]
    assert_nothing_lost(store, base, report["head_sha"])


def test_a_persons_own_memory_at_a_detected_tasks_path_is_left_alone(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    path, _ = _first_night_task(store, env, capsys)
    put(store, path, memory("My own note", "I keep my own note at this path."))
    base = commit(store, env, "my note where the task was")
    clock.night(1)
    report = night(capsys, store, "dedup-merge")
    done = counts(report, "dedup-merge")
    assert (done["tasks_blocked"], done["tasks_minted"], done["tasks_closed"]) == (1, 0, 0)
    assert any(path in w for w in phase(report, "dedup-merge")["warnings"])
    assert tree(store, report["head_sha"])[path] == tree(store, base)[path]


def test_a_detected_task_closed_by_a_person_is_not_reopened(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    path, _ = _first_night_task(store, env, capsys)
    code, closed, err = cli(capsys, "task", "status", path, "done", "--store", str(store),
                            "--json")
    assert code == 0 and closed["committed"], err
    base = git(store, env, "rev-parse", "HEAD").stdout.strip()
    clock.night(1)
    report = night(capsys, store, "dedup-merge")
    assert_nothing_lost(store, base, report["head_sha"])
    assert counts(report, "dedup-merge")["tasks_minted"] == 0
    assert detected(store, report["head_sha"]) == []


def test_a_recurring_finding_can_close_its_task_again(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    path, _ = _first_night_task(store, env, capsys)
    for n, negated in ((1, False), (2, True)):
        _flip(store, "alpha", negated=negated)
        commit(store, env, f"the flag, take {n}")
        clock.night(n)
        night(capsys, store, "dedup-merge")
        merge(capsys, store)
    assert detected(store, "main") == [path], "the finding came back"
    _flip(store, "alpha", negated=False)
    base = commit(store, env, "the flag is gone for good")
    clock.night(3)
    report = night(capsys, store, "dedup-merge")
    assert_nothing_lost(store, base, report["head_sha"])
    done = counts(report, "dedup-merge")
    assert (done["tasks_closed"], done["tasks_blocked"]) == (1, 0), done
    # Its first close took this year's archive path: the second goes to the year's next
    # archive folder, and the first stays where it is.
    tip = report["head_sha"]
    assert detected(store, tip) == []
    after = tree(store, tip)
    assert f"archive/{YEAR}/{path}" in after
    assert '<meta name="memhtml-task-status" content="done">' in text(
        store, tip, f"archive/{YEAR}-2/{path}")


# == confidence-decay ========================================================================


A_DAY_BEFORE = "2026-11-29T03:00:00Z"
"""Written and committed a day and an hour before the run: one whole day owed, so one
decay step (a memory's days count from its arrival on the branch)."""

CONFIDENCES = {
    # stated -> stored after one unreinforced day
    "0": "0", "1": "0.92", "0.2": "0.2", "0.205": "0.205", "0.215": "0.20", "0.21": "0.20",
    "0.19": "0.19", "1.0e0": "0.92", "+0.9": "0.83", ".5": "0.47", "0.900000": "0.83",
    "high": "high", "-0.1": "-0.1",
}


def test_confidence_values_at_the_edges(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    paths = {}
    for n, stated in enumerate(CONFIDENCES):
        paths[stated] = f"areas/conf/c{n:02d}.html"
        put(store, paths[stated], memory(f"Confidence {n}", f"Confidence case {n} is stated.",
                                         created=A_DAY_BEFORE,
                                         metas=[("memhtml-confidence", stated)]))
    task = "areas/tasks/confident-task.html"
    put(store, task, memory("A confident task", "Finish the confident task.", kind="task",
                            metas=[("memhtml-confidence", "0.90")]))
    base = commit(store, env, when=A_DAY_BEFORE)
    report = night(capsys, store, "confidence-decay")
    tip = report["head_sha"]
    for stated, path in paths.items():
        before, after = text(store, base, path), text(store, tip, path)
        assert metas(after, "memhtml-confidence") == [CONFIDENCES[stated]], stated
        # Only the confidence line may change: not the updated stamp, nothing else.
        assert before.replace(f'content="{stated}"', f'content="{CONFIDENCES[stated]}"') \
            == after, stated
    assert tree(store, tip)[task] == tree(store, base)[task]
    assert_nothing_lost(store, base, tip)


def _decay_two_nights(store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
                      clock: Clock) -> tuple[str, dict[str, Any]]:
    """Five memories at 0.90 written a day before a merged first night (one step each),
    then: one supports itself, one is read, one is supported by a new memory, one by a
    new task, one nothing. The second night's (a day later) tip and report."""
    for name in ("self", "plain", "read", "supported", "by-task"):
        put(store, f"areas/conf/{name}.html", memory(
            name.title(), f"The {name} memory holds.", created=A_DAY_BEFORE,
            metas=[("memhtml-confidence", "0.90")]))
    commit(store, env, when=A_DAY_BEFORE)
    night(capsys, store, "confidence-decay", "report")
    merge(capsys, store)
    own = store / "areas/conf/self.html"
    own.write_text(own.read_text(encoding="utf-8").replace(
        "</head>", '<link rel="memhtml-supports" href="/areas/conf/self.html">\n</head>'),
        encoding="utf-8")
    put(store, "areas/conf/supporter.html", memory(
        "Supporter", "The supporter backs another memory.",
        links=[("supports", "/areas/conf/supported.html")]))
    put(store, "areas/tasks/backing-task.html", memory(
        "Backing task", "Back the by-task memory.", kind="task",
        links=[("supports", "/areas/conf/by-task.html")]))
    commit(store, env, "new support")
    clock.at = RUN_AT + timedelta(hours=3)
    reads(capsys, store, "areas/conf/read.html")
    clock.night(1)
    report = night(capsys, store, "confidence-decay", "report")
    assert counts(report, "confidence-decay")["last_run"] == RUN_ID
    return report["head_sha"], report


def test_reads_and_new_support_reinforce_a_task_does_not(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    tip, _ = _decay_two_nights(store, env, capsys, clock)
    stated = {name: metas(text(store, tip, f"areas/conf/{name}.html"), "memhtml-confidence")
              for name in ("plain", "read", "supported", "by-task")}
    assert stated == {"plain": ["0.76"], "read": ["0.83"], "supported": ["0.83"],
                      "by-task": ["0.76"]}


def test_a_memory_supporting_itself_is_not_reinforced(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    tip, _ = _decay_two_nights(store, env, capsys, clock)
    assert metas(text(store, tip, "areas/conf/self.html"), "memhtml-confidence") == ["0.76"]


# == reprieve ==============================================================================


BOUNDS = {
    # name: (valid-until, reprieves, read, expected valid-until, reprieves, status)
    "today": ("2026-11-30", None, True, "2026-11-30", None, "active"),
    "yesterday": ("2026-11-29", None, True, "2026-12-13", "1", "active"),
    "second-before": ("2026-11-30T03:59:59Z", None, True, "2026-12-14T03:59:59Z", "1", "active"),
    "at-the-stamp": ("2026-11-30T04:00:00Z", None, True, "2026-11-30T04:00:00Z", None, "active"),
    "leap-day": ("2024-02-29", None, True, "2024-03-14", "1", "active"),
    "year-999": ("0999-12-31T23:59:59Z", None, True, "1000-01-14T23:59:59Z", "1", "active"),
    "far-future": ("9999-12-31", None, True, "9999-12-31", None, "active"),
    "at-max": ("2026-01-01", "3", True, "2026-01-01", "3", "archived"),
    "over-max-padded": ("2026-01-01", "007", True, "2026-01-01", "007", "archived"),
    "last-one": ("2026-01-01", "2", True, "2026-01-15", "3", "active"),
    "padded-two": ("2026-01-01", "0000000000000000000000002", True, "2026-01-15", "3", "active"),
    "unreadable-count": ("2026-01-01", "two", True, "2026-01-15", "1", "active"),
    "never-read": ("2026-01-01", None, False, "2026-01-01", None, "archived"),
    "taken": ("2026-01-01", None, False, "2026-01-01", None, "active"),
}


def test_validity_bounds_in_odd_but_valid_forms(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    for name, (until, count, _, _, _, _) in BOUNDS.items():
        stated = [("memhtml-importance", "10"), ("memhtml-valid-until", until)]
        put(store, f"areas/bounds/{name}.html", memory(
            f"Bound {name}", f"The {name} memory has a validity bound.",
            metas=stated + ([("memhtml-reprieves", count)] if count else [])))
    occupied = f"archive/{YEAR}/areas/bounds/taken.html"
    # A file that is not a memory holds the name (an earlier archive of the path would
    # only send this one to the year's next folder).
    put(store, occupied, b"not a memory at all \xff\n")
    task = "areas/tasks/lapsed-task.html"
    put(store, task, memory("Lapsed task", "A task whose validity lapsed.", kind="task",
                            metas=[("memhtml-valid-until", "2026-01-01")]))
    base = commit(store, env)
    clock.at = RUN_AT - timedelta(hours=1)
    for name, (_, _, read, _, _, _) in BOUNDS.items():
        if read:
            reads(capsys, store, f"areas/bounds/{name}.html", times=3)
    clock.night(0)
    report = night(capsys, store, "reprieve")
    done = counts(report, "reprieve")
    assert (done["expired"], done["reprieved"], done["archived"], done["refused"]) == (
        11, 7, 3, 1), done
    tip = report["head_sha"]
    after = tree(store, tip)
    for name, (_, _, _, until, count, status) in BOUNDS.items():
        path = f"areas/bounds/{name}.html"
        where = path if status == "active" else f"archive/{YEAR}/{path}"
        assert where in after, name
        held = text(store, tip, where)
        assert metas(held, "memhtml-valid-until") == [until], name
        assert metas(held, "memhtml-reprieves") == ([count] if count else []), name
        assert metas(held, "memhtml-status") == [status], name
    assert after[occupied] == tree(store, base)[occupied]
    assert after[task] == tree(store, base)[task]
    assert_nothing_lost(store, base, tip)


def test_a_bound_before_year_1000_is_extended_as_a_valid_date(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    for name, until in (("ancient", "0999-06-01"), ("modern", "2026-01-01")):
        put(store, f"areas/bounds/{name}.html", memory(
            f"Bound {name}", f"The {name} memory has a validity bound.",
            metas=[("memhtml-importance", "10"), ("memhtml-valid-until", until)]))
    base = commit(store, env)
    clock.at = RUN_AT - timedelta(hours=1)
    for name in ("ancient", "modern"):
        reads(capsys, store, f"areas/bounds/{name}.html", times=3)
    clock.night(0)
    code, report, err = cli(capsys, "sleep", "run", "--phase", "reprieve", "--store",
                            str(store), "--json")
    assert code == 0 and phase(report, "reprieve")["status"] == "done", err
    tip = report["head_sha"]
    assert_nothing_lost(store, base, tip)
    assert metas(text(store, tip, "areas/bounds/ancient.html"), "memhtml-valid-until") == [
        "0999-06-15"]
    assert metas(text(store, tip, "areas/bounds/modern.html"), "memhtml-valid-until") == [
        "2026-01-15"]


# == relationship-mining ======================================================================


def _near(root: Path) -> None:
    put(root, "areas/near/a.html", memory(
        "Near A", "The delta service restarts nightly at two.",
        body="Confirmed by ops on Monday in the weekly review meeting notes."))
    put(root, "areas/near/b.html", memory(
        "Near B", "The delta service restarts nightly at two.",
        body="Confirmed by ops on Tuesday in the weekly review meeting notes."))
    put(root, "areas/tasks/near-task.html", memory(
        "Near task", "The delta service restarts nightly at two.", kind="task",
        body="Confirmed by ops on Monday in the weekly review meeting notes."))


def _mined(root: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    db = sqlite3.connect(root / ".git" / "memhtml" / "state.db")
    try:
        sets = db.execute("SELECT id, commit_sha, basis FROM mined_sets ORDER BY id").fetchall()
        edges = db.execute("SELECT set_id, source, target FROM mined_edges "
                           "ORDER BY set_id, ordinal").fetchall()
        return sets, edges
    finally:
        db.close()


def test_mined_edges_are_cached_per_commit_and_per_embedder(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _near(store)
    base = commit(store, env)

    def mine() -> dict[str, Any]:
        report = night(capsys, store, "relationship-mining")
        assert report["commits"] == [] and report["head_sha"] == base
        return phase(report, "relationship-mining")

    monkeypatch.setenv("MEMHTML_EMBEDDER", "hashing")
    assert cli(capsys, "embed", "--store", str(store), "--json")[0] == 0
    first = mine()
    assert (first["counts"]["pairs"], first["observed"]) == (1, {"cached": False})
    with serve_embeddings(ScriptedEmbedder({}, dimension=16, model_id="other-v1")) as url:
        monkeypatch.setenv("MEMHTML_EMBEDDER", "openai")
        monkeypatch.setenv("MEMHTML_EMBED_MODEL", "other-v1")
        monkeypatch.setenv("MEMHTML_EMBED_URL", url)
        assert cli(capsys, "embed", "--store", str(store), "--json")[0] == 0
        other = mine()
        assert (other["counts"]["pairs"], other["observed"]) == (0, {"cached": False})
    monkeypatch.delenv("MEMHTML_EMBED_MODEL")
    monkeypatch.delenv("MEMHTML_EMBED_URL")
    monkeypatch.setenv("MEMHTML_EMBEDDER", "hashing")
    again = mine()
    assert (again["counts"]["pairs"], again["observed"]) == (1, {"cached": True})
    sets, edges = _mined(store)
    assert [(commit_sha, basis.split(";")[0]) for _, commit_sha, basis in sets] == [
        (base, "hashing-v1-256"), (base, "other-v1-16")]
    assert edges == [(sets[0][0], "areas/near/a.html", "areas/near/b.html")], \
        "no edge reaches the task"


# == a dry run ===============================================================================


def _hostile_mix(root: Path) -> None:
    """One of each: a vetoed pair, an exact pair, a person nobody filed, an odd entity,
    an expired memory, a task, a symbolic link and an unreadable file."""
    _flip(root, "beta")
    put(root, "areas/odd/dup-a.html", memory("Dup", "The gamma claim is stated twice.",
                                             created="2026-03-01T00:00:00Z"))
    put(root, "areas/odd/dup-b.html", memory("Dup", "The gamma claim is stated twice.",
                                             created="2026-08-01T00:00:00Z"))
    put(root, "areas/odd/person.html", memory(
        "Zed", "Zed Quux carries the pager.", entities=["person:Zed Quux", "service:Checkout API"],
        metas=[("memhtml-valid-until", "2026-01-01"), ("memhtml-confidence", "0.90")]))
    put(root, "areas/tasks/hand-task.html", memory(
        "Hand task", "The gamma claim is stated twice.", kind="task"))
    put(root, "areas/odd/unreadable.html", b"<p>caf\xe9</p>\n")
    symlink(root, "areas/odd/dup-link.html", "dup-a.html")


@pytest.mark.parametrize("embedder", ["none", "hashing"])
def test_a_dry_run_with_the_curation_phases_writes_nothing(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, embedder: str) -> None:
    monkeypatch.setenv("MEMHTML_EMBEDDER", embedder)
    _hostile_mix(store)
    _near(store)
    commit(store, env)
    if embedder == "hashing":
        assert cli(capsys, "embed", "--store", str(store), "--json")[0] == 0
    reads(capsys, store, "areas/odd/person.html")
    before_refs, before_rows = refs(store), state_rows(store)
    assert before_rows is not None
    listing = sorted(p.relative_to(store).as_posix() for p in store.rglob("*")
                     if ".git" not in p.parts)
    report = night(capsys, store, dry=True)
    assert report["dry_run"] and report["commits"] == []
    assert report["head_sha"] == report["base_sha"] == before_refs["refs/heads/main"]
    dedup = counts(report, "dedup-merge")
    assert dedup["folded"] >= 2 and dedup["tasks_minted"] == 1, dedup
    assert counts(report, "person-links")["files_minted"] == 1
    assert counts(report, "reprieve")["expired"] == 1
    if embedder == "hashing":
        assert counts(report, "relationship-mining")["pairs"] >= 1
    assert refs(store) == before_refs, "no branch, no ref moved"
    assert state_rows(store) == before_rows, "no state-plane row"
    assert sorted(p.relative_to(store).as_posix() for p in store.rglob("*")
                  if ".git" not in p.parts) == listing, "no file written"
    assert porcelain(store, env) == []


# == nights in a row ===========================================================================


def test_two_nights_merged_then_the_third_opens_and_folds_nothing(
        store: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str],
        clock: Clock) -> None:
    _hostile_mix(store)
    base = commit(store, env)
    odd = {p: tree(store, base)[p] for p in ("areas/odd/unreadable.html",
                                             "areas/odd/dup-link.html",
                                             "areas/tasks/hand-task.html")}
    first = night(capsys, store)
    assert counts(first, "dedup-merge")["tasks_minted"] == 1
    merge(capsys, store)
    clock.night(1)
    second = night(capsys, store)
    merge(capsys, store)
    clock.night(2)
    third = night(capsys, store)
    for report in (second, third):
        dedup = counts(report, "dedup-merge")
        assert (dedup["folded"], dedup["tasks_minted"]) == (0, 0), dedup
        entities = counts(report, "entity-resolution")
        assert (entities["merged"], entities["tasks_minted"]) == (0, 0), entities
        assert counts(report, "person-links")["files_minted"] == 0
    # The vetoed pair's task stands as written: found again, left alone.
    assert (counts(third, "dedup-merge")["tasks_refreshed"],
            counts(third, "dedup-merge")["tasks_unchanged"]) == (0, 1)
    tip = third["head_sha"]
    assert_nothing_lost(store, base, tip)
    assert {p: tree(store, tip)[p] for p in odd} == odd
    assert len(detected(store, tip)) == 1


def test_the_hostile_night_is_the_same_under_two_hash_seeds(
        demo: Path, tmp_path: Path, env: dict[str, str]) -> None:
    tips = []
    for seed in ("0", "4242"):
        root = tmp_path / f"seed-{seed}"
        shutil.copytree(demo, root, symlinks=True)
        _hostile_mix(root)
        _flip(root, "delta")
        commit(root, env)
        tips.append(run_in_subprocess(root, seed))
    assert tips[0] == tips[1]
