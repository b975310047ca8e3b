"""task-detection with a scripted model on a real in-memory store: a true quote mints a
detected task, a fabricated one is refused, a finding below the floor is dropped, an
unknown key changes nothing, a throttled night closes nothing, two runs send the same
bytes, no model writes nothing, and tasks never reach the prompt."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful
from tests.unit.sleep.fake_model import Answer, ScriptedModel, offered
from tests.unit.sleep.sleep_support import World, blank_world, ok

from memhtml.contracts.errors import ModelError
from memhtml.contracts.paths import to_document_path
from memhtml.contracts.services import ModelRequest
from memhtml.domain.thresholds import (
    TASK_DETECTION_BATCH,
    TASK_DETECTION_CALLS,
    TASK_DETECTION_CONFIDENCE,
    TASK_DETECTION_SCAN,
)
from memhtml.head import HeadVersion
from memhtml.llm.schema import validate_schema
from memhtml.sleep.budget import CallBudget
from memhtml.sleep.findings import Finding, Quote, task_path
from memhtml.sleep.phase import PhaseEnv, PhaseResult, TaskBudget, without_model
from memhtml.sleep.phases.task_detection import (
    DETECTOR,
    MEMBER_TEXT_CHARS,
    SCHEMA,
    SPEC,
    TOOL_NAME,
    canonical,
    carried,
    collapsed,
    render,
    scan_rows,
    task_detection,
)
from memhtml.sleep.tasks import DETECTED_TAG, NO_LONGER_DETECTED
from memhtml.store import WriteInput, archive, task_add, write

STAMP = datetime(2026, 11, 29, 3, 15, 7, tzinfo=UTC)
NEXT_NIGHT = datetime(2026, 11, 30, 3, 15, 7, tzinfo=UTC)
OWED = "I will send Dana the migration report by Friday."
REPORT = "areas/notes/report.html"

Said = tuple[str, float, str]
"""(sentence, confidence, owed): one finding the scripted model reports for a title."""


def note(w: World, path: str, title: str, *body: str) -> str:
    """A memory written a minute after the last, so the newest is written last."""
    w.clock.advance(60)
    ok(write(w.store, WriteInput(title=title, claim=f"{title} noted.", body=body, path=path)))
    return path


def store_with(*extra: tuple[str, str, str]) -> World:
    w = blank_world()
    note(w, "areas/notes/lunch.html", "Lunch", "We had soup.")
    note(w, REPORT, "Migration report", "The migration ran on Monday.", OWED)
    for path, title, body in extra:
        note(w, path, title, body)
    return w


def head(w: World) -> HeadVersion:
    return ok(w.store.head())


def env(w: World, model: ScriptedModel | None, *, calls: int | None = None,
        budget: TaskBudget | None = None, dry_run: bool = False,
        stamp: datetime = STAMP) -> PhaseEnv:
    sha = w.main()
    version = head(w)
    return PhaseEnv(phase="task-detection", run_id=stamp.date().isoformat(), stamp=stamp,
                    base=sha, base_version=version, version=version, git=w.git,
                    state=w.state, budget=budget or TaskBudget(), dry_run=dry_run,
                    model=model, calls=CallBudget(calls))


def responder(said: Mapping[str, list[Said]]) -> ScriptedModel:
    """A model reporting, for every offered member whose title is in ``said``, the
    findings listed under it."""
    def respond(request: ModelRequest) -> Answer | ModelError:
        findings: list[object] = []
        for key, text in offered(request).items():
            for sentence, confidence, owed in said.get(text.split("\n", 1)[0], []):
                findings.append({"key": key, "owed": owed, "sentence": sentence,
                                 "confidence": confidence})
        return {"findings": findings}
    return ScriptedModel(respond=respond, name=DETECTOR)


def run(w: World, model: ScriptedModel | None, **more: object) -> PhaseResult:
    return ok(task_detection(env(w, model, **more)))  # type: ignore[arg-type]


def land(w: World, result: PhaseResult) -> None:
    (commit,) = result.commits
    w.raw(list(commit.changes))


def report_task() -> str:
    return task_path(Finding(DETECTOR, canonical(REPORT, OWED), "Follow up: Migration report",
                             "", Quote(REPORT, OWED)))


def test_the_schema_is_one_the_dialects_accept_and_the_cap_covers_a_full_scan() -> None:
    assert is_successful(validate_schema(SCHEMA))
    assert TASK_DETECTION_CALLS * TASK_DETECTION_BATCH >= TASK_DETECTION_SCAN
    assert SPEC.size == TASK_DETECTION_BATCH and SPEC.tool_name == TOOL_NAME


def test_a_true_quote_mints_a_detected_task_quoting_it() -> None:
    w = store_with()
    model = responder({"Migration report": [(OWED, 0.9, "the migration report to Dana")]})
    result = run(w, model)
    assert result.counts["findings"] == 1 and result.counts["kept"] == 1
    assert result.counts["tasks_minted"] == 1 and result.counts["calls"] == 1
    (commit,) = result.commits
    (change,) = commit.changes
    assert change.path == report_task()
    assert change.path.startswith("areas/tasks/det-")
    land(w, result)
    task = head(w).get(report_task())
    assert task is not None and task.memory_type == "task" and task.task_status == "todo"
    assert task.tags == (DETECTED_TAG, DETECTOR) and task.author == "agent:sleep"
    assert f"quoted from {to_document_path(REPORT)}: \u201c{OWED}\u201d" in task.body_text
    assert "the migration report to Dana" in task.claim


def test_the_path_of_a_finding_is_pinned() -> None:
    assert canonical(REPORT, f"  {OWED}\n") == f"{REPORT} | {OWED}"
    # sha256 of "task-detection", NUL, the canonical finding: its first 12 hex digits.
    assert report_task() == "areas/tasks/det-1a6ad96e9334-follow-up-migration-report.html"


def test_a_quote_split_over_whitespace_still_holds() -> None:
    w = store_with()
    spread = OWED.replace(" ", "\n  ")
    result = run(w, responder({"Migration report": [(spread, 0.8, "report")]}))
    assert result.counts["tasks_minted"] == 1
    assert result.commits[0].changes[0].path == report_task()


def test_a_fabricated_quote_is_refused_and_counted() -> None:
    w = store_with()
    made_up = "I promised to rewrite the billing service by Monday."
    result = run(w, responder({"Migration report": [(made_up, 0.95, "billing rewrite")]}))
    assert result.counts["kept"] == 1 and result.counts["tasks_refused_quote"] == 1
    assert result.counts["tasks_minted"] == 0 and result.commits == ()


def test_a_quote_from_another_member_is_refused() -> None:
    """A finding is checked against the memory its key names, not any memory."""
    w = store_with()
    result = run(w, responder({"Lunch": [(OWED, 0.95, "report")]}))
    assert result.counts["tasks_refused_quote"] == 1 and result.commits == ()


def test_a_finding_below_the_floor_is_dropped_and_one_at_it_kept() -> None:
    w = store_with(("areas/notes/call.html", "Call", "I still need to call the landlord."))
    result = run(w, responder({
        "Migration report": [(OWED, TASK_DETECTION_CONFIDENCE, "report")],
        "Call": [("I still need to call the landlord.", 0.69, "call")],
    }))
    assert result.counts["findings"] == 2 and result.counts["below_confidence"] == 1
    assert result.counts["tasks_minted"] == 1
    assert [c.path for c in result.commits[0].changes] == [report_task()]


def test_an_unknown_key_changes_nothing() -> None:
    w = store_with()
    model = responder({"Migration report": [(OWED, 0.9, "report")]})
    model.unknown_key_calls = frozenset({1})
    result = run(w, model)
    assert result.counts["unknown_keys"] == 1 and result.counts["findings"] == 0
    assert result.commits == ()
    named_path = responder({"Migration report": [(OWED, 0.9, "report")]})
    named_path.unknown_key_calls, named_path.unknown_key = frozenset({1}), REPORT
    assert run(w, named_path).commits == ()


def test_a_confidence_outside_the_unit_interval_skips_the_batch() -> None:
    w = store_with()
    model = responder({"Migration report": [(OWED, 1.5, "report")]})
    model.checked = False  # a model handing over what its schema forbids: the reader's line
    result = run(w, model)
    assert result.counts["failed_batches"] == 1 and result.counts["findings"] == 0
    assert result.counts["judged_all"] is False and result.commits == ()
    assert any("rejected" in line for line in result.warnings)


def crowded(w: World, n: int) -> None:
    for i in range(n):
        note(w, f"areas/notes/filler-{i:03}.html", f"Filler {i}", f"Nothing owed {i}.")


def test_a_throttled_night_counts_the_skipped_batch_and_closes_nothing() -> None:
    w = store_with()
    land(w, run(w, responder({"Migration report": [(OWED, 0.9, "report")]})))
    crowded(w, TASK_DETECTION_BATCH)  # the report note falls into the second batch
    quiet = responder({})
    result = run(w, quiet, calls=1, stamp=NEXT_NIGHT)
    assert result.counts["batches"] == 2 and result.counts["calls"] == 1
    assert result.counts["budget_skipped"] == 1 and result.counts["judged_all"] is False
    assert result.counts["tasks_closed"] == 0 and result.commits == ()
    assert quiet.calls == 1


def test_a_failed_batch_spares_the_others_and_closes_nothing() -> None:
    w = store_with()
    land(w, run(w, responder({"Migration report": [(OWED, 0.9, "report")]})))
    note(w, "areas/notes/call.html", "Call", "I still need to call the landlord.")
    crowded(w, TASK_DETECTION_BATCH)
    model = responder({"Call": [("I still need to call the landlord.", 0.9, "call")]})
    model.malformed_calls = frozenset({1})
    result = run(w, model, stamp=NEXT_NIGHT)
    assert result.counts["failed_batches"] == 1 and result.counts["tasks_minted"] == 1
    assert result.counts["tasks_closed"] == 0


def test_a_night_that_judged_everything_closes_what_it_no_longer_finds() -> None:
    w = store_with()
    land(w, run(w, responder({"Migration report": [(OWED, 0.9, "report")]})))
    result = run(w, responder({}), stamp=NEXT_NIGHT)
    assert result.counts["judged_all"] is True and result.counts["tasks_closed"] == 1
    assert NO_LONGER_DETECTED in result.commits[0].body
    land(w, result)
    assert head(w).get(report_task()) is None


def test_a_second_night_finding_the_same_leaves_the_task_and_commits_nothing() -> None:
    w = store_with()
    said = {"Migration report": [(OWED, 0.9, "report")]}
    land(w, run(w, responder(said)))
    again = run(w, responder(said), stamp=NEXT_NIGHT)
    assert again.counts["tasks_unchanged"] == 1 and again.counts["tasks_minted"] == 0
    assert again.commits == ()


def test_a_task_whose_memory_aged_out_of_the_scan_is_carried_not_closed() -> None:
    w = store_with()
    land(w, run(w, responder({"Migration report": [(OWED, 0.9, "report")]})))
    view = head(w)
    finding = canonical(REPORT, OWED)
    assert carried(view, frozenset()) == frozenset({finding})
    assert carried(view, frozenset({REPORT})) == frozenset()
    ok(archive(w.store, REPORT))
    assert carried(head(w), frozenset()) == frozenset()


def test_the_scan_takes_the_most_recently_updated_first_and_stops_at_the_cap() -> None:
    w = store_with()
    land(w, run(w, responder({"Migration report": [(OWED, 0.9, "report")]})))
    crowded(w, TASK_DETECTION_SCAN)  # every filler is newer than both notes
    rows, eligible = scan_rows(head(w))
    assert eligible == TASK_DETECTION_SCAN + 2 and len(rows) == TASK_DETECTION_SCAN
    assert [r.path for r in rows[:2]] == ["areas/notes/filler-199.html",
                                          "areas/notes/filler-198.html"]
    assert REPORT not in {r.path for r in rows}
    stamps = [r.updated_at for r in rows]
    assert stamps == sorted(stamps, reverse=True)
    result = run(w, responder({}), stamp=NEXT_NIGHT)
    assert result.counts["calls"] == TASK_DETECTION_CALLS == result.counts["batches"]
    # The report note was not asked about tonight, so its task is not judged stale.
    assert result.counts["judged_all"] is True and result.counts["carried"] == 1
    assert result.counts["tasks_closed"] == 0 and result.commits == ()


def test_two_runs_send_identical_request_bytes() -> None:
    w = store_with()
    crowded(w, TASK_DETECTION_BATCH + 3)
    first, second = responder({}), responder({})
    run(w, first)
    run(w, second, stamp=NEXT_NIGHT)
    assert first.calls == 2 and first.sent == second.sent
    assert {r.system for r in first.requests} == {SPEC.system}


def test_no_model_writes_nothing() -> None:
    w = store_with()
    assert run(w, None) == without_model()


def test_a_dry_run_asks_nothing_and_writes_nothing() -> None:
    w = store_with()
    crowded(w, TASK_DETECTION_BATCH)
    model = responder({"Migration report": [(OWED, 0.9, "report")]})
    result = run(w, model, dry_run=True)
    assert model.calls == 0 and result.commits == ()
    assert result.counts["would_call"] == 2


def test_tasks_never_reach_the_prompt() -> None:
    w = store_with()
    ok(task_add(w.store, "Renew passport", "I must renew the passport."))
    land(w, run(w, responder({"Migration report": [(OWED, 0.9, "report")]})))
    model = responder({})
    result = run(w, model, stamp=NEXT_NIGHT)
    assert result.counts["scanned"] == 2
    texts = [text for r in model.requests for text in offered(r).values()]
    assert len(texts) == 2
    assert not any("passport" in t or "Follow up" in t for t in texts)


def test_a_long_member_is_cut_at_a_word() -> None:
    w = blank_world()
    note(w, "areas/notes/long.html", "Long", "word " * 2_000)
    (record,) = scan_rows(head(w))[0]
    shown = render(record)
    assert len(shown) <= MEMBER_TEXT_CHARS + len(" [...]") and shown.endswith(" word [...]")


@given(st.text())
def test_collapsing_is_idempotent_and_leaves_one_line(text: str) -> None:
    once = collapsed(text)
    assert collapsed(once) == once
    assert "\n" not in once and once == once.strip()
