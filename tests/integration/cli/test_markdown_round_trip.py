"""A notes folder through ``memhtml import markdown`` and ``memhtml export markdown`` and
back, and ``md verify``/``md query`` beside them, through the command line on real
stores: each test is one point of the round trip the issue asked for (docs/design.md,
"Markdown interop").
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memhtml.contracts.record import MemoryRecord
from memhtml.head.record import record_from
from tests.integration.cli.cli_support import call, call_text
from tests.property.markdown_support import note_difference, store_difference

FOLDER = {
    "user_profile.md": (
        "---\nname: User profile\ndescription: The user is a data engineer.\n"
        "type: user\nowner: priya\nversion: 1.10\npinned: \"012\"\n---\n\n"
        "# Profile\n\nThey like [[deploy_window|deploys]] and [[on_call]].\n\n"
        "## Steps\n\n1. one\n2. two\n\n```bash\nmake\n```\n\n3. three\n4. four\n\n"
        "> quoted\n>\n> > nested\n"),
    "user-profile.md": "---\ntype: reference\n---\n\nA second note whose slug collides.\n",
    "deploy_window.md": ("---\ntype: project\naliases: [release day]\n---\n\n"
                         "Deploys happen on Tuesdays. Never on a Friday.\n\n"
                         "### Why\n\nThe on-call is rested.\n"),
    "on_call.md": "---\ntype: feedback\n---\n\nOn-call rotates on Mondays.\n",
}
HOME = "areas/imported/"


def _folder(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _store(capsys: pytest.CaptureFixture[str], root: Path) -> tuple[str, ...]:
    assert call(capsys, "init", str(root), "--json")[0] == 0
    return ("--store", str(root), "--json")


def _import(capsys: pytest.CaptureFixture[str], folder: Path, s: tuple[str, ...],
            *extra: str) -> dict[str, Any]:
    code, answer = call(capsys, "import", "markdown", str(folder), *extra, *s)
    assert code == 0, answer
    return answer  # type: ignore[no-any-return]


def _export(capsys: pytest.CaptureFixture[str], out: Path, s: tuple[str, ...]
            ) -> dict[str, str]:
    code, answer = call(capsys, "export", "markdown", str(out), *s)
    assert code == 0, answer
    return {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(out.rglob("*.md"))}


def _records(store: Path) -> list[MemoryRecord]:
    listed = subprocess.run(["git", "-C", str(store), "ls-files", "*.html"], check=True,
                            capture_output=True, text=True).stdout.split()
    out = []
    for path in listed:
        if path.startswith(("archive/", "memhtml-site/")) or path.endswith("index.html"):
            continue
        out.append(record_from((store / path).read_text(encoding="utf-8"), path).unwrap())
    return out


def test_a_notes_folder_comes_back_as_it_was_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Headings stay headings, an ordered list broken by a code block keeps its
    numbering, quotes nest, ``type`` and the other keys come back exactly, file names
    are the notes' own (two colliding slugs included), and inline wikilinks stay
    inline links: every note, up to formatting."""
    notes = _folder(tmp_path / "notes", FOLDER)
    s = _store(capsys, tmp_path / "store")
    answer = _import(capsys, notes, s)
    placed = {a["file"]: a["path"] for a in answer["added"]}
    assert placed["user-profile.md"] == f"{HOME}user-profile.html"
    assert placed["user_profile.md"] == f"{HOME}user-profile-2.html", \
        "colliding slugs: the notes in path order, the second at the next free name"
    html = (tmp_path / "store" / placed["user_profile.md"]).read_text(encoding="utf-8")
    assert '<strong aria-level="2" role="heading">Steps</strong>' in html
    assert '<ol start="3">' in html and "<aside><p>quoted</p>\n<aside>" in html
    assert ('<a data-wikilink="deploy_window" href="/areas/imported/deploy-window.html">'
            "deploys</a>") in html

    exported = _export(capsys, tmp_path / "out", s)
    assert sorted(exported) == sorted(HOME + name for name in FOLDER), \
        "every file at its own name"
    for name, text in FOLDER.items():
        assert note_difference(text, exported[HOME + name]) is None, (name, exported)
    profile = exported[HOME + "user_profile.md"]
    for line in ("type: user", "owner: priya", "version: 1.10", 'pinned: "012"',
                 "## Steps", "3. three", "> > nested",
                 "They like [[deploy_window|deploys]] and [[on_call]]."):
        assert line in profile, (line, profile)
    assert "edges:" not in profile, "a link the body makes is not listed again"
    assert exported[HOME + "user-profile.md"].startswith("---\ntype: reference\n---\n")


def test_provenance_is_metadata_and_does_not_pile_up(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The note's path and digest are head metas: a search for them finds nothing, no
    export writes them, and export -> import -> export gives the same files."""
    notes = _folder(tmp_path / "notes", FOLDER)
    first = _store(capsys, tmp_path / "one")
    _import(capsys, notes, first)
    for words in ("memhtml-source", "user_profile.md"):
        code, found = call(capsys, "search", words, *first)
        assert code == 0 and not found["hits"], (words, found)
    once = _export(capsys, tmp_path / "out1", first)
    assert not any("memhtml-source" in text for text in once.values())
    second = _store(capsys, tmp_path / "two")
    _import(capsys, tmp_path / "out1" / "areas" / "imported", second)
    twice = _export(capsys, tmp_path / "out2", second)
    assert twice == once


def test_a_note_edited_twice_keeps_a_short_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each edit lands through ``correct`` at a new path; the name counts from the
    note's own slug again, so it alternates instead of growing (``-2-2``)."""
    notes = _folder(tmp_path / "notes", {"on_call.md": FOLDER["on_call.md"]})
    s = _store(capsys, tmp_path / "store")
    paths = [_import(capsys, notes, s)["added"][0]["path"]]
    for edit in ("Tuesdays", "Wednesdays", "Thursdays"):
        (notes / "on_call.md").write_text(FOLDER["on_call.md"].replace("Mondays", edit),
                                          encoding="utf-8")
        paths.append(_import(capsys, notes, s)["changed"][0]["path"])
    assert paths == [f"{HOME}on-call.html", f"{HOME}on-call-2.html", f"{HOME}on-call.html",
                     f"{HOME}on-call-2.html"]


def test_md_verify_resolves_links_as_the_import_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A link by title (any case), by alias, by path, one in code (no link), one to a
    store's document path: what the import resolves, verify does not report; the one
    the import leaves unresolved, verify reports."""
    notes = _folder(tmp_path / "notes", {
        **FOLDER,
        "notes/team_lead.md": "---\nname: Team lead\n---\n\nPriya leads the team.\n",
        "links.md": ("See [[USER PROFILE]], [[release day]], [[notes/team_lead]], "
                     "[[Team Lead#Duties|the lead]], `[[in code]]`, "
                     "[[/archive/2026/areas/x.html|an old one]] and [[missing note]].\n"),
    })
    code, verified = call(capsys, "md", "verify", "--wikilinks", "--root", str(notes),
                          "--json")
    assert code == 1
    assert [f["subject"] for f in verified["findings"]] == ["missing note"], verified
    s = _store(capsys, tmp_path / "store")
    answer = _import(capsys, notes, s)
    assert [(u["file"], u["target"]) for u in answer["unresolved"]] == [
        ("links.md", "missing note")]


def test_md_query_prints_a_name_as_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = _folder(tmp_path / "notes", {
        "deploy.md": "---\nname: Deploy checklist\ntype: procedure\n---\n\n"
                     "Run the smoke checks before every deploy.\n"})
    code, out, _ = call_text(capsys, "md", "query", "smoke", "checks", "--root", str(notes),
                             "--no-cache")
    assert code == 0, out
    assert 'name="Deploy checklist" type=procedure at=deploy.md:' in out, out
    assert "\\x20" not in out


def test_import_exits_0_when_what_it_could_import_landed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = _folder(tmp_path / "notes", {
        **FOLDER, "empty.md": "---\nname: empty\n---\n",
        "broken.md": "---\nname: [unclosed\n---\nText.\n"})
    s = _store(capsys, tmp_path / "store")
    code, out, err = call_text(capsys, "import", "markdown", str(notes), *s[:2])
    assert code == 0, (out, err)
    assert re.search(r"^[0-9a-f]{12}: 4 added, .* 2 not converted", out, re.M), out
    assert "not converted: broken.md:" in err and "not converted: empty.md:" in err


def test_the_demo_store_comes_back_whole(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Store first: the demo store exported and imported into a new store holds the
    same records (entities, importance, confidence, due dates, every task status,
    ``supersedes`` edges to archived memories...), paths and provenance aside."""
    demo = tmp_path / "demo"
    assert call(capsys, "demo", "--dir", str(demo), "--json")[0] == 0
    _export(capsys, tmp_path / "out", ("--store", str(demo), "--json"))
    s = _store(capsys, tmp_path / "again")
    answer = _import(capsys, tmp_path / "out", s, "--dir", "")
    assert not answer["unresolved"] and not answer["skipped"], answer
    before, after = _records(demo), _records(tmp_path / "again")
    assert len(before) == 52
    assert {r.task_status for r in before} >= {"doing", "blocked"}
    assert any(link.rel == "supersedes" for r in before for link in r.links)
    assert store_difference(before, after, ("imported",)) == []


def test_a_file_the_write_door_refuses_is_left_out_and_the_rest_lands(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The import leaves the format check to the write door; a note whose file the
    door refuses (here: within the source cap, but over a memory file's once its
    ``<`` are escaped) is listed with the door's reason, and the others land in one
    commit."""
    wide = "A wide note. " + "<" * 400_000 + "\n"
    notes = _folder(tmp_path / "notes", {**FOLDER, "wide.md": wide})
    s = _store(capsys, tmp_path / "store")
    answer = _import(capsys, notes, s)
    assert sorted(a["file"] for a in answer["added"]) == sorted(FOLDER)
    assert [k["file"] for k in answer["skipped"]] == ["wide.md"]
    assert "not written" in answer["skipped"][0]["reason"], answer["skipped"]
    assert answer["commit"]


@pytest.mark.parametrize("source", ["foo/", ".md", "..md"])
def test_a_source_naming_no_file_exports_under_the_store_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str) -> None:
    """A committed ``memhtml-source`` (a cloned store's, untrusted) naming a folder or
    a bare suffix gives no hidden dotfile: the memory exports under its own name."""
    from memhtml.format import content_hash, set_meta

    store = tmp_path / "store"
    assert call(capsys, "init", str(store), "--json")[0] == 0
    code, wrote = call(capsys, "write", "--title", "Note", "--claim", "A note.",
                       "--store", str(store), "--json")
    assert code == 0, wrote
    path = store / str(wrote["path"])
    text = set_meta(path.read_text(encoding="utf-8"), "memhtml-source", source)
    path.write_text(set_meta(text, "memhtml-content-hash", content_hash(text)),
                    encoding="utf-8")
    subprocess.run(["git", "-C", str(store), "-c", "user.name=P", "-c",
                    "user.email=p@example.org", "commit", "-qam", "source"], check=True)
    out = tmp_path / "out"
    assert call(capsys, "export", "markdown", str(out), "--store", str(store),
                "--json")[0] == 0
    assert sorted(p.name for p in out.rglob("*.md")) == ["note.md"]
