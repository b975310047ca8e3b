"""arc-synthesis on a real store with a scripted model: a chosen community gets an arc
in its oldest member's directory that every covered member links ``part_of``, nothing
archived; a community an arc already reaches, or too small, is not offered; a stray key
changes nothing; the nightly cap holds; a malformed writing call skips its arc only;
no model or a dry run writes nothing; two runs send the same bytes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

import pytest
from returns.pipeline import is_successful
from tests.unit.sleep.fake_model import ScriptedModel, offered
from tests.unit.sleep.sleep_support import RUN_DAY, WRITTEN, World, blank_world, ok

from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.services import ModelRequest
from memhtml.domain.thresholds import ARC_MIN_MEMBERS, ARCS_PER_NIGHT
from memhtml.head import HeadVersion
from memhtml.llm.schema import validate_schema
from memhtml.sleep.budget import CallBudget
from memhtml.sleep.phase import NO_MODEL, PhaseEnv, PhaseResult, TaskBudget
from memhtml.sleep.phases.arc_synthesis import (
    TRIAGE_SCHEMA,
    TRIAGE_TOOL,
    WRITE_SCHEMA,
    WRITE_TOOL,
    arc_synthesis,
)
from memhtml.sleep.tasks import SLEEP_AUTHOR
from memhtml.store import WriteInput, write

STAMP = datetime(2026, 11, 29, 3, 15, 7, tzinfo=UTC)


def topic(name: str, size: int = ARC_MIN_MEMBERS + 1) -> tuple[str, ...]:
    return tuple(f"areas/{name}/{name}-note-{n}.html" for n in range(1, size + 1))


LAUNCH = topic("launch")
MOVE = topic("move")
TINY = topic("tiny", ARC_MIN_MEMBERS - 1)


def title_of(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".html").replace("-", " ").title()


def put(w: World, path: str, links: Sequence[Link] = (), **more: object) -> None:
    data = WriteInput(title=title_of(path), claim=f"The fact recorded in {path}.",
                      body=(f"Detail of {title_of(path)}.",), path=path, links=tuple(links),
                      **more)  # type: ignore[arg-type]
    ok(write(w.store, data))


def clique(w: World, paths: Sequence[str]) -> None:
    """Each member links ``relates_to`` every earlier one: one community."""
    for n, path in enumerate(paths):
        put(w, path, [Link("relates_to", to_document_path(p)) for p in paths[:n]])


def corpus(*topics: Sequence[str]) -> World:
    w = blank_world()
    for paths in topics:
        clique(w, paths)
    w.clock.advance((STAMP - WRITTEN).total_seconds())
    return w


def env_for(w: World, model: ScriptedModel | None, *, dry_run: bool = False,
            calls: CallBudget | None = None) -> PhaseEnv:
    version = ok(w.store.head())
    return PhaseEnv(phase="arc-synthesis", run_id=RUN_DAY, stamp=STAMP, base=w.main(),
                    base_version=version, version=version, git=w.git, state=w.state,
                    budget=TaskBudget(), dry_run=dry_run, model=model,
                    calls=calls or CallBudget())


def run(w: World, model: ScriptedModel | None, **env: object) -> PhaseResult:
    return ok(arc_synthesis(env_for(w, model, **env)))  # type: ignore[arg-type]


def land(w: World, result: PhaseResult) -> HeadVersion:
    for commit in result.commits:
        w.raw(list(commit.changes), commit.subject)
    return ok(w.store.head())


def held(version: HeadVersion, path: str) -> MemoryRecord:
    record = version.get(path)
    assert record is not None, path
    return record


def arcs_in(version: HeadVersion) -> list[MemoryRecord]:
    return [r for r in version.records() if r.memory_type == "arc"]


# --------------------------------------------------------------------------- answers


def topic_of(text: str) -> str:
    """The topic a rendered community or member belongs to (from a note's title)."""
    for line in text.split("\n"):
        for word in line.lower().replace("title: ", "").removeprefix("- ").split():
            return word
    raise AssertionError(text)


def responder(choose: Mapping[str, str], covers: Mapping[str, Sequence[int]] | None = None,
              *, triage_extra: Sequence[str] = (), write_extra: Sequence[str] = ()
              ) -> Callable[[ModelRequest], Mapping[str, object]]:
    """Triage says yes, titled ``choose[topic]``, for each topic named there; a writing
    call covers the members at the given 0-based offsets (all of them by default)."""
    def respond(request: ModelRequest) -> Mapping[str, object]:
        members = offered(request)
        if request.tool_name == TRIAGE_TOOL:
            items: list[dict[str, object]] = []
            for key, text in members.items():
                name = topic_of(text.split("\n", 1)[1])
                title = choose.get(name)
                items.append({"key": key, "arc": title is not None, "title": title})
            items += [{"key": k, "arc": True, "title": "Stray"} for k in triage_extra]
            return {"communities": items}
        assert request.tool_name == WRITE_TOOL
        keys = list(members)
        name = topic_of(next(iter(members.values())))
        chosen = (covers or {}).get(name)
        named = keys if chosen is None else [keys[i] for i in chosen]
        # The arc's text is drawn from its members' words (``sleep.grounded``).
        return {"claim": f"The {name} notes record the facts.",
                "body": [f"Detail of the {name} notes.", "Each fact recorded in a note."],
                "covers": [*named, *write_extra]}

    return respond


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("schema", [TRIAGE_SCHEMA, WRITE_SCHEMA])
def test_the_schemas_are_in_the_strict_subset(schema: Mapping[str, object]) -> None:
    assert is_successful(validate_schema(schema))


def test_no_model_writes_nothing() -> None:
    result = run(corpus(LAUNCH), None)
    assert result.reason == NO_MODEL
    assert result.commits == ()


def test_a_dry_run_asks_nothing() -> None:
    model = ScriptedModel(respond=responder({"launch": "The launch"}))
    result = run(corpus(LAUNCH, MOVE), model, dry_run=True)
    assert model.calls == 0
    assert result.commits == ()
    assert (result.counts["candidates"], result.counts["would_call"]) == (2, 1)
    assert result.counts["would_write_at_most"] == 2


def test_a_fake_answer_creates_the_arc_and_links_every_covered_member() -> None:
    w = corpus(LAUNCH, MOVE)
    before = ok(w.store.head())
    model = ScriptedModel(respond=responder({"launch": "The launch notes"}))
    result = run(w, model)
    assert [r.tool_name for r in model.requests] == [TRIAGE_TOOL, WRITE_TOOL]
    assert result.counts["candidates"] == 2
    assert (result.counts["chosen"], result.counts["arcs"]) == (1, 1)
    assert result.counts["linked"] == len(LAUNCH)
    assert (result.counts["triage_calls"], result.counts["write_calls"]) == (1, 1)
    (commit,) = result.commits
    assert all(change.data is not None for change in commit.changes)  # nothing removed
    after = land(w, result)

    (arc,) = arcs_in(after)
    assert arc.path.startswith("areas/launch/")
    assert (arc.title, arc.author, arc.status) == ("The launch notes", SLEEP_AUTHOR, "active")
    assert arc.claim == "The launch notes record the facts."
    assert "Detail of the launch notes." in arc.body_text
    href = to_document_path(arc.path)
    for path in LAUNCH:
        assert Link("part_of", href) in held(after, path).links
    # Nothing archived; the other community untouched.
    assert sorted(p for p in after.paths() if p.startswith("archive/")) == sorted(
        p for p in before.paths() if p.startswith("archive/"))
    assert all(not r.archived for r in after.records())
    for path in MOVE:
        assert held(after, path).html == held(before, path).html


def test_only_covered_members_gain_the_link() -> None:
    w = corpus(LAUNCH)
    before = ok(w.store.head())
    result = run(w, ScriptedModel(respond=responder({"launch": "Launch"}, {"launch": (0, 2, 4)})))
    assert result.counts["linked"] == 3
    after = land(w, result)
    (arc,) = arcs_in(after)
    linked = {p for p in LAUNCH if Link("part_of", to_document_path(arc.path))
              in held(after, p).links}
    assert linked == {LAUNCH[0], LAUNCH[2], LAUNCH[4]}
    for path in set(LAUNCH) - linked:
        assert held(after, path).html == held(before, path).html


def test_a_community_with_an_arc_already_is_not_offered() -> None:
    w = corpus(LAUNCH, MOVE)
    land(w, run(w, ScriptedModel(respond=responder({"launch": "Launch"}))))
    model = ScriptedModel(respond=responder({"launch": "Again", "move": "The move"}))
    result = run(w, model)
    assert result.counts["with_arc"] == 1
    assert result.counts["candidates"] == 1
    (triage,) = [r for r in model.requests if r.tool_name == TRIAGE_TOOL]
    assert all("Launch" not in text for text in offered(triage).values())
    assert result.counts["arcs"] == 1
    after = land(w, result)
    assert sorted(a.title for a in arcs_in(after)) == ["Launch", "The move"]


def test_a_community_linked_part_of_an_arc_is_not_offered() -> None:
    w = blank_world()
    put(w, "areas/elsewhere/story.html", memory_type="arc")
    clique(w, LAUNCH)
    put(w, "areas/launch/late.html",
        [Link("relates_to", to_document_path(LAUNCH[0])),
         Link("relates_to", to_document_path(LAUNCH[1])),
         Link("part_of", "/areas/elsewhere/story.html")])
    w.clock.advance((STAMP - WRITTEN).total_seconds())
    model = ScriptedModel(respond=responder({"launch": "Launch"}))
    result = run(w, model)
    assert result.counts["candidates"] == 0
    assert model.calls == 0
    assert result.commits == ()


def test_a_small_community_and_tasks_are_not_offered() -> None:
    w = corpus(TINY, LAUNCH)
    put(w, "areas/tasks/launch-task.html",
        [Link("relates_to", to_document_path(p)) for p in LAUNCH], memory_type="task")
    model = ScriptedModel(respond=responder({"tiny": "Tiny", "launch": "Launch"}))
    result = run(w, model)
    assert (result.counts["small"], result.counts["candidates"]) == (1, 1)
    assert all("Task" not in r.prompt for r in model.requests)
    write_call = model.requests[1]
    assert len(offered(write_call)) == len(LAUNCH)


@pytest.mark.parametrize("where", ["triage", "write"])
@pytest.mark.parametrize("stranger", ["m99", "areas/launch/launch-note-1.html", "m0"])
def test_an_unknown_key_changes_nothing(where: str, stranger: str) -> None:
    extra = {"triage_extra" if where == "triage" else "write_extra": (stranger,)}
    result = run(corpus(LAUNCH), ScriptedModel(respond=responder(
        {"launch": "Launch"}, **extra), checked=False))  # type: ignore[arg-type]
    assert result.commits == ()
    assert result.counts["arcs"] == 0
    assert result.counts[f"{where}_failed_batches"] == 1
    if stranger != "areas/launch/launch-note-1.html":  # longer than a key: off-schema
        assert result.counts[f"{where}_unknown_keys"] == 1


def test_the_fakes_stranger_key_in_a_writing_call_changes_nothing() -> None:
    model = ScriptedModel(respond=responder({"launch": "Launch"}),
                          unknown_key_calls=frozenset({2}))
    result = run(corpus(LAUNCH), model)
    assert result.commits == ()
    assert (result.counts["write_failed_batches"], result.counts["write_unknown_keys"]) == (1, 1)


def test_the_nightly_cap_holds() -> None:
    names = [f"t{n}" for n in range(ARCS_PER_NIGHT + 2)]
    w = corpus(*(topic(name, ARC_MIN_MEMBERS) for name in names))
    model = ScriptedModel(respond=responder({name: f"The {name} notes" for name in names}))
    result = run(w, model)
    assert result.counts["candidates"] == len(names)
    assert result.counts["chosen"] == len(names)
    assert (result.counts["arcs"], result.counts["capped"]) == (ARCS_PER_NIGHT, 2)
    assert result.counts["write_calls"] == ARCS_PER_NIGHT
    assert len(result.commits) == ARCS_PER_NIGHT
    after = land(w, result)
    # Label order: the first five topics by path get their arcs.
    assert sorted(a.title for a in arcs_in(after)) == sorted(
        f"The {name} notes" for name in sorted(names)[:ARCS_PER_NIGHT])


def test_a_malformed_writing_call_skips_that_arc_only() -> None:
    w = corpus(LAUNCH, MOVE)
    model = ScriptedModel(respond=responder({"launch": "Launch", "move": "Move"}),
                          malformed_calls=frozenset({2}))
    result = run(w, model)
    assert model.calls == 3
    assert (result.counts["write_batches"], result.counts["write_failed_batches"]) == (2, 1)
    assert result.counts["arcs"] == 1
    assert len(result.commits) == 1
    after = land(w, result)
    # Communities go by label: launch first, and its call was the malformed one.
    (arc,) = arcs_in(after)
    assert arc.path.startswith("areas/move/")
    assert any("launch" in line and "malformed" in line for line in result.warnings)


def test_a_malformed_triage_writes_nothing() -> None:
    model = ScriptedModel(respond=responder({"launch": "Launch"}),
                          malformed_calls=frozenset({1}))
    result = run(corpus(LAUNCH), model)
    assert model.calls == 1
    assert result.commits == ()
    assert result.counts["triage_failed_batches"] == 1


def test_an_arc_covering_too_few_is_not_written() -> None:
    result = run(corpus(LAUNCH), ScriptedModel(respond=responder(
        {"launch": "Launch"}, {"launch": (0, 1)})))
    assert result.commits == ()
    assert result.counts["too_few"] == 1


def test_a_declined_community_gets_no_writing_call() -> None:
    model = ScriptedModel(respond=responder({}))
    result = run(corpus(LAUNCH, MOVE), model)
    assert [r.tool_name for r in model.requests] == [TRIAGE_TOOL]
    assert (result.counts["chosen"], result.counts["arcs"]) == (0, 0)


def test_the_budget_skips_what_it_cannot_pay_for() -> None:
    model = ScriptedModel(respond=responder({"launch": "Launch", "move": "Move"}))
    result = run(corpus(LAUNCH, MOVE), model, calls=CallBudget(2))
    assert model.calls == 2
    assert (result.counts["arcs"], result.counts["write_budget_skipped"]) == (1, 1)
    assert result.counts["write_failed_batches"] == 0


def test_model_text_reaches_the_file_escaped() -> None:
    w = corpus(LAUNCH)
    result = run(w, ScriptedModel(respond=responder(
        {"launch": "<script>x</script> Launch note facts detail"})))
    after = land(w, result)
    (arc,) = arcs_in(after)
    assert arc.title == "<script>x</script> Launch note facts detail"
    assert "<script>" not in arc.html


def test_two_runs_send_the_same_bytes() -> None:
    first = ScriptedModel(respond=responder({"launch": "Launch", "move": "Move"}))
    second = ScriptedModel(respond=responder({"launch": "Launch", "move": "Move"}))
    run(corpus(LAUNCH, MOVE, TINY), first)
    run(corpus(LAUNCH, MOVE, TINY), second)
    assert len(first.sent) == 3
    assert first.sent == second.sent


def test_an_arc_is_never_filed_among_person_files() -> None:
    # The community's oldest member is a person's file: the arc goes beside the oldest
    # note instead, where person-links will not read it as a person's profile.
    w = blank_world()
    paths = ("resources/people/launch-lead.html", *LAUNCH)
    for n, path in enumerate(paths):
        put(w, path, [Link("relates_to", to_document_path(p)) for p in paths[:n]])
        w.clock.advance(60)  # the person's file is the oldest
    w.clock.advance((STAMP - w.clock.now()).total_seconds())
    after = land(w, run(w, ScriptedModel(respond=responder({"launch": "The launch"}))))
    (arc,) = arcs_in(after)
    assert arc.path.startswith("areas/launch/")
