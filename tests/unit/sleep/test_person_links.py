"""person-links on a real repository: each memory naming a person links to that
person's file, a person with none gets one minted, and a second run changes nothing."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

from tests.unit.sleep.fake_model import ScriptedModel
from tests.unit.sleep.sleep_support import AUTHOR, ok
from tests.unit.sleep.test_entity_resolution import (
    NEXT_RUN,
    PERSON,
    RUN_AT,
    Repo,
    phase_env,
    planted_repo,
    repo,
)
from tests.unit.sleep.test_entity_resolution_model import LAITH, clusters

from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.services import PathChange
from memhtml.format import set_meta
from memhtml.head import HeadVersion, load_head
from memhtml.sleep.phase import PhaseEnv, PhaseResult
from memhtml.sleep.phases.entity_resolution import entity_resolution
from memhtml.sleep.phases.person_links import find_people, person_links
from memhtml.sleep.tasks import SLEEP_AUTHOR
from memhtml.store import archive

MINTED = "resources/people/priya-raman.html"
NO_FOLDS = {"files_folded": 0, "aliases_added": 0, "links_moved": 0}


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
    assert dict(result.counts) == {"persons": 2, "files_minted": 1, "links_added": 5, **NO_FOLDS}
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
    assert dict(again.counts) == {"persons": 2, "files_minted": 0, "links_added": 0, **NO_FOLDS}


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
    assert dict(result.counts) == {"persons": 0, "files_minted": 0, "links_added": 0, **NO_FOLDS}


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
    assert dict(result.counts) == {"persons": 1, "files_minted": 0, "links_added": 6, **NO_FOLDS}
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
    assert dict(result.counts) == {"persons": 2, "files_minted": 2, "links_added": 2, **NO_FOLDS}
    assert result.warnings == ()
    after = r.version(r.land(result))
    (home,) = about(after, "areas/notes/odd.html")
    assert held(after, home.lstrip("/")).title == "<div>ghost</div>"
    assert about(after, "areas/notes/rota.html") == ("/resources/people/ines.html",)


# -- two files minted for one person ---------------------------------------------------


def _night(r: Repo, state: InMemoryState, stamp: datetime) -> tuple[PhaseResult, PhaseResult]:
    """entity-resolution (with a model clustering laith and its full form) then
    person-links, each landed with a run's trailers, person-links seeing the night's
    base as the version the run started from."""
    base = r.main()
    model = ScriptedModel(respond=clusters(LAITH))
    resolved = ok(entity_resolution(replace(r.env(stamp), model=model, state=state)))
    if resolved.commits:
        r.land(resolved, stamp)
    env = replace(r.env(stamp), base=base, base_version=r.version(base))
    linked = ok(person_links(env))
    if linked.commits:
        r.land(linked, stamp)
    return resolved, linked


FULL_FILE = "resources/people/laith-al-saadoon.html"
SHORT_FILE = "resources/people/laith.html"


def test_two_files_minted_for_one_person_are_folded_into_the_fullest(tmp_path: Path) -> None:
    r = repo(tmp_path)
    r.write("areas/notes/standup.html", "person:Laith")
    r.write("areas/notes/review.html", "person:Laith")
    r.write("areas/notes/rota.html", "person:Laith Al-Saadoon")
    r.write("areas/notes/ledger.html", "person:Laith Al-Saadoon")
    state = InMemoryState()
    resolved, linked = _night(r, state, RUN_AT)
    # Two names until a second reading: one file minted for each.
    assert resolved.counts["model_merges_waiting"] == 1
    assert linked.counts["files_minted"] == 2
    first = r.version()
    assert held(first, SHORT_FILE).author == held(first, FULL_FILE).author == SLEEP_AUTHOR

    r.write("areas/notes/oncall.html", "person:Laith")  # a write naming him: a new reading
    resolved, linked = _night(r, state, NEXT_RUN)
    assert resolved.counts["model_merges_applied"] == 1
    assert (linked.counts["files_folded"], linked.counts["aliases_added"],
            linked.counts["links_moved"]) == (1, 1, 2)
    after = r.version()
    people_files = [p for p in after.paths() if p.startswith("resources/people/")]
    assert people_files == [FULL_FILE]
    home = held(after, FULL_FILE)
    # The full name stays the title (as the pre-pass spelled it) and the name; the
    # short one is an alias of it.
    assert home.title == "laith al-saadoon"
    assert home.entities == ("person:laith al-saadoon",)
    assert home.aliases == ("laith",)
    archived = held(after, f"archive/{NEXT_RUN.year}/{SHORT_FILE}")
    assert archived.superseded_by == "/" + FULL_FILE
    assert Link("supersedes", f"/archive/{NEXT_RUN.year}/{SHORT_FILE}") in home.links
    for note in ("standup", "review", "rota", "ledger", "oncall"):
        path = f"areas/notes/{note}.html"
        assert held(after, path).entities == ("person:laith al-saadoon",), path
        assert about(after, path) == ("/" + FULL_FILE,), path
    # Settled: the next night has nothing to fold or link.
    again = ok(person_links(r.env(NEXT_RUN + timedelta(days=1))))
    assert again.commits == ()


def test_the_fullest_minted_file_stays_whichever_was_minted_first(tmp_path: Path) -> None:
    r = repo(tmp_path)
    r.write("areas/notes/standup.html", "person:Laith")
    r.land(ok(person_links(r.env())))  # the short name's file is minted alone, first
    short = held(r.version(), SHORT_FILE)
    # A night later, the full name's (as person-links mints it).
    full = set_meta(short.html.replace("Laith", "Laith Al-Saadoon").replace(
        'content="person:laith"', 'content="person:laith al-saadoon"'),
        "memhtml-created", "2026-12-01T00:00:00Z")
    r.raw([PathChange(FULL_FILE, full.encode())])
    assert short.created_at < held(r.version(), FULL_FILE).created_at
    # A relabel (as entity-resolution's) makes both files claim the full name.
    relabelled = short.html.replace('content="person:laith"',
                                    'content="person:laith al-saadoon"')
    r.raw([PathChange(SHORT_FILE, relabelled.encode())])
    found = find_people(r.version().records())
    assert found.homes["laith al-saadoon"] == FULL_FILE
    assert dict(found.minted) == {"laith al-saadoon": (SHORT_FILE,)}


def test_a_file_a_person_wrote_is_never_folded(tmp_path: Path) -> None:
    r = repo(tmp_path)
    r.write(PERSON, "person:laith-al-saadoon")
    r.write("resources/people/laith-2.html", "person:laith-al-saadoon")
    r.write("areas/notes/rota.html", "person:laith-al-saadoon")
    found = find_people(r.version().records())
    assert found.homes["laith-al-saadoon"] == PERSON
    assert dict(found.minted) == {}
    result = run(r.env())
    assert result.counts["files_folded"] == 0
    after = r.version(r.land(result))
    assert held(after, "resources/people/laith-2.html").status == "active"


def test_an_arc_filed_among_person_files_is_not_folded_as_one(tmp_path: Path) -> None:
    r = repo(tmp_path)
    r.write(PERSON, "person:laith-al-saadoon", author=SLEEP_AUTHOR)
    r.write("resources/people/the-survey-story.html", "person:laith-al-saadoon",
            memory_type="arc", author=SLEEP_AUTHOR)
    found = find_people(r.version().records())
    assert found.homes["laith-al-saadoon"] == PERSON
    assert dict(found.minted) == {}
