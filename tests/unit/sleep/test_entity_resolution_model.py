"""entity-resolution's model half on a real repository, with a scripted model: a short
name and its full form merged at the second detection over a changed corpus (and not
over an unchanged one), onto the corpus's heaviest name whatever canonical the model
names; self-contradicting clusters dropped; low confidence and first detections left
to a person; unknown keys naming nobody; no model, the pre-pass alone."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
from returns.pipeline import is_successful
from tests.unit.sleep.fake_model import Answer, ScriptedModel, offered
from tests.unit.sleep.sleep_support import ok
from tests.unit.sleep.test_entity_resolution import (
    RUN_AT,
    Repo,
    detected,
    entities,
    finding,
    phase_env,
    repo,
)

from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.services import CounterKey, ModelRequest, VectorSpace
from memhtml.head import VectorCache, cache_from
from memhtml.llm import validate_schema
from memhtml.sleep.budget import CallBudget
from memhtml.sleep.phase import PhaseEnv, PhaseResult
from memhtml.sleep.phases.entity_resolution import (
    SCHEMA,
    TOOL_NAME,
    entity_resolution,
)

FULL = "areas/people/full-1.html"
SHORT = "areas/people/short.html"


def people(tmp_path: Path) -> Repo:
    """``Laith Al-Saadoon`` in two files, ``Laith`` in one (a ratio of 0.476: the
    pre-pass neither merges nor flags them), and an unrelated ``Mira``."""
    r = repo(tmp_path)
    r.write(FULL, "person:Laith Al-Saadoon")
    r.write("areas/people/full-2.html", "person:Laith Al-Saadoon")
    r.write(SHORT, "person:Laith")
    r.write("areas/people/mira.html", "person:Mira")
    return r


def keys_by_name(request: ModelRequest) -> dict[str, str]:
    return {json.loads(text)["name"]: key for key, text in offered(request).items()}


def clusters(*found: tuple[Sequence[str], str, float]) -> Callable[[ModelRequest], Answer]:
    """A responder naming clusters by name (members, canonical, confidence); a name the
    batch did not offer is answered as its literal spelling."""
    def respond(request: ModelRequest) -> Answer:
        keys = keys_by_name(request)
        return {"clusters": [
            {"members": [keys.get(n, n) for n in members],
             "canonical": keys.get(canonical, canonical), "confidence": confidence}
            for members, canonical, confidence in found]}
    return respond


LAITH = (("laith", "laith al-saadoon"), "laith", 0.9)
"""The model's cluster, naming the short, lighter name as canonical."""
LAITH_KEY = CounterKey("entity", 'person|["laith", "laith al-saadoon"]')


def night(r: Repo, model: ScriptedModel | None, state: InMemoryState, run_id: str,
          stamp: datetime = RUN_AT, **more: object) -> PhaseResult:
    env: PhaseEnv = replace(phase_env(r.git, r.main(), stamp), model=model, state=state,
                            run_id=run_id, **more)  # type: ignore[arg-type]
    return ok(entity_resolution(env))


def land(r: Repo, result: PhaseResult, stamp: datetime = RUN_AT) -> None:
    if result.commits:
        r.land(result, stamp)


def test_schema_is_in_the_supported_subset() -> None:
    assert is_successful(validate_schema(SCHEMA))


def test_first_detection_waits_as_a_task_and_merges_nothing(tmp_path: Path) -> None:
    r = people(tmp_path)
    state = InMemoryState()
    result = night(r, ScriptedModel(respond=clusters(LAITH)), state, "n1")
    counts = result.counts
    assert counts["clusters"] == 1
    assert counts["model_merges_waiting"] == 1
    assert counts["model_merges_applied"] == 0
    assert counts["review_candidates"] == 1
    assert counts["calls"] == 1 and counts["batches"] == 1
    assert result.marks == ()
    land(r, result)
    after = r.version()
    assert entities(after, SHORT) == ("person:laith",)
    assert finding("person", "laith", "laith al-saadoon") in detected(after)
    assert ok(state.detections(LAITH_KEY)) == 1


def test_second_night_over_an_unchanged_corpus_is_no_evidence(tmp_path: Path) -> None:
    r = people(tmp_path)
    state = InMemoryState()
    land(r, night(r, ScriptedModel(respond=clusters(LAITH)), state, "n1"))
    second = night(r, ScriptedModel(respond=clusters(LAITH)), state, "n2",
                   RUN_AT + timedelta(days=1))
    assert second.counts["model_merges_waiting"] == 1
    assert second.counts["model_merges_applied"] == 0
    assert second.marks == ()
    assert ok(state.detections(LAITH_KEY)) == 1
    # Its review task stands as the first night wrote it: nothing to commit.
    assert second.commits == ()


def test_second_night_over_a_changed_corpus_merges_onto_the_corpus_survivor(
        tmp_path: Path) -> None:
    r = people(tmp_path)
    state = InMemoryState()
    first_base = r.main()
    land(r, night(r, ScriptedModel(respond=clusters(LAITH)), state, "n1"))
    # A write naming neither name is no new reading of them.
    r.write("areas/people/mira-2.html", "person:Mira")
    later = RUN_AT + timedelta(days=1)
    unmoved = night(r, ScriptedModel(respond=clusters(LAITH)), state, "n2", later)
    assert unmoved.counts["model_merges_waiting"] == 1
    assert unmoved.counts["model_merges_unchanged"] == 1
    assert ok(state.detections(LAITH_KEY)) == 1
    # A write naming one of them is.
    r.write("areas/people/laith-notes.html", "person:Laith")
    by = r.main()
    second = night(r, ScriptedModel(respond=clusters(LAITH)), state, "n3", later)
    assert second.counts["model_merges_applied"] == 1
    assert second.counts["model_merges_waiting"] == 0
    assert ok(state.detections(LAITH_KEY)) == 2
    (mark,) = second.marks
    assert mark.kind == "entity-promoted"
    assert mark.get("key") == LAITH_KEY.key and mark.get("detections") == 2
    assert (mark.get("since"), mark.get("by")) == (first_base, by)
    assert isinstance(mark.get("prompt"), str)
    land(r, second, later)
    after = r.version()
    # The model named "laith"; the corpus's heavier name survives.
    assert entities(after, SHORT) == ("person:laith al-saadoon",)
    assert entities(after, FULL) == ("person:laith al-saadoon",)
    assert finding("person", "laith", "laith al-saadoon") not in detected(after)


def test_survivor_is_the_heaviest_whichever_canonical_the_model_names(tmp_path: Path) -> None:
    for canonical in ("laith", "laith al-saadoon"):
        r = people(tmp_path / canonical)
        state = InMemoryState()
        ask = clusters((("laith", "laith al-saadoon"), canonical, 0.95))
        land(r, night(r, ScriptedModel(respond=ask), state, "n1"))
        r.write("areas/people/other.html", "person:Laith Al-Saadoon")
        land(r, night(r, ScriptedModel(respond=ask), state, "n2"))
        assert entities(r.version(), SHORT) == ("person:laith al-saadoon",), canonical


def test_a_canonical_outside_its_cluster_skips_the_batch(tmp_path: Path) -> None:
    r = people(tmp_path)
    state = InMemoryState()
    result = night(r, ScriptedModel(respond=clusters((("laith", "laith al-saadoon"), "mira",
                                                      0.99))), state, "n1")
    assert result.counts["failed_batches"] == 1
    assert result.counts["clusters"] == 0
    assert result.counts["review_candidates"] == 0
    assert result.counts["unknown_keys"] == 0
    assert ok(state.detections(LAITH_KEY)) == 0
    land(r, result)
    assert detected(r.version()) == {}


def test_below_the_floor_is_a_task_and_no_detection(tmp_path: Path) -> None:
    r = people(tmp_path)
    state = InMemoryState()
    result = night(r, ScriptedModel(respond=clusters((("laith", "laith al-saadoon"),
                                                      "laith", 0.69))), state, "n1")
    assert result.counts["review_candidates"] == 1
    assert result.counts["model_merges_waiting"] == 0
    assert ok(state.detections(LAITH_KEY)) == 0
    land(r, result)
    assert finding("person", "laith", "laith al-saadoon") in detected(r.version())


def test_at_the_floor_counts_a_detection(tmp_path: Path) -> None:
    r = people(tmp_path)
    state = InMemoryState()
    result = night(r, ScriptedModel(respond=clusters((("laith", "laith al-saadoon"),
                                                      "laith", 0.7))), state, "n1")
    assert result.counts["model_merges_waiting"] == 1
    assert ok(state.detections(LAITH_KEY)) == 1


def test_an_out_of_range_confidence_skips_the_batch(tmp_path: Path) -> None:
    r = people(tmp_path)
    result = night(r, ScriptedModel(respond=clusters((("laith", "laith al-saadoon"),
                                                      "laith", 1.5))), InMemoryState(), "n1")
    assert result.counts["failed_batches"] == 1
    assert result.counts["clusters"] == 0


def test_an_unknown_key_changes_nothing(tmp_path: Path) -> None:
    plain = people(tmp_path / "plain")
    baseline = night(plain, None, InMemoryState(), "n1")
    r = people(tmp_path / "poisoned")
    state = InMemoryState()
    for name in ("m99", "areas/people/short.html", "Laith"):
        # One member spelled as something the batch never offered: one name is left,
        # which is no cluster.
        ask = clusters((("laith al-saadoon", name), "laith al-saadoon", 0.99))
        result = night(r, ScriptedModel(respond=ask, checked=False), state, "n1")
        assert result.counts["unknown_keys"] == 1
        assert result.counts["clusters"] == 0
        assert [c.changes for c in result.commits] == [c.changes for c in baseline.commits]
    poisoned = ScriptedModel(respond=clusters(LAITH), unknown_key_calls=frozenset({1}))
    result = night(r, poisoned, state, "n1")
    assert result.counts["unknown_keys"] == 1
    assert result.counts["clusters"] == 0
    assert ok(state.detections(LAITH_KEY)) == 0


def test_no_model_is_the_pre_pass_alone(tmp_path: Path) -> None:
    r = people(tmp_path)
    result = night(r, None, InMemoryState(), "n1")
    assert "clusters" not in result.counts and "calls" not in result.counts
    quiet = night(r, ScriptedModel(respond=lambda _: {"clusters": []}), InMemoryState(), "n1")
    assert [c.changes for c in quiet.commits] == [c.changes for c in result.commits]
    assert {k: v for k, v in quiet.counts.items() if k in result.counts} == result.counts


def test_dry_run_asks_nothing(tmp_path: Path) -> None:
    r = people(tmp_path)
    r.write("areas/svc/a.html", "service:api")
    r.write("areas/svc/b.html", "service:web")
    r.write("areas/svc/c.html", "team:solo")
    model = ScriptedModel(respond=clusters(LAITH))
    state = InMemoryState()
    result = night(r, model, state, "n1", dry_run=True)
    assert model.calls == 0
    assert result.counts["would_call"] == 2  # person and service; one team name is no cluster
    assert ok(state.detections(LAITH_KEY)) == 0


def test_one_call_per_type_in_name_order_and_the_same_bytes_twice(tmp_path: Path) -> None:
    r = people(tmp_path)
    r.write("areas/svc/a.html", "service:web")
    r.write("areas/svc/b.html", "service:api")
    first = ScriptedModel(respond=lambda _: {"clusters": []})
    second = ScriptedModel(respond=lambda _: {"clusters": []})
    night(r, first, InMemoryState(), "n1")
    night(r, second, InMemoryState(), "n2")
    assert first.sent == second.sent
    assert {q.tool_name for q in first.requests} == {TOOL_NAME}
    assert [list(keys_by_name(q)) for q in first.requests] == [
        ["laith", "laith al-saadoon", "mira"], ["api", "web"]]
    shown = json.loads(offered(first.requests[0])["m2"])
    assert shown["memories"] == 2 and shown["nearest"] == [] and shown["aliases"] == []


def test_a_spent_budget_is_counted_not_failed(tmp_path: Path) -> None:
    r = people(tmp_path)
    r.write("areas/svc/a.html", "service:web")
    r.write("areas/svc/b.html", "service:api")
    model = ScriptedModel(respond=clusters(LAITH))
    result = night(r, model, InMemoryState(), "n1", calls=CallBudget(1))
    assert model.calls == 1
    assert result.counts["budget_skipped"] == 1
    assert result.counts["model_merges_waiting"] == 1


def test_declared_aliases_are_shown_for_a_person(tmp_path: Path) -> None:
    r = people(tmp_path)
    r.write("resources/people/mira.html", "person:Mira", aliases=("Mira K",))
    model = ScriptedModel(respond=lambda _: {"clusters": []})
    night(r, model, InMemoryState(), "n1")
    rows = {json.loads(t)["name"]: json.loads(t) for t in offered(model.requests[0]).values()}
    assert rows["mira"]["aliases"] == ["mira k"]


def aligned(r: Repo) -> VectorCache:
    """Every Laith file at one vector, every other file at an orthogonal one."""
    out: dict[str, np.ndarray] = {}
    for record in r.version().records():
        laith = any(e.lower().startswith("person:laith") for e in record.entities)
        out[record.content_hash] = np.array([1.0, 0.0] if laith else [0.0, 1.0])
    return cache_from(VectorSpace("test-two", 2), out)


def test_centroids_are_evidence_and_decide_nothing(tmp_path: Path) -> None:
    r = people(tmp_path)
    model = ScriptedModel(respond=lambda _: {"clusters": []})
    state = InMemoryState()
    result = night(r, model, state, "n1", vectors=aligned(r))
    rows = {json.loads(t)["name"]: json.loads(t) for t in offered(model.requests[0]).values()}
    assert rows["laith"]["nearest"] == ["laith al-saadoon (1.00)", "mira (0.00)"]
    # Identical centroids, and the model found no cluster: nothing merges, no task.
    assert result.counts["merged"] == 0 and result.counts["review_candidates"] == 0
    assert ok(state.detections(LAITH_KEY)) == 0
