"""A memory's age in the store counts from when it came onto the branch, on real
repositories: old notes meeting memhtml for the first time are neither decayed by
their whole age nor archived on night one, while files that have been in the store for
months still decay and are archived; person files and tasks never are.

The first tests drive the command line as a person would (``memhtml init``, ``import
markdown``, ``git commit`` with dates of their own, ``move``, ``sleep run``, ``sleep
merge``), under the real clock; the properties build stores over generated timelines
(written, committed, read, last curated) and run the real runner at fixed instants.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.adapters.clock import FixedClock
from memhtml.compose import Settings, init_repository, open_services, value_of
from memhtml.compose.sleep import head_gate, sleep_deps
from memhtml.contracts.services import PathChange, Signature
from memhtml.contracts.vocabulary import MemoryType
from memhtml.domain.decay import DECAY_PERIOD, stored_after
from memhtml.format import NewMemoryInput, read_meta, render_template
from memhtml.head import HeadVersion, load_head
from memhtml.sleep.contract import ledger_path
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.ledger import read_ledger
from memhtml.sleep.merge import merge_run
from memhtml.sleep.runner import RunOptions, RunReport, run_sleep
from memhtml.store import init_store
from tests.integration.cli.cli_support import call
from tests.integration.sleep.sleep_support import git_cli

pytestmark = pytest.mark.slow

DAY = timedelta(days=1)
GRACE_DAYS = 30


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("MEMHTML_") and name != "MEMHTML_EMBEDDER":
            monkeypatch.delenv(name)


def _phase(report: dict[str, object], name: str) -> dict[str, Any]:
    phases = report["phases"]
    assert isinstance(phases, list)
    found = next(p for p in phases if p["phase"] == name)
    assert isinstance(found, dict)
    counts = found["counts"]
    assert isinstance(counts, dict)
    return counts


def _live(root: Path) -> set[str]:
    return {p for p in git_cli(root, "ls-tree", "-r", "--name-only", "main").splitlines()
            if p.endswith(".html") and not p.startswith((".memhtml/", "archive/"))}


def _archived(root: Path) -> set[str]:
    """Archived memories, by the path each had when live (``archive/<year>/<path>``)."""
    return {parts[2] for p in git_cli(root, "ls-tree", "-r", "--name-only",
                                       "main").splitlines()
            if len(parts := p.split("/", 2)) == 3 and parts[0] == "archive"
            and p.endswith(".html")}


def _new_store(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, ...]:
    code, made = call(capsys, "init", str(root), "--json")
    assert code == 0, made
    git_cli(root, "config", "user.name", "A Person")
    git_cli(root, "config", "user.email", "person@example.org")
    return ("--store", str(root), "--json")


def _night(root: Path, capsys: pytest.CaptureFixture[str], s: tuple[str, ...]
           ) -> dict[str, object]:
    code, report = call(capsys, "sleep", "run", *s)
    assert code == 0, report
    code, merged = call(capsys, "sleep", "merge", report["run_id"], *s)
    assert code == 0 and merged["merged"] and merged["lost"] == [], merged
    assert isinstance(report, dict)
    return report


# -------------------------------------------------------------- notes imported today

WORDS = ("alfa", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
         "sierra", "tango", "uniform", "victor", "whiskey", "xray")


def test_two_years_of_notes_imported_today_lose_nothing_on_night_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Markdown notes whose frontmatter dates run back two years, imported and curated
    the same day: retention archives none of them (the old episodes sit in the evict
    band and the grace period, counted from their arrival, keeps them) and every note
    is still found."""
    notes = tmp_path / "notes"
    notes.mkdir()
    today = datetime.now(UTC).date()
    kinds = ("episodic", "semantic", "procedural", "error_pattern")
    for n, word in enumerate(WORDS):
        written = today - timedelta(days=730 - 25 * n)
        (notes / f"note-{n:02d}.md").write_text(
            f"---\ntitle: Note {n}\ndate: {written.isoformat()}\ntype: {kinds[n % 4]}\n---\n\n"
            f"The {word} runbook says the limit is {n + 10}.\n", encoding="utf-8")
    root = tmp_path / "store"
    s = _new_store(root, capsys)
    code, imported = call(capsys, "import", "markdown", str(notes), *s)
    assert code == 0 and len(imported["added"]) == 24, imported
    before = _live(root)
    report = _night(root, capsys, s)
    retention = _phase(report, "retention-triage")
    assert retention["evict"] and retention["graced"] == retention["evict"], retention
    assert retention["archived"] == 0
    decay = _phase(report, "confidence-decay")
    assert decay["decayed"] == 0 and decay["from_arrival"] == decay["scanned"] == 24, decay
    assert _live(root) == before and _archived(root) == set()
    for n in (0, 1, 23):
        code, found = call(capsys, "search", f"{WORDS[n]} runbook", *s)
        assert code == 0 and found["hits"][0]["path"] == f"areas/imported/note-{n:02d}.html"


# ------------------------------------------------------- files committed by hand


@dataclass(frozen=True)
class Old:
    path: str
    memory_type: MemoryType
    confidence: float
    importance: int
    entities: tuple[str, ...] = ()


OLD = (
    Old("areas/notes/solid-fact.html", "semantic", 0.9, 9),
    Old("areas/notes/stale-episode.html", "episodic", 0.9, 1),
    Old("inbox/wandering-episode.html", "episodic", 0.9, 1),
    Old("resources/people/old-friend.html", "semantic", 0.9, 1, ("person:old-friend",)),
    Old("areas/tasks/renew-the-certificate.html", "task", 0.9, 1),
)
"""Written 400 days ago: a well-regarded fact, two forgettable episodes (one to be moved
today), a person's file no memory links to, and a task."""


def _render(old: Old, written: datetime) -> bytes:
    name = old.path.rsplit("/", 1)[1].removesuffix(".html").replace("-", " ")
    return render_template(NewMemoryInput(
        title=name.capitalize(), claim=f"The {name} holds, as written long ago.",
        memory_type=old.memory_type, at=written.strftime("%Y-%m-%dT%H:%M:%SZ"),
        confidence=old.confidence, importance=old.importance, entities=old.entities,
    )).encode("utf-8")


def _commit_by_hand(root: Path, written: datetime, authored: datetime,
                    committed: datetime) -> None:
    """The files, as a person's own ``git commit`` with the dates they chose."""
    for old in OLD:
        target = root / old.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_render(old, written))
    git_cli(root, "add", "--", *(o.path for o in OLD))
    env = {**os.environ, "GIT_AUTHOR_DATE": authored.isoformat(),
           "GIT_COMMITTER_DATE": committed.isoformat()}
    subprocess.run(["git", "commit", "-q", "-m", "notes from the old wiki"], cwd=root,
                   check=True, capture_output=True, env=env)


def _confidence(root: Path, path: str) -> str | None:
    """The stated confidence of ``path``, live or archived this year."""
    live = root / path
    found = live if live.exists() else next((root / "archive").glob(f"*/{path}"))
    return read_meta(found.read_text(encoding="utf-8"), "memhtml-confidence")


def test_files_in_the_store_for_months_still_decay_and_are_archived(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Committed 90 days ago (written 400 days ago): the clock starts at the commit,
    so each file owes the 90 whole days since, not 400; the forgettable episodes are
    archived, the one moved today by ``memhtml move`` too (it keeps its arrival), while
    the person's file stays (``protected``) and the task is never touched."""
    # What retention picks is the subject here, not the archive share merge allows.
    monkeypatch.setenv("MEMHTML_SLEEP_ARCHIVE_SHARE", "1")
    root = tmp_path / "store"
    s = _new_store(root, capsys)
    now = datetime.now(UTC).replace(microsecond=0)
    arrived = now - 90 * DAY - timedelta(hours=1)
    _commit_by_hand(root, now - 400 * DAY, arrived, arrived)
    code, moved = call(capsys, "move", "inbox/wandering-episode.html", "areas/diary/", *s)
    assert code == 0, moved
    report = _night(root, capsys, s)

    decay = _phase(report, "confidence-decay")
    assert decay["from_arrival"] == decay["scanned"] == decay["decayed"] == 4, decay
    # 90 whole days since arrival, each a step from the stored value; never 400, and
    # the moved file's days count from where it was committed, not from the move.
    owed = stored_after(0.9, 90)
    assert owed is not None and owed != stored_after(0.9, 10)
    for path in ("areas/notes/solid-fact.html", "resources/people/old-friend.html",
                 "areas/notes/stale-episode.html", "areas/diary/wandering-episode.html"):
        assert _confidence(root, path) == f"{owed:.2f}", path

    retention = _phase(report, "retention-triage")
    assert retention["protected"] == 1 and retention["graced"] == 0, retention
    assert {"areas/notes/stale-episode.html",
            "areas/diary/wandering-episode.html"} <= _archived(root)
    assert {"resources/people/old-friend.html",
            "areas/tasks/renew-the-certificate.html"} <= _live(root)
    assert _confidence(root, "areas/tasks/renew-the-certificate.html") == "0.90"
    ledger = read_ledger((root / ledger_path(str(report["run_id"]))).read_bytes())
    ages = {d.get("path"): (d.get("created_age_days"), d.get("arrived_age_days"))
            for d in ledger.decisions}
    for created, on_branch in ages.values():
        assert isinstance(created, float) and isinstance(on_branch, float)
        assert 400 <= created < 401 and 90 <= on_branch < 91


def test_the_commit_date_counts_not_the_author_date(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same files authored 90 days ago but committed today (a rebase, a
    cherry-pick, a patch applied from a colleague): the branch took them today, so
    nothing is decayed and nothing archived."""
    root = tmp_path / "store"
    s = _new_store(root, capsys)
    now = datetime.now(UTC).replace(microsecond=0)
    _commit_by_hand(root, now - 400 * DAY, now - 90 * DAY, now - timedelta(minutes=5))
    report = _night(root, capsys, s)
    decay = _phase(report, "confidence-decay")
    assert decay["decayed"] == 0 and decay["from_arrival"] == 4, decay
    retention = _phase(report, "retention-triage")
    # Both episodes sit in the evict band, kept by the grace period; the person's
    # file is kept as a person's.
    assert (retention["archived"], retention["graced"], retention["protected"]) == (
        0, 2, 1), retention
    assert _archived(root) == set()


# ---------------------------------------------------------------------------- demo


def test_the_demo_keeps_its_people_and_owes_no_more_than_its_history_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo writes each example at its own date, so its history says the memories
    have been in the store since then; the first night may archive old ones, but
    never a person's file, and no file is stepped further than the whole days since
    it came onto the branch."""
    # What retention picks is the subject here, not the archive share merge allows.
    monkeypatch.setenv("MEMHTML_SLEEP_ARCHIVE_SHARE", "1")
    root = tmp_path / "demo"
    code, _ = call(capsys, "demo", "--dir", str(root), "--json")
    assert code == 0
    s = ("--store", str(root), "--json")
    people = {p for p in _live(root) if p.startswith("resources/people/")}
    assert "resources/people/kenji-sato.html" in people
    before = {p: _confidence(root, p) for p in _live(root)}
    arrived = _arrivals(root)
    report = _night(root, capsys, s)
    stamp = datetime.strptime(str(report["stamp"]), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    retention = _phase(report, "retention-triage")
    assert retention["protected"] >= 1, retention
    assert people <= _live(root) and not people & _archived(root)
    stepped = 0
    for path, was in before.items():
        if was is None:
            continue
        after = _confidence(root, path)
        assert after is not None
        days = (stamp - arrived[path]) // DAY
        furthest = stored_after(float(was), days)
        assert float(after) >= (float(was) if furthest is None else furthest), path
        stepped += after != was
    assert stepped, "the demo's old files decayed"


def _arrivals(root: Path) -> dict[str, datetime]:
    """Each live file's arrival as git's own command line tells it: the committer
    time of the first-parent commit that added it."""
    out = git_cli(root, "log", "--first-parent", "--format=@%ct", "--name-only",
                  "--diff-filter=A", "--no-renames", "main")
    found: dict[str, datetime] = {}
    when: datetime | None = None
    for line in out.splitlines():
        if line.startswith("@"):
            when = datetime.fromtimestamp(int(line[1:]), UTC)
        elif line and when is not None:
            found.setdefault(line, when)
    return found


# ------------------------------------------------------------ generated timelines

T0 = datetime(2026, 3, 1, 6, 0, 0, tzinfo=UTC)
AUTHOR = Signature("A Person", "person@example.org")


@dataclass(frozen=True)
class Timeline:
    """One file: written ``created`` days after T0, committed ``arrival`` days after
    T0 (before or after it was written: a clock can be wrong), read ``read`` days
    after T0 (None: never)."""

    created: float
    arrival: float
    read: float | None


def _at(days: float) -> datetime:
    return T0 + timedelta(seconds=round(days * 86_400))


def _deps(root: Path, at: datetime) -> SleepDeps:
    services = value_of(open_services(Settings(store=root), clock=FixedClock(at)))
    return sleep_deps(services, head_gate).unwrap()


DECAY_ONLY = RunOptions(phases=frozenset({"confidence-decay", "report"}))


def _run_and_merge(root: Path, at: datetime) -> RunReport:
    deps = _deps(root, at)
    report = value_of(run_sleep(deps, DECAY_ONLY))
    assert report.ok, [(p.phase, p.status, p.reason) for p in report.phases]
    if report.quiet:  # nothing to do (no whole day owed): no branch, nothing to merge
        assert report.branch is None
        return report
    assert value_of(merge_run(deps, report.run_id)).merged
    return report


def _version(root: Path) -> HeadVersion:
    git = value_of(open_services(Settings(store=root))).git
    return value_of(load_head(git, value_of(git.resolve("main"))))


def _path(n: int) -> str:
    return f"areas/notes/note-{n}.html"


def _grow(root: Path, files: list[Timeline], after: float, until: float) -> None:
    """Commit (as a person's plain commits, one a file, dated by their own clock) the
    files arriving after ``after`` days and by ``until``, in arrival order, and log the
    reads made in that window."""
    services = value_of(open_services(Settings(store=root)))
    git, state = services.git, services.state
    assert state is not None
    for n in sorted((n for n, f in enumerate(files) if after < f.arrival <= until),
                    key=lambda n: (files[n].arrival, n)):
        f = files[n]
        html = render_template(NewMemoryInput(
            title=f"Note {n}", claim=f"Note {n}: the {n}th queue drains at {n + 2} am.",
            memory_type="semantic", at=_at(f.created).strftime("%Y-%m-%dT%H:%M:%SZ"),
            confidence=0.9))
        tip = value_of(git.resolve("main"))
        value_of(git.commit("refs/heads/main", tip, [PathChange(_path(n), html.encode())],
                            f"add note {n}", AUTHOR, _at(f.arrival)))
    for n, f in enumerate(files):
        if f.read is not None and after < f.read <= until:
            value_of(state.append_access(_path(n), _at(f.read), "read"))
    git_cli(root, "reset", "-q", "--hard")


def _store(root: Path) -> None:
    value_of(init_repository(root))
    store = value_of(open_services(Settings(store=root), clock=FixedClock(T0 - 400 * DAY),
                                  require_store=False)).store()
    value_of(init_store(store.deps))


def _owed(f: Timeline, last: datetime | None, now: datetime) -> int:
    """The whole days of the file's own clock that ended after the last application
    and by ``now``, the clock starting at the latest of its writing, its arrival and
    the last read before ``now``. With no last application: the whole days since."""
    read = _at(f.read) if f.read is not None and _at(f.read) <= now else None
    origin = max(t for t in (_at(f.created), _at(f.arrival), read) if t is not None)
    if last is None or last < origin:
        return max(0, (now - origin) // DECAY_PERIOD)
    return sum(1 for k in range(1, (now - origin) // DECAY_PERIOD + 1)
               if origin + k * DECAY_PERIOD > last)


def days(low: int, high: int) -> st.SearchStrategy[float]:
    """Instants ``low`` to ``high`` days after T0, to the minute."""
    return st.integers(low * 1440, high * 1440).map(lambda minutes: minutes / 1440)


timelines = st.lists(st.builds(Timeline, days(0, 40), days(0, 40), st.none() | days(0, 60)),
                     min_size=1, max_size=4)


@settings(max_examples=8)
@given(timelines, days(20, 45), days(0, 20).filter(lambda gap: gap > 0))
def test_decay_owes_the_whole_days_since_the_latest_of_written_arrived_read_applied(
        files: list[Timeline], first: float, gap: float) -> None:
    """Files written, committed and read at generated instants; a night at ``first``
    days (merged) and another ``gap`` days later. At each night every file takes
    exactly the steps its own clock owes: whole days since the latest of when it was
    written, when it came onto the branch, and its last read, less the days the last
    night already applied; a file that arrived a minute ago owes nothing, whatever its
    stated creation."""
    nights = (_at(first), _at(first + gap))
    with tempfile.TemporaryDirectory(prefix="memhtml-arrival-") as folder:
        root = Path(folder) / "store"
        _store(root)
        last: datetime | None = None
        grown = -1.0
        for night in nights:
            _grow(root, files, grown, (night - T0) / DAY)
            grown = (night - T0) / DAY
            before = _version(root)
            _run_and_merge(root, night)
            after = _version(root)
            for n, f in enumerate(files):
                held = before.get(_path(n))
                if held is None:
                    continue
                assert held.confidence is not None
                now = after.get(_path(n))
                assert now is not None
                expected = stored_after(held.confidence, _owed(f, last, night))
                assert now.confidence == (held.confidence if expected is None else expected), (
                    n, f, night, last)
            last = night


@settings(max_examples=4)
@given(timelines, st.lists(st.integers(0, 86_399), min_size=2, max_size=3, unique=True),
       st.integers(41, 60))
def test_runs_within_a_day_decay_as_much_as_one_whatever_the_arrivals(
        files: list[Timeline], seconds: list[int], day: int) -> None:
    """Several merged runs within one day end on the very same confidences as one run
    at the last of them, with files committed at instants of their own."""
    stamps = [T0 + day * DAY + timedelta(seconds=s) for s in sorted(seconds)]
    with tempfile.TemporaryDirectory(prefix="memhtml-arrival-day-") as folder:
        many, once = Path(folder) / "many", Path(folder) / "once"
        for root in (many, once):
            _store(root)
            _grow(root, files, -1.0, day)
        for at in stamps:
            _run_and_merge(many, at)
        _run_and_merge(once, stamps[-1])
        a, b = _version(many), _version(once)
        for n in range(len(files)):
            left, right = a.get(_path(n)), b.get(_path(n))
            assert left is not None and right is not None
            assert left.confidence == right.confidence, (n, files[n], stamps)
