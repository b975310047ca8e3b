"""Time in queries, measured: the words alone against the words and the time step.

Run from the repository root: ``python -m bench.temporal``.

A generated store of dated decisions: twelve subjects (the deploy window, the
on-call rota, the cache backend...), each changed eight times between 2021 and 2026,
every change one memory whose article dates it with ``<time datetime>`` around a
weekday, as a note taken at the time reads ("on Monday"), plus
undated notes about the same subjects. Each change is asked about three ways:

- ``month``: "<subject> in <Month YYYY>" (no two changes of a subject share a month);
- ``day``: "what changed about <subject> on <D Month YYYY>";
- ``only``: "what happened on <D Month YYYY>" (no subject words at all).

Gold is the change itself. The figures are recall@1, recall@5 and MRR for the words
alone (``search_head``) and for the words plus the time step the search door runs
(``head.timed``). Two stores come from two seeds: ``design`` is the one the step was
written against; ``heldout`` was generated after, and its figures are the ones
reported. Nothing in the step was tuned on either (its one constant, 50 candidates,
was set before either ran).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from memhtml.contracts.record import MemoryRecord
from memhtml.format import NewMemoryInput, render_template
from memhtml.head import SearchHeadInput, record_from, search_head, version_from_records
from memhtml.head.timed import candidates, in_time, placed
from memhtml.head.version import HeadVersion
from memhtml.head.when import read_time

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
SEEDS = {"design": 20261206, "heldout": 77031}
SUBJECTS = [
    ("deploy window", "The deploy window moved to {v}."),
    ("on-call rota", "The on-call rota now rotates {v}."),
    ("cache backend", "The cache backend became {v}."),
    ("database host", "The database host moved to {v}."),
    ("release train", "The release train leaves {v}."),
    ("coffee supplier", "The coffee supplier is now {v}."),
    ("standup time", "The standup moved to {v}."),
    ("api rate limit", "The API rate limit was set to {v}."),
    ("backup schedule", "Backups now run {v}."),
    ("incident channel", "Incidents are now handled in {v}."),
    ("code freeze", "The code freeze runs {v}."),
    ("office wifi", "The office wifi network is now {v}."),
]
VALUES = ["Tuesdays", "Thursdays", "weekly", "daily", "Redis", "Memcached", "eu-west-1",
          "us-east-2", "at noon", "at 9:30", "500 per minute", "1000 per minute",
          "nightly", "hourly", "#incidents", "#ops-war-room", "before holidays",
          "every sprint end", "Orion", "Vega", "Bean & Co", "Roastery One", "10:00",
          "9:15"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
CHANGES = 8
LIMIT = 10


@dataclass(frozen=True)
class Question:
    kind: str
    query: str
    gold: str


def _memory(path: str, title: str, claim: str, happened: date | None) -> MemoryRecord:
    # Written as a note taken at the time says it ("on Monday"): the date is in the
    # element's datetime, not in the words.
    body = ("" if happened is None else
            f' It changed on <time datetime="{happened.isoformat()}">'
            f"{happened.strftime('%A')}</time>.")
    html = render_template(NewMemoryInput(
        title=title, claim="", memory_type="episodic" if happened else "semantic",
        at="2026-12-01T09:00:00Z",
        article_html=f"<p><mark>{claim}</mark>{body}</p>"))
    return record_from(html, path).unwrap()


def build(seed: int) -> tuple[HeadVersion, list[Question]]:
    rng = random.Random(seed)
    records: list[MemoryRecord] = []
    questions: list[Question] = []
    used_days: set[date] = set()
    for n, (subject, claim) in enumerate(SUBJECTS):
        months = rng.sample(range(6 * 12), CHANGES)  # distinct months, 2021-2026
        for k, month_index in enumerate(sorted(months)):
            year, month = 2021 + month_index // 12, month_index % 12 + 1
            day = date(year, month, rng.randint(1, 28))
            while day in used_days:
                day = day + timedelta(1) if day.day < 28 else day.replace(day=1)
            used_days.add(day)
            path = f"areas/decisions/{n:02d}-{k}.html"
            records.append(_memory(path, f"{subject.title()} change",
                                   claim.format(v=rng.choice(VALUES)), day))
            written = f"{day.day} {MONTHS[day.month - 1]} {day.year}"
            questions += [
                Question("month", f"{subject} in {MONTHS[day.month - 1]} {day.year}", path),
                Question("day", f"what changed about the {subject} on {written}", path),
                Question("only", f"what happened on {written}", path)]
        for k in range(3):
            records.append(_memory(f"areas/notes/{n:02d}-{k}.html", f"{subject.title()} note",
                                   f"Ask the team before changing the {subject} ({k}).", None))
    return version_from_records(records, "0" * 40), questions


def _rank(paths: list[str], gold: str) -> int | None:
    return paths.index(gold) + 1 if gold in paths else None


def evaluate(version: HeadVersion, questions: list[Question], timed: bool
             ) -> dict[str, tuple[float, float, float]]:
    ranks: dict[str, list[int | None]] = {}
    for q in questions:
        if timed:
            where = placed(version, read_time(q.query, NOW))
            hits = search_head(version, SearchHeadInput(q.query,
                                                         limit=candidates(LIMIT, where)))
            hits = in_time(version, hits, q.query, where, LIMIT, lambda _: True)
        else:
            hits = search_head(version, SearchHeadInput(q.query, limit=LIMIT))
        ranks.setdefault(q.kind, []).append(_rank([h.path for h in hits], q.gold))
    out = {}
    for kind, got in ranks.items():
        n = len(got)
        out[kind] = (sum(r == 1 for r in got) / n,
                     sum(r is not None and r <= 5 for r in got) / n,
                     sum(1 / r for r in got if r is not None) / n)
    return out


def main() -> None:
    for name, seed in SEEDS.items():
        version, questions = build(seed)
        print(f"{name}: {sum(1 for _ in version.records())} memories, {len(questions)} questions")
        print(f"  {'kind':6} {'arm':14} {'R@1':>6} {'R@5':>6} {'MRR':>6} {'ms/query':>9}")
        for timed in (False, True):
            started = time.perf_counter()
            figures = evaluate(version, questions, timed)
            per_query = (time.perf_counter() - started) * 1000 / len(questions)
            label = "words + time" if timed else "words only"
            for kind, (r1, r5, mrr) in sorted(figures.items()):
                print(f"  {kind:6} {label:14} {r1:6.3f} {r5:6.3f} {mrr:6.3f} {per_query:9.2f}")


if __name__ == "__main__":
    main()
