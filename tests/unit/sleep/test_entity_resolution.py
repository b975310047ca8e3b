"""entity-resolution on a real repository: spellings normalized and merged in place,
declared aliases merged on the first night, versioned and review-band pairs handed to
a person as detected tasks, and tasks, archived and unreadable files never touched."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from returns.pipeline import is_successful
from tests.unit.sleep.sleep_support import AUTHOR, ok

from memhtml.adapters.clock import ManualClock
from memhtml.adapters.git import PygitService
from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import PathChange
from memhtml.eval.planted import plant_corpus, synthetic_docs
from memhtml.eval.planted_manifest import PlantConfig, PlantedCorpus
from memhtml.head import HeadVersion, load_head
from memhtml.sleep.findings import digest_of_path, finding_digest
from memhtml.sleep.phase import PhaseEnv, PhaseResult, TaskBudget
from memhtml.sleep.phases.entity_names import (
    DETECTOR,
    entity_counts,
    person_alias_groups,
    resolve_entities,
    rewrites,
)
from memhtml.sleep.phases.entity_resolution import entity_resolution
from memhtml.sleep.tasks import NO_LONGER_DETECTED, SLEEP_AUTHOR
from memhtml.store import Store, StoreDeps, WriteInput, archive, init_store, label, unlabel, write

WRITTEN = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
RUN_AT = datetime(2026, 11, 29, 3, 15, 7, tzinfo=UTC)
NEXT_RUN = RUN_AT + timedelta(days=1)
PERSON = "resources/people/laith-al-saadoon.html"
BROKEN = "areas/notes/broken.html"


@dataclass
class Repo:
    git: PygitService
    clock: ManualClock
    store: Store

    def main(self) -> str:
        return ok(self.git.resolve("main"))

    def write(self, path: str, *entities: str, **more: object) -> str:
        """A memory at ``path`` naming ``entities``, a minute after the last one."""
        self.clock.advance(60)
        name = path.rsplit("/", 1)[-1].removesuffix(".html")
        data = WriteInput(title=name.replace("-", " ").title(),
                          claim=f"The {name} note names what it names.", path=path,
                          entities=entities, **more)  # type: ignore[arg-type]
        # Two files for one person may say the same: allowed, as a store may hold it.
        landed = ok(write(self.store, data, allow_duplicate=True))
        assert landed.primary is not None
        return landed.primary

    def version(self, sha: str | None = None) -> HeadVersion:
        return ok(load_head(self.git, sha or self.main()))

    def env(self, stamp: datetime = RUN_AT, budget: TaskBudget | None = None) -> PhaseEnv:
        return phase_env(self.git, self.main(), stamp, budget)

    def land(self, result: PhaseResult, stamp: datetime = RUN_AT) -> str:
        """The phase's commit on main, with a run's trailers, as a merged run lands it."""
        (commit,) = result.commits
        message = (f"{commit.subject}\n\nMemhtml-Op: sleep\n"
                   f"Memhtml-Run: {stamp.strftime('%Y-%m-%d')}\n")
        return ok(self.git.commit("refs/heads/main", self.main(), list(commit.changes),
                                  message, AUTHOR, stamp))

    def raw(self, changes: list[PathChange]) -> str:
        return ok(self.git.commit("refs/heads/main", self.main(), changes, "hand edit",
                                  AUTHOR, self.clock.now()))


def phase_env(git: PygitService, sha: str, stamp: datetime = RUN_AT,
              budget: TaskBudget | None = None) -> PhaseEnv:
    version = ok(load_head(git, sha))
    return PhaseEnv(phase="entity-resolution", run_id=stamp.strftime("%Y-%m-%d"), stamp=stamp,
                    base=sha, base_version=version, version=version, git=git,
                    state=InMemoryState(), budget=budget or TaskBudget(), dry_run=False)


def repo(tmp_path: Path) -> Repo:
    git = ok(PygitService.init(tmp_path / "store", bare=True))
    clock = ManualClock(WRITTEN)
    store = Store(StoreDeps(git=git, clock=clock, author=AUTHOR))
    ok(init_store(store.deps))
    return Repo(git, clock, store)


def run(env: PhaseEnv) -> PhaseResult:
    return ok(entity_resolution(env))


def entities(version: HeadVersion, path: str) -> tuple[str, ...]:
    record = version.get(path)
    assert record is not None, path
    return record.entities


def detected(version: HeadVersion) -> dict[str, MemoryRecord]:
    """Live detected tasks by their finding string (read back from the body)."""
    out: dict[str, MemoryRecord] = {}
    for record in version.records():
        if digest_of_path(record.path) is None or record.archived:
            continue
        out[record.body_text.rsplit(f"Finding ({DETECTOR}): ", 1)[1].strip()] = record
    return out


def finding(entity_type: str, left: str, right: str) -> str:
    return json.dumps([entity_type, *sorted((left, right))], ensure_ascii=False)


def services(tmp_path: Path) -> Repo:
    """Checkout API in three spellings (and a file naming two of them), two versions of
    postgres, a review-band pair, a task and an archived memory naming the variants,
    and a file the head cannot read."""
    r = repo(tmp_path)
    r.write("areas/svc/a.html", "service:checkout-api")
    r.write("areas/svc/b.html", "service:checkout-api", "team:Payments")
    r.write("areas/svc/c.html", "service:Checkout API")
    r.write("areas/svc/d.html", "service:checkout_api", "service:checkout-api")
    r.write("areas/svc/e.html", "service:postgres-14")
    r.write("areas/svc/f.html", "service:postgres-15")
    r.write("areas/svc/g.html", "service:notify-hub")
    r.write("areas/svc/h.html", "service:notifier-hub")
    r.write("areas/tasks/fix-checkout.html", "service:Checkout API", "service:CHECKOUT API",
            memory_type="task")
    old = r.write("areas/svc/old.html", "service:checkout_api")
    ok(archive(r.store, old))
    r.raw([PathChange(BROKEN, b'<!doctype html><meta name="memhtml-entity" '
                              b'content="service:Checkout API"><p>not a memory</p>')])
    return r


def test_counts_and_alias_groups_read_only_active_non_task_memories(tmp_path: Path) -> None:
    r = services(tmp_path)
    r.write(PERSON, "person:laith-al-saadoon", aliases=("Laith",))
    r.write("resources/people/nobody.html", aliases=("Ghost",))
    records = [x for x in r.version().records() if not x.archived
               and x.memory_type != "task"]
    counts = entity_counts(records)
    assert list(counts) == ["person", "service", "team"]
    assert dict(counts["service"]) == {
        "Checkout API": 1, "checkout-api": 3, "checkout_api": 1, "notifier-hub": 1,
        "notify-hub": 1, "postgres-14": 1, "postgres-15": 1}
    # A file under people/ naming no person declares nothing.
    assert person_alias_groups(records) == (frozenset({"laith-al-saadoon", "Laith"}),)


def test_casing_and_separator_variants_merge_in_one_commit(tmp_path: Path) -> None:
    r = services(tmp_path)
    base = r.main()
    result = run(r.env())
    counts = dict(result.counts)
    assert {k: counts[k] for k in ("types", "names", "normalized", "merged",
                                   "files_rewritten", "review_candidates")} == {
        "types": 2, "names": 8, "normalized": 2, "merged": 2, "files_rewritten": 3,
        "review_candidates": 2}
    assert (counts["tasks_minted"], counts["tasks_overflow"], counts["tasks_closed"]) == (2, 0, 0)
    assert result.warnings == ()
    (commit,) = result.commits
    assert "2 pair(s) left for review" in commit.body
    tip = r.land(result)
    after = r.version(tip)
    assert entities(after, "areas/svc/c.html") == ("service:checkout-api",)
    # The file naming two spellings names the survivor once.
    assert entities(after, "areas/svc/d.html") == ("service:checkout-api",)
    assert entities(after, "areas/svc/b.html") == ("service:checkout-api", "team:payments")
    rewritten = after.get("areas/svc/c.html")
    assert rewritten is not None and rewritten.updated_at == "2026-11-29T03:15:07Z"
    changed = set(ok(r.git.changed_paths(base, tip)))
    untouched = {"areas/svc/a.html", "areas/svc/e.html", "areas/svc/f.html",
                 "areas/svc/g.html", "areas/svc/h.html", "areas/tasks/fix-checkout.html",
                 "archive/2026/areas/svc/old.html", BROKEN}
    assert changed.isdisjoint(untouched)
    assert {p for p in changed if digest_of_path(p) is None} == {
        "areas/svc/b.html", "areas/svc/c.html", "areas/svc/d.html"}
    assert entities(after, "areas/tasks/fix-checkout.html") == (
        "service:Checkout API", "service:CHECKOUT API")
    assert entities(after, "archive/2026/areas/svc/old.html") == ("service:checkout_api",)


def test_versioned_and_review_band_pairs_become_tasks_not_merges(tmp_path: Path) -> None:
    r = services(tmp_path)
    tip = r.land(run(r.env()))
    after = r.version(tip)
    assert entities(after, "areas/svc/e.html") == ("service:postgres-14",)
    assert entities(after, "areas/svc/f.html") == ("service:postgres-15",)
    assert entities(after, "areas/svc/h.html") == ("service:notifier-hub",)
    tasks = detected(after)
    versions = finding("service", "postgres-14", "postgres-15")
    band = finding("service", "notify-hub", "notifier-hub")
    assert sorted(tasks) == sorted([versions, band])
    task = tasks[versions]
    assert task.path.startswith(f"areas/tasks/det-{finding_digest(DETECTOR, versions)}-")
    assert (task.memory_type, task.task_status, task.author) == ("task", "todo", SLEEP_AUTHOR)
    assert set(task.tags) == {"detected", DETECTOR}
    assert "Evidence, measured (ratio): 0.9091" in task.body_text
    assert "numbers differ" in task.claim
    assert "review band" in tasks[band].claim


def test_a_declared_alias_merges_on_the_first_night(tmp_path: Path) -> None:
    r = repo(tmp_path)
    r.write(PERSON, "person:laith-al-saadoon", aliases=("Laith", "Laith Al-Saadoon"))
    r.write("areas/notes/rota.html", "person:laith-al-saadoon")
    r.write("areas/notes/ledger.html", "person:laith")
    r.write("areas/notes/retries.html", "person:Laith Al-Saadoon")
    r.write("areas/notes/other.html", "person:sanju")
    result = run(r.env())
    assert (result.counts["merged"], result.counts["files_rewritten"]) == (2, 2)
    assert result.counts["review_candidates"] == 0
    after = r.version(r.land(result))
    for path in ("areas/notes/rota.html", "areas/notes/ledger.html",
                 "areas/notes/retries.html", PERSON):
        assert entities(after, path) == ("person:laith-al-saadoon",)
    assert entities(after, "areas/notes/other.html") == ("person:sanju",)
    # The person file's own aliases are a declaration, never rewritten.
    person = after.get(PERSON)
    assert person is not None and person.aliases == ("Laith", "Laith Al-Saadoon")


def test_a_persons_full_name_survives_however_many_files_use_the_short_one(
        tmp_path: Path) -> None:
    r = repo(tmp_path)
    r.write(PERSON, "person:laith-al-saadoon", aliases=("Laith",))
    r.write("areas/notes/rota.html", "person:laith")
    r.write("areas/notes/ledger.html", "person:laith")
    r.write("areas/notes/cache.html", "service:cache", "service:Cache-API")
    after = r.version(r.land(run(r.env())))
    # For a person, words first: the full name is every rewrite's target.
    assert entities(after, PERSON) == ("person:laith-al-saadoon",)
    assert entities(after, "areas/notes/rota.html") == ("person:laith-al-saadoon",)
    assert entities(after, "areas/notes/ledger.html") == ("person:laith-al-saadoon",)


def test_other_types_keep_the_most_named_spelling(tmp_path: Path) -> None:
    r = repo(tmp_path)
    r.write("areas/notes/a.html", "service:checkout-api")
    r.write("areas/notes/b.html", "service:checkout api")
    r.write("areas/notes/c.html", "service:checkout api")
    after = r.version(r.land(run(r.env())))
    # Weight, then name: the corpus's own counts choose, as every rewrite's target.
    assert entities(after, "areas/notes/a.html") == ("service:checkout api",)


def test_a_second_run_changes_nothing_and_leaves_its_tasks(tmp_path: Path) -> None:
    r = services(tmp_path)
    r.land(run(r.env()))
    again = run(r.env())
    assert again.commits == ()
    assert (again.counts["files_rewritten"], again.counts["merged"]) == (0, 0)
    assert (again.counts["tasks_minted"], again.counts["tasks_refreshed"],
            again.counts["tasks_unchanged"]) == (0, 0, 2)
    # Another night: the same findings stand as written, so it commits nothing.
    later = run(r.env(NEXT_RUN))
    assert later.counts["tasks_minted"] == 0 and later.commits == ()
    assert later.counts["tasks_unchanged"] == 2


def test_a_pair_no_longer_found_closes_its_task(tmp_path: Path) -> None:
    r = services(tmp_path)
    r.land(run(r.env()))
    # A person settles it: the postgres-15 memory is relabelled postgres-14.
    ok(label(r.store, "areas/svc/f.html", "service:postgres-14"))
    ok(unlabel(r.store, "areas/svc/f.html", "service:postgres-15"))
    result = run(r.env(NEXT_RUN))
    assert (result.counts["tasks_closed"], result.counts["review_candidates"]) == (1, 1)
    (commit,) = result.commits
    assert NO_LONGER_DETECTED in commit.body
    after = r.version(r.land(result, NEXT_RUN))
    assert sorted(detected(after)) == [finding("service", "notify-hub", "notifier-hub")]


def test_the_nights_budget_caps_new_tasks_and_counts_the_rest(tmp_path: Path) -> None:
    r = services(tmp_path)
    budget = TaskBudget(limit=1)
    result = run(r.env(budget=budget))
    assert (result.counts["tasks_minted"], result.counts["tasks_overflow"]) == (1, 1)
    assert (budget.used, budget.refused) == (1, 1)
    # The rewrites do not wait on the budget.
    assert result.counts["files_rewritten"] == 3


def test_a_store_with_no_entities_commits_nothing(tmp_path: Path) -> None:
    r = repo(tmp_path)
    r.write("areas/notes/plain.html")
    result = run(r.env())
    assert result.commits == ()
    assert (result.counts["types"], result.counts["names"]) == (0, 0)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_the_decision_does_not_depend_on_record_order(rnd: random.Random) -> None:
    records = list(_SHUFFLE_BASE)
    rnd.shuffle(records)
    resolved = resolve_entities(records)
    assert resolved == _SHUFFLE_RESOLVED
    assert rewrites(records, resolved) == rewrites(_SHUFFLE_BASE, _SHUFFLE_RESOLVED)


def _records_of(spec: list[tuple[str, tuple[str, ...], tuple[str, ...]]]
                ) -> tuple[MemoryRecord, ...]:
    from memhtml.format import NewMemoryInput, render_template
    from memhtml.head import record_from

    out = []
    for path, names, aliases in spec:
        html = render_template(NewMemoryInput(
            title=path, claim=f"{path} holds.", memory_type="semantic",
            at="2026-05-01T12:00:00Z", entities=names, aliases=aliases))
        parsed = record_from(html, path)
        assert is_successful(parsed), parsed
        out.append(parsed.unwrap())
    return tuple(out)


_SHUFFLE_BASE = _records_of([
    ("areas/a.html", ("service:Checkout API",), ()),
    ("areas/b.html", ("service:checkout-api", "service:checkout_api"), ()),
    ("areas/c.html", ("service:checkout api",), ()),
    ("areas/d.html", ("region:us-east-1", "person:laith"), ()),
    ("areas/e.html", ("region:us-east-2", "person:Laith"), ()),
    (PERSON, ("person:laith-al-saadoon",), ("Laith",)),
    ("areas/f.html", ("service:notify-hub",), ()),
    ("areas/g.html", ("service:notifier-hub",), ()),
])
_SHUFFLE_RESOLVED = resolve_entities(_SHUFFLE_BASE)


def test_the_same_version_gives_the_same_commit(tmp_path: Path) -> None:
    r = services(tmp_path)
    one, two = run(r.env()), run(r.env())
    assert one.commits == two.commits


# --------------------------------------------------------------------------- planted


SMALL = PlantConfig(exact=2, frame_key=2, near=2, paraphrase=2, negation=2, antonym=1,
                    number=2, variant=1, contradictions=1, stale_tasks=4)


def planted_repo(tmp_path: Path) -> tuple[PygitService, PlantedCorpus, str]:
    corpus = plant_corpus(synthetic_docs(80), SMALL)
    assert is_successful(corpus), corpus
    planted: PlantedCorpus = corpus.unwrap()
    git = ok(PygitService.init(tmp_path / "planted", bare=True))
    sha = ok(git.commit("refs/heads/main", None, planted.changes(), "plant", AUTHOR,
                        RUN_AT - timedelta(days=1)))
    return git, planted, sha


def test_the_planted_corpus_merges_its_aliases_and_reviews_its_versions(tmp_path: Path) -> None:
    git, corpus, sha = planted_repo(tmp_path)
    m = corpus.manifest
    result = run(phase_env(git, sha))
    assert result.counts["review_candidates"] == len(m.review_pairs)
    assert result.warnings == ()
    (commit,) = result.commits
    tip = ok(git.commit("refs/heads/main", sha, list(commit.changes), commit.subject, AUTHOR,
                        RUN_AT))
    after = ok(load_head(git, tip))
    for group in m.alias_groups:
        for spelling in group.names:
            for path in m.entity_holders.get(f"{group.entity_type}:{spelling}", ()):
                named = entities(after, path)
                if group.merge:
                    assert named == (f"{group.entity_type}:{group.canonical}",), (path, group)
                elif spelling not in [g.canonical for g in m.alias_groups if g.merge]:
                    assert named == (f"{group.entity_type}:{spelling}",), (path, group)
    tasks = detected(after)
    assert sorted(tasks) == sorted(finding(p.entity_type, p.left, p.right)
                                   for p in m.review_pairs)
    before = ok(load_head(git, sha))
    for path in (*m.tasks_with_entities, *m.person_files):
        was, now = before.get(path), after.get(path)
        assert was is not None and now is not None and was.html == now.html, path
    # A second night over the result merges nothing and opens no task.
    again = run(phase_env(git, tip))
    assert (again.counts["merged"], again.counts["files_rewritten"]) == (0, 0)
    assert again.counts["tasks_minted"] == 0 and again.commits == ()
