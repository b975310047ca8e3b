"""placement-triage on a real store with a scripted model: an unattached inbox memory
moved under the named topic with its inbound links rewritten; the confidence floor at
its value; the touched guard (a decision commit pins, a sweep does not, an unreadable
history stops the phase before any call); attached, arc, task and non-inbox memories
never offered nor moved; five new topics at most; bad places, taken names and unknown
keys refused; and the reasons without --deep or without a model."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from returns.io import IOFailure, IOResult
from tests.unit.sleep.fake_model import ScriptedModel, offered
from tests.unit.sleep.sleep_support import AUTHOR, WRITTEN, World, ok

from memhtml.adapters.clock import ManualClock
from memhtml.adapters.memory_git import InMemoryGit
from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.errors import GitError, GitFailure
from memhtml.contracts.record import Link
from memhtml.contracts.services import ModelRequest, PathChange
from memhtml.domain.thresholds import PLACEMENT_CONFIDENCE_FLOOR, PLACEMENT_NEW_TOPICS
from memhtml.format.editors import set_meta
from memhtml.head import HeadVersion
from memhtml.llm.schema import validate_schema
from memhtml.sleep.contract import SleepPhase
from memhtml.sleep.phase import NO_MODEL, PhaseEnv, PhaseResult, TaskBudget
from memhtml.sleep.phases.placement_triage import (
    DEEP_ONLY,
    KEEP,
    SCHEMA,
    SYSTEM,
    TOOL_NAME,
    placement_triage,
)
from memhtml.store import Store, StoreDeps, WriteInput, init_store, write

STAMP = datetime(2026, 11, 29, 3, 15, 7, tzinfo=UTC)
RUN = "2026-11-29"
OPS = "areas/ops/runbook.html"
POINTER = "areas/notes/pointer.html"


class FlakyGit(InMemoryGit):
    """The in-memory repository, whose history reads can be made to fail."""

    broken = False

    def commits_between(self, old: str | None, new: str) -> IOResult[tuple[str, ...], GitError]:
        if self.broken:
            return IOFailure(GitFailure("commits_between", "pack unreadable"))
        return super().commits_between(old, new)

    def changed_paths(self, old: str, new: str) -> IOResult[tuple[str, ...], GitError]:
        if self.broken:
            return IOFailure(GitFailure("changed_paths", "pack unreadable"))
        return super().changed_paths(old, new)


def title_of(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".html").replace("-", " ").title()


def put(w: World, path: str, links: tuple[str, ...] = (), **more: Any) -> None:
    data = WriteInput(title=title_of(path), claim=f"The fact recorded in {path}.",
                      body=(f"Detail of {title_of(path)}.",), path=path,
                      links=tuple(Link("relates_to", "/" + p) for p in links), **more)
    ok(write(w.store, data))


def store(*inbox: str) -> World:
    """An initialized store holding the topic ``areas/ops``, the inbox memories named,
    and a note linking the first of them."""
    git = FlakyGit(bare=True)
    clock = ManualClock(WRITTEN)
    built = World(git, clock, InMemoryState(), Store(StoreDeps(git=git, clock=clock,
                                                              author=AUTHOR)))
    ok(init_store(built.store.deps))
    put(built, OPS)
    for path in inbox:
        put(built, path)
    if inbox:
        put(built, POINTER, (inbox[0],))
    clock.advance((STAMP - WRITTEN).total_seconds())
    return built


def inbox(*names: str) -> tuple[str, ...]:
    return tuple(f"areas/inbox/{n}.html" for n in names)


def env_for(w: World, model: ScriptedModel | None, *, deep: bool = True, dry_run: bool = False,
            base: str | None = None, **more: Any) -> PhaseEnv:
    version = ok(w.store.head())
    return PhaseEnv(phase="placement-triage", run_id=RUN, stamp=STAMP,
                    base=base or w.main(), base_version=version, version=version, git=w.git,
                    state=w.state, budget=TaskBudget(), dry_run=dry_run, model=model,
                    deep=deep, branch=None if dry_run else f"sleep/{RUN}", **more)


def run(w: World, model: ScriptedModel | None, **env: Any) -> PhaseResult:
    return ok(placement_triage(env_for(w, model, **env)))


def land(w: World, result: PhaseResult) -> HeadVersion:
    for commit in result.commits:
        w.raw(list(commit.changes), commit.subject)
    return ok(w.store.head())


def titles(request: ModelRequest) -> dict[str, str]:
    """Each offered member's title, to its key."""
    return {text.split("\n", 1)[0].removeprefix("title: "): key
            for key, text in offered(request).items()}


def placing(places: Mapping[str, tuple[str, float]], *extra: dict[str, object]
            ) -> Callable[[ModelRequest], Mapping[str, object]]:
    """A responder placing each offered member whose path ``places`` names (the others
    kept in the inbox), then the ``extra`` items as given."""
    by_title = {title_of(path): answer for path, answer in places.items()}

    def respond(request: ModelRequest) -> Mapping[str, object]:
        items: list[dict[str, object]] = []
        for title, key in titles(request).items():
            place, confidence = by_title.get(title, (KEEP, 0.9))
            items.append({"key": key, "place": place, "confidence": confidence})
        return {"placements": [*items, *extra]}

    return respond


def offered_titles(model: ScriptedModel) -> set[str]:
    return {t for request in model.requests for t in titles(request)}


# --------------------------------------------------------------------------- tests


def test_the_schema_is_strict_and_the_frame_constant() -> None:
    assert ok(IOResult.from_result(validate_schema(SCHEMA)))
    w = store(*inbox(*(f"n-{n}" for n in range(25))))
    model = ScriptedModel(respond=placing({}))
    run(w, model)
    assert len(model.requests) == 2
    assert {(r.system, r.tool_name) for r in model.requests} == {(SYSTEM, TOOL_NAME)}
    heading = {r.prompt.split("\n\n", 1)[0] for r in model.requests}
    assert len(heading) == 1 and "- areas/ops (1)" in heading.pop()


def test_a_move_lands_under_the_topic_and_rewrites_inbound_links() -> None:
    a, b = inbox("deploy-window", "grocery-list")
    w = store(a, b)
    model = ScriptedModel(respond=placing({a: ("areas/ops", 0.9)}))
    result = run(w, model)
    assert result.counts["moved"] == 1 and result.counts["kept"] == 1
    assert result.counts["new_topics"] == 0 and result.counts["refused"] == 0
    assert len(result.commits) == 1
    after = land(w, result)
    moved = "areas/ops/deploy-window.html"
    assert after.get(a) is None and after.get(moved) is not None
    assert after.get(b) is not None
    pointer = after.get(POINTER)
    assert pointer is not None
    assert [link.href for link in pointer.links] == ["/" + moved]
    assert 'href="/areas/ops/deploy-window.html"' in pointer.html


def test_the_floor_is_inclusive_at_its_value() -> None:
    a, b = inbox("at-floor", "below-floor")
    w = store(a, b)
    assert PLACEMENT_CONFIDENCE_FLOOR == 0.7
    model = ScriptedModel(respond=placing({a: ("areas/ops", 0.7), b: ("areas/ops", 0.6999)}))
    result = run(w, model)
    assert result.counts["moved"] == 1 and result.counts["below_floor"] == 1
    assert result.counts["refused"] == 1
    after = land(w, result)
    assert after.get("areas/ops/at-floor.html") is not None and after.get(b) is not None


def phase_commit(w: World, phase: SleepPhase, path: str) -> str:
    """A commit of this run's ``phase`` on main restamping ``path``'s confidence."""
    record = ok(w.store.head()).get(path)
    assert record is not None
    html = set_meta(record.html, "memhtml-confidence", "0.5")
    return w.raw([PathChange(path, html.encode())],
                 f"{phase} ({RUN}): x\n\nMemhtml-Run: {RUN}\nMemhtml-Phase: {phase}\n")


def test_the_guard_refuses_a_decision_commits_file_and_allows_a_sweeps() -> None:
    a, b, c = inbox("edited-by-dedup", "decayed", "edited-by-hand")
    w = store(a, b, c)
    base = w.main()
    phase_commit(w, "dedup-merge", a)
    phase_commit(w, "confidence-decay", b)
    record = ok(w.store.head()).get(c)
    assert record is not None
    w.raw([PathChange(c, set_meta(record.html, "memhtml-importance", "3").encode())])
    model = ScriptedModel(respond=placing({a: ("areas/ops", 0.9), b: ("areas/ops", 0.9),
                                           c: ("areas/ops", 0.9)}))
    result = run(w, model, base=base)
    assert offered_titles(model) == {title_of(b)}, "a pinned file is not even offered"
    assert result.counts["touched"] == 2 and result.counts["refused"] == 2
    assert result.counts["moved"] == 1 and result.counts["widened"] == 0
    after = land(w, result)
    assert after.get(a) is not None and after.get(c) is not None
    assert after.get("areas/ops/decayed.html") is not None


def test_an_unknown_touched_set_stops_before_any_call() -> None:
    a, b = inbox("one", "two")
    w = store(a, b)
    base = w.main()
    phase_commit(w, "dedup-merge", a)
    model = ScriptedModel(respond=placing({b: ("areas/ops", 0.9)}))
    env = env_for(w, model, base=base)
    assert isinstance(w.git, FlakyGit)
    w.git.broken = True
    result = ok(placement_triage(env))
    assert model.calls == 0 and not result.commits
    assert result.counts["guard_unknown"] == 1 and result.reason
    assert "pack unreadable" in result.reason


def test_attached_arc_task_and_non_inbox_memories_are_never_offered_nor_moved() -> None:
    w = store(*inbox("lone"))
    hub = inbox("hub-1", "hub-2", "hub-3")
    put(w, hub[0])
    put(w, hub[1], (hub[0],))
    put(w, hub[2], (hub[0], hub[1]))
    put(w, "areas/inbox/story-arc.html", memory_type="arc")
    put(w, "areas/inbox/call-back.html", memory_type="task", task_status="todo")
    put(w, "areas/inbox/tasks/nested-note.html")
    put(w, "areas/notes/elsewhere.html")
    everything = dict.fromkeys((
        *inbox("lone"), *hub, "areas/inbox/story-arc.html", "areas/inbox/call-back.html",
        "areas/inbox/tasks/nested-note.html", "areas/notes/elsewhere.html"), ("areas/ops", 1.0))
    model = ScriptedModel(respond=placing(everything))
    result = run(w, model)
    assert offered_titles(model) == {"Lone"}
    assert result.counts["attached"] == 3 and result.counts["candidates"] == 1
    assert result.counts["moved"] == 1
    after = land(w, result)
    assert after.get("areas/ops/lone.html") is not None
    for path in (*hub, "areas/inbox/story-arc.html", "areas/inbox/call-back.html",
                 "areas/inbox/tasks/nested-note.html", "areas/notes/elsewhere.html"):
        assert after.get(path) is not None, path


def test_an_answer_naming_a_path_or_an_unoffered_key_changes_nothing() -> None:
    a, b = inbox("one", "two")
    w = store(a, b)
    for stray in ("areas/notes/pointer.html", "m99", "/areas/inbox/two.html", "one.html"):
        model = ScriptedModel(respond=placing(
            {a: ("areas/ops", 1.0)},
            {"key": stray, "place": "areas/ops", "confidence": 1.0}), checked=False)
        result = run(w, model)
        # A long path is off the schema; a short stray is a key never offered.
        assert result.counts["failed_batches"] == 1 and result.counts["moved"] == 0, stray
        assert result.counts["unknown_keys"] == (len(stray) <= 16)
        assert not result.commits


def test_at_most_five_new_topics_a_run() -> None:
    names = [f"note-{n}" for n in range(8)]
    paths = inbox(*names)
    w = store(*paths)
    places = {p: (f"resources/topic-{n}", 0.9) for n, p in enumerate(paths[:6])}
    places[paths[6]] = ("resources/topic-0", 0.9)  # a topic this run made: not new
    places[paths[7]] = ("areas/ops", 0.9)  # an existing topic: not new
    result = run(w, ScriptedModel(respond=placing(places)))
    assert result.counts["new_topics"] == PLACEMENT_NEW_TOPICS == 5
    assert result.counts["new_topic_cap"] == 1
    assert result.counts["moved"] == 7
    after = land(w, result)
    assert after.get(paths[5]) is not None, "the sixth new topic was not made"
    assert after.get("resources/topic-0/note-6.html") is not None


def test_bad_places_are_refused() -> None:
    bad = ("areas/inbox", "areas/tasks", "resources/people", "archive/2026",
           "areas/ops/deeper", "areas/Not A Slug", "notes/x", "areas/-dash",
           "areas/" + "x" * 49, "areas/a--b", "keep inbox")
    paths = inbox(*(f"n-{n}" for n in range(len(bad))))
    w = store(*paths)
    result = run(w, ScriptedModel(respond=placing(
        {p: (place, 0.95) for p, place in zip(paths, bad, strict=True)})))
    assert result.counts["bad_place"] == len(bad) == result.counts["refused"]
    assert result.counts["moved"] == 0 and not result.commits


def test_a_taken_name_is_refused() -> None:
    (a,) = inbox("runbook")
    w = store(a)
    result = run(w, ScriptedModel(respond=placing({a: ("areas/ops", 0.9)})))
    assert result.counts["taken"] == 1 and result.counts["moved"] == 0


def test_a_name_the_store_refuses_is_counted() -> None:
    a = "areas/inbox/Runbook.html"  # a case twin of the topic's runbook.html
    w = store(a)
    result = run(w, ScriptedModel(respond=placing({a: ("areas/ops", 0.9)})))
    assert result.counts["store_refused"] == 1 == result.counts["refused"]
    assert result.counts["moved"] == 0 and not result.commits
    assert result.warnings and a in result.warnings[0]


def test_an_off_schema_answer_skips_its_batch() -> None:
    (a,) = inbox("one")
    w = store(a)

    def respond(request: ModelRequest) -> Mapping[str, object]:
        return {"placements": [{"key": "m1", "place": "areas/ops", "confidence": 1.5}]}

    result = run(w, ScriptedModel(respond=respond))
    assert result.counts["failed_batches"] == 1 and result.counts["moved"] == 0
    assert not result.commits


def test_without_deep_it_returns_a_reason_and_asks_nothing() -> None:
    w = store(*inbox("one"))
    model = ScriptedModel(respond=placing({}))
    result = run(w, model, deep=False)
    assert result.reason == DEEP_ONLY and model.calls == 0 and not result.commits


def test_without_a_model_it_returns_the_reason() -> None:
    w = store(*inbox("one"))
    result = run(w, None)
    assert result.reason == NO_MODEL and not result.commits


def test_a_dry_run_counts_and_asks_nothing() -> None:
    w = store(*inbox(*(f"n-{n}" for n in range(21))))
    model = ScriptedModel(respond=placing({}))
    result = run(w, model, dry_run=True)
    assert model.calls == 0 and not result.commits
    assert result.counts["would_call"] == 2 and result.counts["candidates"] == 21
    assert result.counts["topics"] == 2  # areas/ops and areas/notes (the pointer)
