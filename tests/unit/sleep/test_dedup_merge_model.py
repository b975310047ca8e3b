"""dedup-merge with a scripted model on real repositories: a paraphrase the cosine
cannot settle folds into the older file when the model groups it; a group pairing a
claim with its negation or a number flip is vetoed; keys the batch never offered change
nothing; everything the no-model night folds is still folded; components over the cap
are never asked; a malformed batch skips itself alone; a spent budget still leaves the
deterministic floor; a dry run asks nothing; two runs send the same bytes."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from tests.unit.sleep.fake_model import Answer, ScriptedModel, offered
from tests.unit.sleep.sleep_support import ok
from tests.unit.sleep.test_dedup_merge import (
    NEXT_NIGHT,
    SMALL,
    Repo,
    assert_folded,
    detected_tasks,
    planted,
    planted_vectors,
    repo,
    vectors,
)

from memhtml.contracts.services import ModelRequest
from memhtml.domain.thresholds import (
    DEDUP_CALLS,
    DEDUP_COMPONENT_CAP,
    DEDUP_COMPONENTS_PER_NIGHT,
    DEDUP_MEMBERS_PER_CALL,
)
from memhtml.head import HeadVersion, VectorCache
from memhtml.llm.schema import validate_schema
from memhtml.sleep.batch import batch_schema, pack_groups, plan_requests
from memhtml.sleep.budget import CallBudget
from memhtml.sleep.phase import PhaseResult
from memhtml.sleep.phases.dedup_candidates import candidates, propose
from memhtml.sleep.phases.dedup_merge import dedup_merge
from memhtml.sleep.phases.dedup_prompt import SCHEMA, SPEC, TOOL_NAME, Row

WORDS = ("amber", "birch", "cedar", "dune", "elm", "fjord", "grove", "heath")
KERNEL = ("batches", "calls", "failed_batches", "budget_skipped", "unknown_keys")


@dataclass
class Oracle:
    """A fake model that knows which paths are one memory: it maps each batch's keys
    back to paths (it knows the phase's batches, and tells them by their prompts) and
    answers, per component, the groups ``same`` says."""

    batches: Sequence[Sequence[Row]]
    same: Callable[[list[str]], list[list[str]]]
    asked: int = 0
    answers: list[Answer] = field(default_factory=list)

    def __call__(self, request: ModelRequest) -> Answer:
        by_prompt = {sent.prompt: batch
                     for sent, batch in zip(plan_requests(SPEC, self.batches), self.batches,
                                            strict=True)}
        batch = by_prompt[request.prompt]
        self.asked += 1
        keys = list(offered(request))
        assert len(keys) == len(batch)
        path_key = {row.record.path: key for key, row in zip(keys, batch, strict=True)}
        sets: dict[int, list[str]] = {}
        for row in batch:
            sets.setdefault(row.component, []).append(row.record.path)
        groups = [[path_key[p] for p in group]
                  for paths in sets.values() for group in self.same(paths) if len(group) > 1]
        answer: Answer = {"groups": [{"members": g} for g in groups]}
        self.answers.append(answer)
        return answer


def every_set(paths: list[str]) -> list[list[str]]:
    """A model that calls every component one memory."""
    return [paths]


def oracle(version: HeadVersion, cache: VectorCache | None,
           same: Callable[[list[str]], list[list[str]]] = every_set,
           **model: object) -> tuple[ScriptedModel, Oracle]:
    found = candidates(version, cache)
    plays = Oracle(pack_groups(found.rows, DEDUP_MEMBERS_PER_CALL), same)
    return ScriptedModel(respond=plays, **model), plays  # type: ignore[arg-type]


def run_with(r: Repo, model: ScriptedModel, cache: VectorCache | None = None, *,
             calls: CallBudget | None = None, dry_run: bool = False, **env: object
             ) -> PhaseResult:
    base = r.env(cache, **env)  # type: ignore[arg-type]
    return ok(dedup_merge(replace(base, model=model, calls=calls or CallBudget(),
                                  dry_run=dry_run)))


def archived(result: PhaseResult) -> set[str]:
    """The paths a result's commit moves away (the folded copies)."""
    return {c.path for commit in result.commits for c in commit.changes if c.data is None}


def pairs(r: Repo, n: int, cosine: float, start: int = 0
          ) -> tuple[list[tuple[str, str]], dict[str, tuple[str, float]]]:
    """``n`` paraphrase pairs, the newer at ``cosine`` to the older."""
    out = [(r.write(f"areas/notes/p{k:03d}.html", f"Service {k} restarts at midnight."),
            r.write(f"areas/notes/p{k:03d}-b.html", f"At midnight, service {k} restarts."))
           for k in range(start, start + n)]
    return out, {b: (a, cosine) for a, b in out}


# --------------------------------------------------------------------------- the frame


def test_the_schema_is_in_the_subset_and_the_cap_is_a_full_night() -> None:
    assert validate_schema(SCHEMA).unwrap() is SCHEMA
    assert DEDUP_CALLS == math.ceil(DEDUP_COMPONENTS_PER_NIGHT * DEDUP_COMPONENT_CAP
                                 / DEDUP_MEMBERS_PER_CALL) == 60


# --------------------------------------------------------------------------- folds


def test_a_paraphrase_in_the_band_folds_into_the_older_when_the_model_groups_it(
        tmp_path: Path) -> None:
    r = repo(tmp_path)
    older = r.write("areas/notes/queue.html", "The mail queue drains every hour.")
    newer = r.write("areas/notes/queue-b.html", "Hourly, the mail queue is drained.")
    cache = vectors(r.version(), {newer: (older, 0.88)})
    assert archived(r.run(cache)) == set()
    model, _ = oracle(r.version(), cache)
    result = run_with(r, model, cache)
    counts = dict(result.counts)
    assert (counts["components"], counts["model_groups"], counts["model_pairs"]) == (1, 1, 1)
    assert (counts["folded"], counts["mined"], counts["vetoed"]) == (1, 0, 0)
    assert {k: counts[k] for k in KERNEL} == {
        "batches": 1, "calls": 1, "failed_batches": 0, "budget_skipped": 0, "unknown_keys": 0}
    (request,) = model.requests
    assert (request.tool_name, request.schema) == (TOOL_NAME, batch_schema(SCHEMA, ("m1", "m2")))
    assert "areas/" not in request.prompt and "queue" not in request.prompt.split("\n")[0]
    (commit,) = result.commits
    assert "the model grouped 1 pair(s) in 1 group(s) over 1 component(s)" in commit.body
    assert_folded(r.version(r.land(result)), older, newer)


def test_a_group_pairing_a_claim_with_its_negation_or_a_number_flip_is_vetoed(
        tmp_path: Path) -> None:
    r = repo(tmp_path)
    neg = (r.write("areas/notes/cache.html", "The edge cache is enabled."),
           r.write("areas/notes/cache-b.html", "The edge cache is not enabled."))
    num = (r.write("areas/notes/timeout.html", "The gateway times out after 3.5 seconds."),
           r.write("areas/notes/timeout-b.html", "The gateway times out after 35 seconds."))
    cache = vectors(r.version(), {neg[1]: (neg[0], 0.88), num[1]: (num[0], 0.88)})
    model, _ = oracle(r.version(), cache)
    result = run_with(r, model, cache)
    counts = dict(result.counts)
    assert (counts["model_pairs"], counts["folded"], counts["vetoed"]) == (2, 0, 2)
    assert (counts["vetoed_negation"], counts["vetoed_numeric"]) == (1, 1)
    after = r.version(r.land(result))
    assert all(after.get(p) is not None for p in (*neg, *num))
    tasks = detected_tasks(after).values()
    assert len(tasks) == 2
    assert all("grouped as one memory by the language model" in t.claim for t in tasks)


def test_keys_never_offered_and_groups_across_components_change_nothing(
        tmp_path: Path) -> None:
    r = repo(tmp_path)
    a = r.write("areas/notes/queue.html", "The mail queue drains every hour.")
    b = r.write("areas/notes/queue-b.html", "Hourly, the mail queue is drained.")
    c = r.write("areas/notes/dns.html", "The resolver caches for an hour.")
    d = r.write("areas/notes/dns-b.html", "For an hour, the resolver caches answers.")
    cache = vectors(r.version(), {b: (a, 0.88), d: (c, 0.88)})
    answer: Answer = {"groups": [{"members": ["m1", "m99"]}, {"members": ["m2", a]},
                                 {"members": ["m1", "m3"]}, {"members": ["m2", "m4"]}]}
    model = ScriptedModel(respond=lambda _: answer, checked=False)
    result = run_with(r, model, cache)
    counts = dict(result.counts)
    assert (counts["components"], counts["calls"], counts["unknown_keys"]) == (2, 1, 2)
    assert (counts["model_groups"], counts["folded"], counts["vetoed"]) == (0, 0, 0)
    assert result.commits == () == r.run(cache).commits


def test_everything_the_no_model_night_folds_is_still_folded(tmp_path: Path) -> None:
    r, corpus = planted(tmp_path)
    version = r.version()
    cache = planted_vectors(version, corpus)
    manifest = corpus.manifest
    # One scan at the recall floor gives the deterministic proposals unchanged.
    assert candidates(version, cache).proposed == propose(version, cache)
    plain = r.run(cache, stamp=NEXT_NIGHT, embedder_name="scripted")
    truth = [{p.older, p.newer} for p in manifest.pairs
             if p.expect == "fold" or p.kind == "paraphrase"]
    flips = [{p.older, p.newer} for p in manifest.pairs if p.expect == "veto"]

    def same(paths: list[str]) -> list[list[str]]:
        # A careless model: it groups the flips too, so the veto has work to do.
        return [sorted(s & set(paths)) for s in (*truth, *flips) if len(s & set(paths)) > 1]

    model, _ = oracle(version, cache, same)
    result = run_with(r, model, cache, stamp=NEXT_NIGHT, embedder_name="scripted")
    counts, before = dict(result.counts), dict(plain.counts)
    assert archived(plain) <= archived(result)
    paraphrases = manifest.of_kind("paraphrase")
    assert archived(result) == archived(plain) | {p.newer for p in paraphrases}
    assert counts["folded"] == int(before["folded"] or 0) + SMALL.paraphrase
    assert counts["vetoed"] == before["vetoed"] == len(flips)
    for key in ("members", "with_vector", "hash_twins", "frame_twins", "mined"):
        assert counts[key] == before[key]
    assert counts["failed_batches"] == counts["unknown_keys"] == 0
    after = r.version(r.land(result))
    for pair in paraphrases:
        assert_folded(after, pair.older, pair.newer)


# --------------------------------------------------------------------------- what is asked


def test_components_over_the_cap_are_not_asked(tmp_path: Path) -> None:
    r = repo(tmp_path)
    hub = r.write("areas/notes/hub.html", "The build farm has many runners.")
    flood = [r.write(f"areas/notes/hub-{n}.html", f"Runner {n} of the build farm.")
             for n in range(DEDUP_COMPONENT_CAP)]
    small = r.write("areas/notes/small.html", "The wiki is read only on Sundays.")
    # Words, not numbers, tell the copies apart: a number would be a flip the veto sees.
    fits = [r.write(f"areas/notes/small-{n}.html", f"On Sundays the wiki is read only: {w}.")
            for n, w in enumerate(WORDS[:DEDUP_COMPONENT_CAP - 1])]
    cache = vectors(r.version(), {**dict.fromkeys(flood, (hub, 0.88)),
                                  **dict.fromkeys(fits, (small, 0.88))})
    model, plays = oracle(r.version(), cache)
    counts = dict(run_with(r, model, cache).counts)
    assert (counts["components"], counts["components_oversize"]) == (1, 1)
    assert counts["calls"] == model.calls == 1
    (request,) = model.requests
    assert len(offered(request)) == DEDUP_COMPONENT_CAP
    (batch,) = plays.batches
    assert {row.record.path for row in batch} == {small, *fits}
    assert counts["folded"] == DEDUP_COMPONENT_CAP - 1


def test_one_malformed_batch_of_several_leaves_the_others_applied(tmp_path: Path) -> None:
    r = repo(tmp_path)
    made, near = pairs(r, 45, 0.88)
    cache = vectors(r.version(), near)
    model, plays = oracle(r.version(), cache, malformed_calls=frozenset({2}))
    assert [len(b) for b in plays.batches] == [40, 40, 10]
    result = run_with(r, model, cache)
    counts = dict(result.counts)
    assert (counts["batches"], counts["calls"], counts["failed_batches"]) == (3, 3, 1)
    assert (counts["budget_skipped"], counts["folded"]) == (0, 25)
    assert any("batch 2 malformed" in w for w in result.warnings)
    skipped = {row.record.path for row in plays.batches[1]}
    assert archived(result) == {b for _, b in made if b not in skipped}


def test_a_spent_budget_counts_the_skips_and_the_floor_still_folds(tmp_path: Path) -> None:
    r = repo(tmp_path)
    twin = (r.write("areas/notes/port.html", "The admin port is 8443."),
            r.write("areas/notes/port-copy.html", "The admin port is 8443."))
    near = (r.write("areas/notes/retries.html", "Payment retries back off for a minute."),
            r.write("areas/notes/retries-b.html", "Payment retries back off for one minute."))
    _, band = pairs(r, 45, 0.88)
    cache = vectors(r.version(), {**band, near[1]: (near[0], 0.95)})
    model, _ = oracle(r.version(), cache)
    result = run_with(r, model, cache, calls=CallBudget(1))
    counts = dict(result.counts)
    assert (counts["calls"], counts["budget_skipped"], counts["failed_batches"]) == (1, 2, 0)
    assert model.calls == 1
    assert {twin[1], near[1]} <= archived(result)
    assert archived(r.run(cache)) == {twin[1], near[1]}


def test_a_dry_run_asks_nothing_and_counts_the_calls(tmp_path: Path) -> None:
    r = repo(tmp_path)
    twin = (r.write("areas/notes/port.html", "The admin port is 8443."),
            r.write("areas/notes/port-copy.html", "The admin port is 8443."))
    _, band = pairs(r, 45, 0.88)
    cache = vectors(r.version(), band)
    model = ScriptedModel()
    result = run_with(r, model, cache, dry_run=True)
    counts = dict(result.counts)
    assert model.calls == 0
    assert (counts["components"], counts["would_call"]) == (45, 3)
    assert archived(result) == {twin[1]}


def test_two_runs_send_the_same_bytes(tmp_path: Path) -> None:
    r = repo(tmp_path)
    _, band = pairs(r, 25, 0.88)
    cache = vectors(r.version(), band)
    first, _ = oracle(r.version(), cache)
    second, _ = oracle(r.version(), cache)
    one, two = run_with(r, first, cache), run_with(r, second, cache)
    assert first.sent == second.sent and len(first.sent) == 2
    assert {r.system for r in first.requests} == {first.requests[0].system}
    assert one.commits == two.commits


def test_a_model_group_never_folds_a_person_file_or_an_arc(tmp_path: Path) -> None:
    r = repo(tmp_path)
    people = (r.write("resources/people/ines-okafor.html", "Ines Okafor runs the pager."),
              r.write("resources/people/ines-okafor-b.html", "The pager is run by Ines."))
    arcs = (r.write("areas/notes/ship-arc.html", "How the team ships a release.",
                    memory_type="arc"),
            r.write("areas/notes/ship.html", "The team ships a release on Thursdays."))
    plain = (r.write("areas/notes/queue.html", "The mail queue drains every hour."),
             r.write("areas/notes/queue-b.html", "Hourly, the mail queue is drained."))
    cache = vectors(r.version(), {b: (a, 0.88) for a, b in (people, arcs, plain)})
    model, _ = oracle(r.version(), cache)
    result = run_with(r, model, cache)
    # The plain paraphrase folds; neither protected pair does, whatever the model said.
    assert archived(result) == {plain[1]}
    assert result.counts["model_refused_protected"] == 3
    refused = {(m.get("rule"), m.get("part")) for m in result.marks
               if m.kind == "model-refused"}
    assert refused == {("person-file", people[0]), ("person-file", people[1]),
                       ("arc", arcs[0])}
    assert all(m.get("phase") == "dedup-merge" for m in result.marks)
