"""A fresh store's first nights, on real repositories: nothing young is archived by
retention, decay is counted in days and not in runs, and every archive says why.

The first tests drive the command line as a person would (``memhtml init``, ``write``,
``sleep run``, ``sleep merge``, ``search``); the properties build stores of generated
memories through the write door, run the real runner over them and merge the way
``sleep merge`` does.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memhtml.adapters.clock import FixedClock, ManualClock
from memhtml.compose import Settings, init_repository, open_services, value_of
from memhtml.compose.sleep import head_gate, sleep_deps
from memhtml.contracts.vocabulary import MEMORY_TYPES, MemoryType
from memhtml.domain.retention import SIGNAL_NAMES
from memhtml.head import HeadVersion, load_head
from memhtml.sleep.contract import ledger_path
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.ledger import read_ledger
from memhtml.sleep.merge import lost_memories, merge_run
from memhtml.sleep.runner import RunOptions, RunReport, run_sleep
from memhtml.store import WriteInput, init_store, write
from tests.integration.cli.cli_support import call
from tests.integration.sleep.sleep_support import git_cli

pytestmark = pytest.mark.slow

STANDUP = "The daily standup starts at 9:15 in room 4."
NOTES: tuple[tuple[MemoryType, str, str], ...] = (
    ("procedural", "Daily standup", STANDUP),
    ("procedural", "Release checklist", "Tag the release before the changelog is frozen."),
    ("semantic", "Billing database", "The billing database runs on Postgres 15."),
    ("episodic", "March deploy", "The March deploy stalled because the cache was cold."),
    ("error_pattern", "Checkout timeouts", "Checkout times out when the auth service lags."),
    ("user_preference", "Short answers", "The user prefers short answers with examples."),
    ("agent_insight", "Flaky suite", "The integration suite is flaky on the first run."),
    ("verdict", "Queue choice", "The team chose the managed queue over self-hosting."),
    ("precedent", "Hotfix rule", "A hotfix ships behind a flag the first time."),
    ("arc", "Migration story", "The storage migration took three quarters and two tries."),
    ("task", "Rotate keys", "Rotate the signing keys before the audit."),
)
"""One note of every memory type, the standup procedure first."""
WEAK = ("semantic", "Old rumour", "Someone said the printer on floor two jams on Mondays.")
"""A note written with the lowest importance and confidence: in the evict band the
minute it is written, so only the grace period keeps it."""


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("MEMHTML_") and name != "MEMHTML_EMBEDDER":
            monkeypatch.delenv(name)


def _cli_store(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, ...]:
    s = ("--store", str(root), "--json")
    code, made = call(capsys, "init", str(root), "--json")
    assert code == 0, made
    git_cli(root, "config", "user.name", "A Person")
    git_cli(root, "config", "user.email", "person@example.org")
    for kind, title, claim in NOTES:
        code, wrote = call(capsys, "write", "--type", kind, "--title", title, "--claim", claim,
                           *s)
        assert code == 0, wrote
    code, wrote = call(capsys, "write", "--type", WEAK[0], "--title", WEAK[1], "--claim",
                       WEAK[2], "--confidence", "0.2", "--importance", "1", *s)
    assert code == 0, wrote
    return s


def _phase(report: dict[str, object], name: str) -> dict[str, object]:
    phases = report["phases"]
    assert isinstance(phases, list)
    found = next(p for p in phases if p["phase"] == name)
    assert isinstance(found, dict)
    return found


def _archived(root: Path) -> list[str]:
    return [p for p in git_cli(root, "ls-tree", "-r", "--name-only", "main").splitlines()
            if p.startswith("archive/") and p.endswith(".html")]


@pytest.mark.parametrize("embedder", ["none", "default"])
def test_night_one_on_notes_written_minutes_ago_archives_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest,
        embedder: str) -> None:
    if embedder == "default":
        # What a new person has: the offline model init records, writes that embed,
        # and a night that compares memories by real vectors.
        request.getfixturevalue("default_embedder")
    root = tmp_path / "store"
    s = _cli_store(root, capsys)
    code, report = call(capsys, "sleep", "run", *s)
    assert code == 0, report
    retention = _phase(report, "retention-triage")
    counts = retention["counts"]
    assert isinstance(counts, dict)
    # The weak note sits in the evict band and is kept only by the grace period.
    assert counts["evict"] == counts["graced"] == 1, counts
    assert counts["archived"] == 0
    assert counts["scored"] == len(NOTES)  # every note but the task, and the weak one
    decay = _phase(report, "confidence-decay")["counts"]
    assert isinstance(decay, dict) and decay["decayed"] == 0, decay
    code, merged = call(capsys, "sleep", "merge", report["run_id"], *s)
    assert code == 0 and merged["merged"], merged
    assert merged["lost"] == []
    assert _archived(root) == []
    code, found = call(capsys, "search", "when does the daily standup start", *s)
    assert code == 0
    assert found["hits"] and found["hits"][0]["claim"] == STANDUP, found
    assert found["mode"] == ("hybrid" if embedder == "default" else "lexical"), found


def test_every_archive_records_its_figures_in_the_ledger_and_the_commit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With no grace period the weak note is archived from the evict band, and what
    merged onto main says why: its score, its band and its eight signals."""
    root = tmp_path / "store"
    s = _cli_store(root, capsys)
    monkeypatch.setenv("MEMHTML_RETENTION_GRACE_DAYS", "0")
    code, report = call(capsys, "sleep", "run", *s)
    assert code == 0, report
    counts = _phase(report, "retention-triage")["counts"]
    assert isinstance(counts, dict)
    assert (counts["archived"], counts["graced"]) == (1, 0), counts
    code, merged = call(capsys, "sleep", "merge", report["run_id"], *s)
    assert code == 0 and merged["merged"], merged
    # A decision record is no pending write: the merge neither applies nor counts it.
    assert (merged["marks_pending"], merged["marks_applied"]) == (0, 0)
    (moved,) = _archived(root)
    weak = moved.split("/", 2)[2]
    ledger = read_ledger((root / ledger_path(report["run_id"])).read_bytes())
    (record,) = ledger.decisions
    assert record.kind == "retention-archived"
    assert (record.get("path"), record.get("rule"), record.get("band")) == (
        weak, "evict-band", "evict")
    score = record.get("score")
    assert isinstance(score, float) and score <= 0.3
    signals = {name: record.get(name) for name in SIGNAL_NAMES}
    assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in signals.values()), signals
    assert signals["confidence"] == 0.2 and signals["importance"] == 0.1
    body = git_cli(root, "log", "-1", "--format=%B", "--grep", "archived from the evict band",
                   "main")
    assert f"{weak}: archived from the evict band: score {score:g} (recency" in body


@pytest.mark.parametrize("value", ["-3", "a month"])
def test_an_unusable_grace_period_refuses_the_run_and_names_the_setting(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        value: str) -> None:
    root = tmp_path / "store"
    s = ("--store", str(root), "--json")
    assert call(capsys, "init", str(root), "--json")[0] == 0
    git_cli(root, "config", "user.name", "A Person")
    git_cli(root, "config", "user.email", "person@example.org")
    assert call(capsys, "write", "--title", WEAK[1], "--claim", WEAK[2], *s)[0] == 0
    before = git_cli(root, "for-each-ref", "--format=%(refname) %(objectname)")
    monkeypatch.setenv("MEMHTML_RETENTION_GRACE_DAYS", value)
    code, refused = call(capsys, "sleep", "run", *s)
    assert code == 1
    assert refused["ok"] is False and refused["code"].startswith("ERR_"), refused
    assert "retention_grace_days" in refused["error"]
    assert git_cli(root, "for-each-ref", "--format=%(refname) %(objectname)") == before


# --------------------------------------------------------------------------- properties

T0 = datetime(2026, 6, 1, 8, 0, 0, tzinfo=UTC)
WORDS = ("ledger", "cache", "queue", "invoice", "webhook", "canary", "replica", "token",
         "schema", "bucket", "cron", "mirror")


@dataclass(frozen=True)
class Note:
    memory_type: MemoryType
    confidence: float | None
    importance: int | None
    age: timedelta
    """How long before ``T0`` it was written."""


def _claim(n: int) -> str:
    rng = random.Random(n)
    first, second = rng.sample(WORDS, 2)
    return f"Note {n}: the {first} feeds the {second} for team {chr(ord('a') + n % 26)}."


def build_store(root: Path, notes: Sequence[Note]) -> None:
    """A store at ``root`` with ``notes`` written through the write door, each at its
    own instant (oldest first), as a person's writes would land."""
    value_of(init_repository(root))
    order = sorted(range(len(notes)), key=lambda n: -notes[n].age)
    start = T0 - notes[order[0]].age if notes else T0
    clock = ManualClock(start)
    store = value_of(open_services(Settings(store=root), clock=clock,
                                   require_store=False)).store()
    value_of(init_store(store.deps))
    for n in order:
        note = notes[n]
        at = T0 - note.age
        if at > clock.now():
            clock.advance((at - clock.now()).total_seconds())
        value_of(write(store, WriteInput(
            title=f"Note {n}", claim=_claim(n), memory_type=note.memory_type,
            confidence=note.confidence, importance=note.importance,
            path=f"areas/notes/note-{n}.html")))
    git_cli(root, "reset", "-q", "--hard")


def deps_at(root: Path, at: datetime) -> SleepDeps:
    services = value_of(open_services(Settings(store=root), clock=FixedClock(at)))
    return sleep_deps(services, head_gate).unwrap()


def night(root: Path, at: datetime, options: RunOptions | None = None) -> RunReport:
    """A run at ``at``, merged as ``sleep merge`` merges it."""
    deps = deps_at(root, at)
    report = value_of(run_sleep(deps, options))
    assert report.ok, [(p.phase, p.status, p.reason) for p in report.phases]
    if report.quiet:  # nothing to do: no branch, nothing to merge
        assert report.branch is None
        return report
    outcome = value_of(merge_run(deps, report.run_id))
    assert outcome.merged, (outcome.refusal, outcome.reason)
    return report


def main_version(root: Path) -> HeadVersion:
    git = value_of(open_services(Settings(store=root))).git
    return value_of(load_head(git, value_of(git.resolve("main"))))


SCORED_TYPES = tuple(t for t in MEMORY_TYPES if t != "task")
confidences = st.none() | st.sampled_from([0.2, 0.21, 0.35, 0.5, 0.77, 0.9, 1.0])
importances = st.none() | st.integers(1, 10)


def fresh_note(memory_type: MemoryType) -> st.SearchStrategy[Note]:
    return st.builds(Note, st.just(memory_type), confidences, importances,
                     st.integers(1, 3_600).map(lambda s: timedelta(seconds=s)))


every_type = st.tuples(*(fresh_note(t) for t in MEMORY_TYPES)).map(list)
more = st.lists(st.sampled_from(MEMORY_TYPES).flatmap(fresh_note), max_size=3)


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.tuples(every_type, more).map(lambda both: both[0] + both[1]),
       st.integers(1, 600))
def test_night_one_on_a_fresh_store_archives_nothing_by_retention(
        notes: list[Note], minutes: int) -> None:
    """Memories of every type written within the last hour, whatever their stated
    confidence and importance (the lowest put them in the evict band): the first night,
    minutes later, archives none of them, and loses nothing."""
    with tempfile.TemporaryDirectory(prefix="memhtml-fresh-") as folder:
        root = Path(folder) / "store"
        build_store(root, notes)
        before = main_version(root)
        report = night(root, T0 + timedelta(minutes=minutes))
        retention = next(p for p in report.phases if p.phase == "retention-triage")
        assert retention.counts["archived"] == 0, retention.counts
        assert retention.counts["graced"] == retention.counts["evict"]
        assert retention.commits == ()
        after = main_version(root)
        assert lost_memories(before, after) == ()
        assert not [p for p in after.paths() if p.startswith("archive/")
                    and p.endswith(".html")]


@settings(max_examples=5, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.builds(Note, st.sampled_from(SCORED_TYPES),
                          st.sampled_from([0.21, 0.35, 0.5, 0.63, 0.77, 0.9, 1.0]),
                          st.none(),
                          st.integers(0, 40 * 86_400).map(lambda s: timedelta(seconds=s))),
                min_size=1, max_size=5),
       st.lists(st.integers(0, 86_399), min_size=2, max_size=3, unique=True),
       st.integers(0, 20))
def test_runs_within_a_day_decay_as_much_as_one(notes: list[Note], seconds: list[int],
                                                first_day: int) -> None:
    """The same store curated at several instants of one day, each run merged, ends on
    the very same stored confidences as a copy curated once at the last of them: decay
    is owed per whole day since a file's last decay or its creation, never per run."""
    day = T0 + timedelta(days=first_day)
    stamps = [day + timedelta(seconds=s) for s in sorted(seconds)]
    with tempfile.TemporaryDirectory(prefix="memhtml-decay-") as folder:
        many, once = Path(folder) / "many", Path(folder) / "once"
        build_store(many, notes)
        build_store(once, notes)
        only_decay = RunOptions(phases=frozenset({"confidence-decay", "report"}))
        for at in stamps:
            night(many, at, only_decay)
        night(once, stamps[-1], only_decay)
        a, b = main_version(many), main_version(once)
        for n in range(len(notes)):
            path = f"areas/notes/note-{n}.html"
            left, right = a.get(path), b.get(path)
            assert left is not None and right is not None
            assert left.confidence == right.confidence, (path, notes[n], stamps)
