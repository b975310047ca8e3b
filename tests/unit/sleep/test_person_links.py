"""person-links on a real repository: each memory naming a person links to that
person's file, a person with none gets one minted, and a second run changes nothing."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tests.unit.sleep.sleep_support import AUTHOR, ok
from tests.unit.sleep.test_entity_resolution import (
    PERSON,
    RUN_AT,
    Repo,
    phase_env,
    planted_repo,
    repo,
)

from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.services import PathChange
from memhtml.head import HeadVersion, load_head
from memhtml.sleep.phase import PhaseEnv, PhaseResult
from memhtml.sleep.phases.entity_resolution import entity_resolution
from memhtml.sleep.phases.person_links import find_people, person_links
from memhtml.sleep.tasks import SLEEP_AUTHOR
from memhtml.store import archive

MINTED = "resources/people/priya-raman.html"


def run(env: PhaseEnv) -> PhaseResult:
    return ok(person_links(env))


def about(version: HeadVersion, path: str) -> tuple[str, ...]:
    record = version.get(path)
    assert record is not None, path
    return tuple(link.href for link in record.links if link.rel == "about_person")


def held(version: HeadVersion, path: str) -> MemoryRecord:
    record = version.get(path)
    assert record is not None, path
    return record


def people(tmp_path: Path) -> Repo:
    """Laith has a file (and a younger second one); Priya is named twice, casing
    differing, with no file; a task and an archived memory name Laith; Sanju is named
    only by a task."""
    r = repo(tmp_path)
    r.write(PERSON, "person:laith-al-saadoon", aliases=("Laith",))
    r.write("areas/notes/rota.html", "person:laith-al-saadoon", "team:payments")
    r.write("areas/notes/review.html", "person:laith-al-saadoon", "person:Priya Raman")
    r.write("areas/notes/oncall.html", "person:priya raman")
    r.write("resources/people/laith-2.html", "person:laith-al-saadoon")
    r.write("areas/tasks/ask-laith.html", "person:laith-al-saadoon", "person:sanju",
            memory_type="task")
    old = r.write("areas/notes/old.html", "person:laith-al-saadoon")
    ok(archive(r.store, old))
    return r


def test_people_are_found_with_their_oldest_file(tmp_path: Path) -> None:
    r = people(tmp_path)
    found = find_people(r.version().records())
    assert dict(found.named_by) == {
        "laith-al-saadoon": (
            "areas/notes/review.html", "areas/notes/rota.html",
            "resources/people/laith-2.html", PERSON),
        "priya raman": ("areas/notes/oncall.html", "areas/notes/review.html"),
    }
    assert dict(found.homes) == {"laith-al-saadoon": PERSON}


def test_every_memory_links_to_its_person_and_a_missing_person_is_minted(
        tmp_path: Path) -> None:
    r = people(tmp_path)
    base = r.main()
    result = run(r.env())
    assert dict(result.counts) == {"persons": 2, "files_minted": 1, "links_added": 5}
    assert result.warnings == ()
    (commit,) = result.commits
    assert MINTED in commit.body
    tip = r.land(result)
    after = r.version(tip)
    laith, priya = "/" + PERSON, "/" + MINTED
    assert about(after, "areas/notes/rota.html") == (laith,)
    assert about(after, "areas/notes/review.html") == (laith, priya)
    assert about(after, "areas/notes/oncall.html") == (priya,)
    # The younger file naming Laith is a memory about him; his own file is not.
    assert about(after, "resources/people/laith-2.html") == (laith,)
    assert about(after, PERSON) == ()
    minted = held(after, MINTED)
    assert (minted.title, minted.author, minted.memory_type) == (
        "Priya Raman", SLEEP_AUTHOR, "semantic")
    assert minted.claim == "Priya Raman is a person named in 2 memories."
    assert minted.entities == ("person:priya raman",)
    assert about(after, MINTED) == ()
    changed = set(ok(r.git.changed_paths(base, tip)))
    assert changed == {"areas/notes/rota.html", "areas/notes/review.html",
                       "areas/notes/oncall.html", "resources/people/laith-2.html", MINTED}
    # Tasks and archived memories are neither linked nor given a person.
    assert about(after, "areas/tasks/ask-laith.html") == ()
    assert about(after, "archive/2026/areas/notes/old.html") == ()
    assert not any(p.startswith("resources/people/sanju") for p in after.paths())


def test_a_second_run_changes_nothing(tmp_path: Path) -> None:
    r = people(tmp_path)
    r.land(run(r.env()))
    again = run(r.env())
    assert again.commits == ()
    assert dict(again.counts) == {"persons": 2, "files_minted": 0, "links_added": 0}


def test_a_link_already_written_in_another_form_is_not_added_again(tmp_path: Path) -> None:
    r = repo(tmp_path)
    r.write(PERSON, "person:laith-al-saadoon")
    r.write("areas/notes/rota.html", "person:laith-al-saadoon",
            links=(Link("about_person", "/" + PERSON),))
    r.write("areas/notes/ledger.html", "person:laith-al-saadoon")
    result = run(r.env())
    assert result.counts["links_added"] == 1
    (commit,) = result.commits
    assert [c.path for c in commit.changes] == ["areas/notes/ledger.html"]


def test_two_person_files_with_one_creation_time_tie_on_path(tmp_path: Path) -> None:
    r = repo(tmp_path)
    r.write("areas/notes/rota.html", "person:ines")
    body = held(r.version(), "areas/notes/rota.html").html
    # Two person files written by hand in one commit, stamped alike.
    files = [(f"resources/people/{name}.html",
              body.replace("areas/notes/rota.html", name).replace("Rota", name.title()))
             for name in ("ines-b", "ines-a")]
    r.raw([PathChange(path, html.encode()) for path, html in files])
    found = find_people(r.version().records())
    assert found.homes["ines"] == "resources/people/ines-a.html"


def test_a_store_naming_no_person_commits_nothing(tmp_path: Path) -> None:
    r = repo(tmp_path)
    r.write("areas/notes/plain.html", "service:checkout-api")
    result = run(r.env())
    assert result.commits == ()
    assert dict(result.counts) == {"persons": 0, "files_minted": 0, "links_added": 0}


def test_the_same_version_gives_the_same_commit(tmp_path: Path) -> None:
    r = people(tmp_path)
    assert run(r.env()).commits == run(r.env()).commits


def test_the_planted_person_is_linked_after_its_aliases_merge(tmp_path: Path) -> None:
    git, corpus, sha = planted_repo(tmp_path)
    m = corpus.manifest
    (resolved,) = ok(entity_resolution(phase_env(git, sha))).commits
    sha = ok(git.commit("refs/heads/main", sha, list(resolved.changes), resolved.subject,
                        AUTHOR, RUN_AT))
    result = run(phase_env(git, sha))
    # One person, whose three spellings are one by now: no second file is minted.
    assert dict(result.counts) == {"persons": 1, "files_minted": 0, "links_added": 6}
    (commit,) = result.commits
    tip = ok(git.commit("refs/heads/main", sha, list(commit.changes), commit.subject, AUTHOR,
                        RUN_AT + timedelta(minutes=1)))
    after = ok(load_head(git, tip))
    (person,) = m.person_files
    holders = [path for name, paths in m.entity_holders.items()
               if name.startswith("person:") for path in paths if path != person]
    assert len(holders) == 6
    for path in holders:
        assert about(after, path) == ("/" + person,)
    for task in m.tasks_with_entities:
        assert about(after, task) == ()
    assert ok(person_links(phase_env(git, tip))).commits == ()


def test_a_person_named_like_markup_gets_a_file_titled_as_written(tmp_path: Path) -> None:
    # A title is plain text, so a name that looks like markup is a name like any other.
    r = repo(tmp_path)
    r.write("areas/notes/odd.html", "person:<div>ghost</div>")
    r.write("areas/notes/rota.html", "person:ines")
    result = run(r.env())
    assert dict(result.counts) == {"persons": 2, "files_minted": 2, "links_added": 2}
    assert result.warnings == ()
    after = r.version(r.land(result))
    (home,) = about(after, "areas/notes/odd.html")
    assert held(after, home.lstrip("/")).title == "<div>ghost</div>"
    assert about(after, "areas/notes/rota.html") == ("/resources/people/ines.html",)
