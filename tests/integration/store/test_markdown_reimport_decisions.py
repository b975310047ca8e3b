"""A re-import never undoes what the person did in the store, through the command line
on a real store.

The person imports a folder, then works on the memories: labels one, links it to
another, removes an edge the note made, corrects one memory and archives another.
They edit every note and import again. The corrected and the archived memories stay
as the store has them (each named, since its note changed), the edited notes' new
versions keep the label and the store's link (moved to the new version of its
target) and leave out the edge the person removed; ``--revive`` brings an archived
note back on request. A note the import itself archived (its file had gone) comes
back when the file does.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.cli.cli_support import call, call_text, git_log

NOTES = {
    "deploy.md": "---\nname: Deploy\n---\nDeploys happen on Tuesdays. After [[lunch]].\n",
    "coffee.md": "Coffee is brewed at nine.\n",
    "lunch.md": "Lunch is at noon.\n",
    "standup.md": "Standup is at ten.\n",
    "oncall.md": "On-call changes on Mondays.\n",
}
HOME = "areas/imported/"


def _write(root: Path, files: dict[str, str]) -> None:
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")


def _live(store: Path) -> dict[str, dict[str, Any]]:
    """Each live memory under the import's directory, by path: its whole record as the
    head reads it (its note, entities, links)."""
    from memhtml.contracts.record import MemoryRecord
    from memhtml.head.record import record_from

    out: dict[str, dict[str, Any]] = {}
    listed = subprocess.run(["git", "-C", str(store), "ls-files", HOME], check=True,
                            capture_output=True, text=True).stdout.split()
    for path in listed:
        if not path.endswith(".html"):
            continue
        record: MemoryRecord = record_from((store / path).read_text(encoding="utf-8"),
                                           path).unwrap()
        source = record.source
        out[path] = {"source": source, "entities": set(record.entities),
                     "links": {(link.rel, link.href) for link in record.links},
                     "claim": record.claim}
    return out


def _by_source(live: dict[str, dict[str, Any]]) -> dict[str | None, str]:
    return {memory["source"]: path for path, memory in live.items()}


def test_store_decisions_survive_a_reimport(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    store, notes = tmp_path / "store", tmp_path / "notes"
    s = ("--store", str(store), "--json")
    assert call(capsys, "init", str(store), "--json")[0] == 0
    _write(notes, NOTES)
    code, first = call(capsys, "import", "markdown", str(notes), *s)
    assert code == 0 and len(first["added"]) == 5, first
    deploy = f"{HOME}deploy.html"
    assert ("relates_to", f"/{HOME}lunch.html") in _live(store)[deploy]["links"]
    for tokens in (("label", deploy, "person:priya"),
                   ("link", deploy, "supports", f"/{HOME}oncall.html"),
                   ("unlink", deploy, "relates_to", f"/{HOME}lunch.html"),
                   ("correct", f"{HOME}coffee.html", "--title", "Coffee",
                    "--claim", "Coffee is brewed at eight."),
                   ("archive", f"{HOME}standup.html")):
        code, answer = call(capsys, *tokens, *s)
        assert code == 0, (tokens, answer)
    _write(notes, {name: text + "\nEdited in the folder.\n" for name, text in NOTES.items()})
    before = len(git_log(store))

    code, again = call(capsys, "import", "markdown", str(notes), *s)
    assert code == 0, again
    assert len(git_log(store)) == before + 1
    assert again["added"] == [] and again["revived"] == []
    assert sorted(c["file"] for c in again["changed"]) == ["deploy.md", "lunch.md", "oncall.md"]
    kept = {k["file"]: k for k in again["kept"]}
    assert set(kept) == {"coffee.md", "standup.md"}, again["kept"]
    assert kept["coffee.md"]["decision"] == "corrected"
    assert kept["coffee.md"]["by"] == f"{HOME}coffee-2.html"
    assert kept["standup.md"]["decision"] == "archived"
    assert all(k["note_changed"] and k["path"].startswith("archive/") for k in kept.values())

    live = _live(store)
    where = _by_source(live)
    assert "standup.md" not in where and "coffee.md" not in where, \
        "no archived or corrected memory is brought back"
    assert live[f"{HOME}coffee-2.html"]["claim"] == "Coffee is brewed at eight.", \
        "the person's correction is the live fact"
    new_deploy = live[where["deploy.md"]]
    assert new_deploy["entities"] == {"person:priya"}, "the label is carried"
    assert ("supports", "/" + where["oncall.md"]) in new_deploy["links"], \
        "the store's link is carried, to the new version of its target"
    assert not any(href.endswith(("/lunch.html", "/" + where["lunch.md"]))
                   for _, href in new_deploy["links"]), \
        "the edge the person removed stays removed though the note still makes it"
    carried = next(c for c in again["changed"] if c["file"] == "deploy.md")["carried"]
    assert carried["entities"] == ["person:priya"]
    assert carried["kept_unlinked"] == [{"rel": "relates_to", "href": "/" + where["lunch.md"]}]

    code, out, err = call_text(capsys, "import", "markdown", str(notes), "--store", str(store))
    assert code == 0
    text = out + err
    assert "nothing to commit" in text and "2 kept as the store left them" in text, text
    assert f"kept archived: {kept['standup.md']['path']} (archived in the store on " in text
    assert "the note standup.md changed; --revive standup.md brings it back)" in text
    assert (f"kept corrected: {kept['coffee.md']['path']} (corrected in the store on "
            in text) and f"by {HOME}coffee-2.html" in text

    code, revived = call(capsys, "import", "markdown", str(notes), "--revive", "standup.md",
                         "--revive", "nothing.md", *s)
    assert code == 0, revived
    assert [r["file"] for r in revived["revived"]] == ["standup.md"]
    assert [k["file"] for k in revived["kept"]] == ["coffee.md"]
    assert _by_source(_live(store))["standup.md"] == revived["revived"][0]["path"]


def test_a_note_the_import_archived_comes_back_with_its_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The import archived the memory because the note had gone; the note back in the
    folder is the person's decision there, so it is imported again, not kept."""
    store, notes = tmp_path / "store", tmp_path / "notes"
    s = ("--store", str(store), "--json")
    assert call(capsys, "init", str(store), "--json")[0] == 0
    _write(notes, {"a.md": "A is one.\n", "b.md": "B is two.\n"})
    assert call(capsys, "import", "markdown", str(notes), *s)[0] == 0
    (notes / "a.md").unlink()
    code, gone = call(capsys, "import", "markdown", str(notes), *s)
    assert code == 0 and [a["file"] for a in gone["archived"]] == ["a.md"], gone
    _write(notes, {"a.md": "A is one, again.\n"})
    code, back = call(capsys, "import", "markdown", str(notes), *s)
    assert code == 0, back
    assert [a["file"] for a in back["added"]] == ["a.md"] and back["kept"] == [], back
    log = subprocess.run(["git", "-C", str(store), "log", "-1", "--format=%B"], check=True,
                         capture_output=True, text=True).stdout
    assert "Memhtml-Import: areas/imported/" in log


def test_an_edge_the_person_removed_is_not_put_back(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unchanged note's memory gains only the links to memories this import writes;
    the edge the person removed from it stays removed."""
    store, notes = tmp_path / "store", tmp_path / "notes"
    s = ("--store", str(store), "--json")
    assert call(capsys, "init", str(store), "--json")[0] == 0
    _write(notes, {"a.md": "A links [[b]] and [[c]].\n", "b.md": "B is two.\n"})
    assert call(capsys, "import", "markdown", str(notes), *s)[0] == 0
    a = f"{HOME}a.html"
    assert call(capsys, "unlink", a, "relates_to", f"/{HOME}b.html", *s)[0] == 0
    _write(notes, {"c.md": "C is three.\n"})
    code, step = call(capsys, "import", "markdown", str(notes), *s)
    assert code == 0 and [x["file"] for x in step["added"]] == ["c.md"], step
    links = _live(store)[a]["links"]
    assert ("relates_to", f"/{HOME}c.html") in links, "the link to the new note is made"
    assert ("relates_to", f"/{HOME}b.html") not in links, "the removed edge stays removed"


def test_who_archived_is_read_past_later_edits_of_the_archived_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Archiving a memory rewrites every link to it, archived files included, so an
    archived file may be touched after the commit that archived it; the history is
    read back to that commit, for the import's archive and the person's alike."""
    store, notes = tmp_path / "store", tmp_path / "notes"
    s = ("--store", str(store), "--json")
    assert call(capsys, "init", str(store), "--json")[0] == 0
    _write(notes, {"gone.md": "Gone links [[b]].\n", "kept.md": "Kept links [[b]].\n",
                   "b.md": "B is two.\n"})
    assert call(capsys, "import", "markdown", str(notes), *s)[0] == 0
    (notes / "gone.md").unlink()
    assert call(capsys, "import", "markdown", str(notes), *s)[0] == 0
    assert call(capsys, "archive", f"{HOME}kept.html", *s)[0] == 0
    touched = len(git_log(store))
    assert call(capsys, "archive", f"{HOME}b.html", *s)[0] == 0
    changed = subprocess.run(["git", "-C", str(store), "show", "--name-only", "--format=",
                              "HEAD"], check=True, capture_output=True, text=True).stdout
    assert "archive/" in changed and len(git_log(store)) == touched + 1
    assert sum(f"imported/{name}.html" in changed for name in ("gone", "kept")) == 2, \
        "the later archive rewrote both archived files' links"
    _write(notes, {"gone.md": "Gone links [[b]], back.\n", "kept.md": "Kept, edited.\n",
                   "b.md": "B is two.\n"})
    code, answer = call(capsys, "import", "markdown", str(notes), *s)
    assert code == 0, answer
    assert [a["file"] for a in answer["added"]] == ["gone.md"], answer
    assert sorted(k["file"] for k in answer["kept"]) == ["b.md", "kept.md"], answer
