"""Independent readings (``sleep.readings``) on the doubles: which commits count as a
sleep run's own, what a commit changed (a merge only what it decided itself), and the
law the two promoting phases obey over generated histories: a second detection
promotes exactly when a commit that is not a run's own changed the finding's
neighbourhood between the two readings."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from typing import Literal

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.unit.sleep.fake_model import ScriptedModel, offered
from tests.unit.sleep.sleep_support import (
    AUTHOR,
    RUN_AT,
    World,
    blank_world,
    err,
    ok,
)

from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import Link
from memhtml.contracts.services import CommitInfo, CounterKey, ModelRequest, PathChange
from memhtml.format import set_meta
from memhtml.head import HeadVersion
from memhtml.sleep.budget import CallBudget
from memhtml.sleep.ledger import PendingMark
from memhtml.sleep.phase import MinedEdge, PhaseEnv, PhaseResult, TaskBudget
from memhtml.sleep.phases.edge_typing import edge_typing, pair_neighbourhood
from memhtml.sleep.phases.entity_resolution import entity_resolution
from memhtml.sleep.readings import (
    Readings,
    changes_since,
    is_run_commit,
    reading_base,
    reading_key,
)
from memhtml.store import WriteInput, write

A = "areas/limits/upload-a.html"
B = "areas/limits/upload-b.html"
NEIGHBOUR = "areas/notes/links-a.html"
"""Links ``relates_to`` A: one authored link away from the pair."""
HOLDER = "areas/notes/gateway.html"
"""Names the entity B names: the pair's neighbourhood by a shared subject."""
FAR = "areas/notes/canteen.html"
"""Names nothing the pair names and links nowhere near it."""
ENTITY = "service:upload-gateway"
CLAIM_A = "The upload limit is ten megabytes."
CLAIM_B = "Uploads of fifty megabytes go through."
KEY = CounterKey("edge", f"{A}|{B}")

Target = Literal["a", "b", "neighbour", "holder", "far"]
TARGETS: dict[Target, str] = {"a": A, "b": B, "neighbour": NEIGHBOUR, "holder": HOLDER,
                              "far": FAR}
NEAR: frozenset[Target] = frozenset({"a", "b", "neighbour", "holder"})
Kind = Literal["write", "run", "sync-of-run", "sleep-merge", "sync-of-write"]
"""How a step reaches main: a person's plain commit; a run's commit (its trailers);
a merge commit with no trailers bringing in a run's commit (a sync of another clone's
merged night); a run replayed as a ``sleep-merge`` commit; a merge commit with no
trailers bringing in a person's commit (a sync of a colleague's write)."""
INDEPENDENT: frozenset[Kind] = frozenset({"write", "sync-of-write"})
RUN_TRAILERS = "Memhtml-Op: sleep\nMemhtml-Run: 2026-11-29\nMemhtml-Phase: confidence-decay\n"


# --------------------------------------------------------------------------- the world


def store() -> World:
    """The pair, a note linking A, a note sharing B's entity, a far note."""
    w = blank_world()
    for path, claim, more in (
        (A, CLAIM_A, {}),
        (B, CLAIM_B, {"entities": (ENTITY,)}),
        (NEIGHBOUR, "The gateway enforces the upload limit.",
         {"links": (Link("relates_to", to_document_path(A)),)}),
        (HOLDER, "The gateway runs in two regions.", {"entities": (ENTITY,)}),
        (FAR, "The canteen closes at three.", {}),
    ):
        w.clock.advance(60)
        ok(write(w.store, WriteInput(title=path.rsplit("/", 1)[-1], claim=claim, path=path,
                                     **more)))
    w.clock.advance((RUN_AT - w.clock.now()).total_seconds())
    return w


def touched(w: World, path: str, n: int) -> PathChange:
    """``path`` with its ``memhtml-updated`` moved: a change that keeps its claim."""
    entries = ok(w.git.entries_at(w.main(), [path]))
    html = ok(w.git.read_blobs([entries[0].blob_id]))[entries[0].blob_id].decode()
    stamp = f"2026-11-{10 + n % 15:02d}T0{n % 10}:00:00Z"
    return PathChange(path, set_meta(html, "memhtml-updated", stamp).encode())


def step(w: World, kind: Kind, path: str, n: int, beside: str = FAR) -> None:
    """One commit changing ``path`` (or a side commit and its merge) on main, as
    ``kind`` says; a merge's main side first moves with a write of ``beside``."""
    change = touched(w, path, n)
    at = w.clock.now() + timedelta(minutes=n + 1)
    tip = w.main()
    if kind in ("write", "run"):
        message = f"step {n}\n" if kind == "write" else f"step {n}\n\n{RUN_TRAILERS}"
        ok(w.git.commit("refs/heads/main", tip, [change], message, AUTHOR, at))
        return
    side = f"side-{n}"
    ok(w.git.create_branch(side, tip))
    side_message = f"side {n}\n" if kind == "sync-of-write" else f"side {n}\n\n{RUN_TRAILERS}"
    other = ok(w.git.commit(f"refs/heads/{side}", tip, [change], side_message, AUTHOR, at))
    # main moves on meanwhile (a write beside), so the merge is a true merge
    moved = ok(w.git.commit("refs/heads/main", tip, [touched(w, beside, n + 100)],
                            f"beside {n}\n", AUTHOR, at))
    merge_message = (f"merge {n}\n\nMemhtml-Op: sleep-merge\nMemhtml-Run: 2026-11-29\n"
                     if kind == "sleep-merge" else f"sync {n}\n\nMemhtml-Op: sync\n")
    ok(w.git.commit_merge("refs/heads/main", moved, other, [change], merge_message, AUTHOR,
                          at))


# --------------------------------------------------------------------------- edge-typing


def responder() -> ScriptedModel:
    def respond(request: ModelRequest) -> dict[str, object]:
        return {"verdicts": [{"key": key, "rel": "contradicts", "subject": "a",
                              "confidence": 0.9} for key in offered(request)]}
    return ScriptedModel(respond=respond)


def edge_env(w: World, state: InMemoryState, days: int) -> PhaseEnv:
    version: HeadVersion = ok(w.store.head())
    stamp = RUN_AT.replace(microsecond=0) + timedelta(days=days)
    return PhaseEnv(phase="edge-typing", run_id=stamp.date().isoformat(), stamp=stamp,
                    base=w.main(), base_version=version, version=version, git=w.git,
                    state=state, budget=TaskBudget(), dry_run=False, model=responder(),
                    mined=(MinedEdge(A, B, 0.9),), calls=CallBudget())


def typed(w: World, state: InMemoryState, days: int) -> PhaseResult:
    return ok(edge_typing(edge_env(w, state, days)))


Steps = Sequence[tuple[Kind, Target]]
STEPS = st.lists(st.tuples(st.sampled_from(["write", "run", "sync-of-run", "sleep-merge",
                                            "sync-of-write"]),
                           st.sampled_from(list(TARGETS))), max_size=5)


@settings(max_examples=40)
@given(steps=STEPS)
def test_a_contradiction_promotes_iff_a_write_not_a_runs_reached_its_neighbourhood(
        steps: Steps) -> None:
    w = store()
    state = InMemoryState()
    first = typed(w, state, 0)
    assert first.counts["contradicts_detected"] == 1
    assert ok(state.detections(KEY)) == 1
    for n, (kind, target) in enumerate(steps):
        step(w, kind, TARGETS[target], n)
    second = typed(w, state, 1)
    expected = any(kind in INDEPENDENT and target in NEAR for kind, target in steps)
    assert second.counts["contradicts_promoted"] == int(expected), steps
    assert ok(state.detections(KEY)) == 1 + int(expected)
    assert second.counts["readings_unchanged"] == int(bool(steps) and not expected)
    # A run over the same base again (a resume) answers as the first did: the counter
    # does not move, and a promotion is made again with the same record.
    again = typed(w, state, 1)
    assert ok(state.detections(KEY)) == 1 + int(expected)
    assert again.marks == second.marks


# --------------------------------------------------------------------------- entities


PERSON_FILES = ("areas/people/ops-rota.html", "areas/people/ledger.html")
OTHER_FILE = "areas/people/mira.html"
LAITH = CounterKey("entity", 'person|["laith", "laith al-saadoon"]')


def people() -> World:
    w = blank_world()
    for path, name in ((PERSON_FILES[0], "person:Laith Al-Saadoon"),
                       (PERSON_FILES[1], "person:Laith"), (OTHER_FILE, "person:Mira")):
        w.clock.advance(60)
        ok(write(w.store, WriteInput(title=path.rsplit("/", 1)[-1], claim=f"Notes on {name}.",
                                     path=path, entities=(name,))))
    w.clock.advance((RUN_AT - w.clock.now()).total_seconds())
    return w


def clusters(request: ModelRequest) -> dict[str, object]:
    keys = {json.loads(text)["name"]: key for key, text in offered(request).items()}
    if "laith" not in keys or "laith al-saadoon" not in keys:
        return {"clusters": []}
    return {"clusters": [{"members": [keys["laith"], keys["laith al-saadoon"]],
                          "canonical": keys["laith"], "confidence": 0.9}]}


def resolve(w: World, state: InMemoryState, days: int) -> PhaseResult:
    version: HeadVersion = ok(w.store.head())
    stamp = RUN_AT.replace(microsecond=0) + timedelta(days=days)
    env = PhaseEnv(phase="entity-resolution", run_id=stamp.date().isoformat(), stamp=stamp,
                   base=w.main(), base_version=version, version=version, git=w.git,
                   state=state, budget=TaskBudget(), dry_run=False,
                   model=ScriptedModel(respond=clusters), calls=CallBudget())
    return ok(entity_resolution(env))


PersonTarget = Literal["full", "short", "other"]
PERSON_TARGETS: dict[PersonTarget, str] = {"full": PERSON_FILES[0], "short": PERSON_FILES[1],
                                           "other": OTHER_FILE}


@settings(max_examples=25)
@given(steps=st.lists(st.tuples(st.sampled_from(["write", "run", "sync-of-run", "sleep-merge",
                                                 "sync-of-write"]),
                                st.sampled_from(list(PERSON_TARGETS))), max_size=4))
def test_an_entity_merge_promotes_iff_a_write_not_a_runs_reached_a_claimant(
        steps: Sequence[tuple[Kind, PersonTarget]]) -> None:
    w = people()
    state = InMemoryState()
    first = resolve(w, state, 0)
    assert first.counts["model_merges_waiting"] == 1
    for n, (kind, target) in enumerate(steps):
        step(w, kind, PERSON_TARGETS[target], n, beside=OTHER_FILE)
    second = resolve(w, state, 1)
    expected = any(kind in INDEPENDENT and target != "other" for kind, target in steps)
    assert second.counts["model_merges_applied"] == int(expected), steps
    assert ok(state.detections(LAITH)) == 1 + int(expected)


# --------------------------------------------------------------------------- the parts


def info(trailers: tuple[tuple[str, str], ...]) -> CommitInfo:
    return CommitInfo("0" * 40, (), "m", AUTHOR, RUN_AT, trailers)


def test_a_runs_commit_is_told_by_its_trailers_alone() -> None:
    assert is_run_commit(info((("Memhtml-Run", "2026-11-29"),)))
    assert is_run_commit(info((("memhtml-op", "sleep-merge"),)))
    assert is_run_commit(info((("Memhtml-Op", "sleep"),)))
    for door in ("write", "archive", "restore", "task-status", "sync"):
        assert not is_run_commit(info((("Memhtml-Op", door),))), door
    assert not is_run_commit(info(()))


def test_a_reading_key_names_its_base() -> None:
    assert reading_base(reading_key("abc")) == "abc"
    assert reading_base("prompt:abc") is None
    assert reading_base("base:") is None


def test_a_merge_changed_only_what_it_decided() -> None:
    w = store()
    since = w.main()
    step(w, "sync-of-run", A, 0)
    found = ok(changes_since(w.git, since, w.main()))
    # The run's side commit is a run's; main's own commit beside it is a write of FAR;
    # the merge decided nothing of its own (A came from the side, FAR from main).
    assert found.run_commits == 1
    assert [change.paths for change in found.independent] == [frozenset({FAR}), frozenset()]


def test_an_earlier_reading_that_names_no_base_counts_nothing_and_says_why() -> None:
    w = store()
    state = InMemoryState()
    ok(state.bump(KEY, "prompt:0123", 2, RUN_AT))
    step(w, "write", A, 0)
    read = ok(Readings(w.git, state, w.main(), RUN_AT).read(KEY, {A, B}, 2))
    assert not read.detection.counted and read.note is not None
    assert "names no base commit" in read.note
    assert ok(state.detections(KEY)) == 1


def test_an_earlier_base_this_repository_lacks_counts_nothing_and_says_why() -> None:
    w = store()
    state = InMemoryState()
    ok(state.bump(KEY, reading_key("f" * 40), 2, RUN_AT))
    read = ok(Readings(w.git, state, w.main(), RUN_AT).read(KEY, {A, B}, 2))
    assert not read.detection.counted and read.note is not None
    assert "cannot be read" in read.note
    assert ok(state.detections(KEY)) == 1


def test_the_neighbourhood_is_the_pair_its_links_and_its_subjects_holders() -> None:
    w = store()
    version: HeadVersion = ok(w.store.head())
    assert pair_neighbourhood(version, A, B) == {A, B, NEIGHBOUR, HOLDER}


def test_the_promotion_mark_names_the_reading_before_and_the_write_between() -> None:
    w = store()
    state = InMemoryState()
    first_base = w.main()
    typed(w, state, 0)
    step(w, "run", A, 0)
    step(w, "write", HOLDER, 1)
    by = w.main()
    step(w, "write", FAR, 2)
    second = typed(w, state, 1)
    assert second.marks == (PendingMark.of("edge-promoted", key=KEY.key, detections=2,
                                           since=first_base, by=by),)


def test_a_state_plane_that_fails_is_a_warning_not_a_phase_failure() -> None:
    from memhtml.contracts.errors import StateUnusable

    w = store()
    broken = InMemoryState(failing=StateUnusable("state.db", "not a database"))
    assert isinstance(err(broken.readings(KEY)), StateUnusable)
    result = typed(w, broken, 0)
    assert result.counts["state_failed"] == 1
