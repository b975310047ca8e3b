"""The head gate's parts: probe queries from the base, the seeded sample, what stands for
a moved or folded target, scoring and the one-line account."""

from __future__ import annotations

import dataclasses
import hashlib

from tests.property.head_support import archived, memory, memory_with, record_at

from memhtml.format import set_meta
from memhtml.head import (
    HEAD_GATE_K,
    HEAD_GATE_PROBES,
    HEAD_GATE_SEED,
    HEAD_GATE_TOLERANCE,
    HeadGateFailed,
    HeadGateInversion,
    HeadGateOptions,
    HeadGateProbe,
    HeadVersion,
    describe_head_gate_failure,
    gate_heads,
    probe_queries_for,
    probe_query_for,
    probes_for,
    score_probes,
    version_from_records,
)


def test_the_defaults() -> None:
    assert (HEAD_GATE_PROBES, HEAD_GATE_K, HEAD_GATE_TOLERANCE, HEAD_GATE_SEED) == (
        200, 10, 0.02, 1)
    assert HeadGateOptions() == HeadGateOptions(200, 10, 0.02, 1)


def test_probe_query_is_the_title_else_the_first_sentence_else_the_claim() -> None:
    record = record_at("a.html", memory("Cache eviction", "First sentence. Second one."))
    assert probe_query_for(record) == "Cache eviction"
    untitled = dataclasses.replace(record, title="  ")
    assert probe_query_for(untitled) == "First sentence."
    assert probe_query_for(dataclasses.replace(record, title="", claim="Is it? Yes.")) == "Is it?"
    assert probe_query_for(dataclasses.replace(record, title="", claim="no stop")) == "no stop"
    assert probe_query_for(dataclasses.replace(record, title="", claim="v2.1 ships")) == (
        "v2.1 ships")


def _version(names: list[str], sha: str = "s") -> HeadVersion:
    return version_from_records(
        [record_at(f"areas/{n}.html", memory(f"Title {n}", f"Claim about {n}.")) for n in names],
        sha)


def test_probes_are_a_seeded_sample_of_the_base_records() -> None:
    names = [f"m{i}" for i in range(12)]
    base = _version(names + ["only-base"])
    landed = version_from_records(
        [r for r in base.records() if r.path not in {"areas/m0.html", "areas/only-base.html"}]
        + [record_at("archive/2026/areas/m0.html",
                     archived(memory("Title m0", "Claim about m0.")))]
        + [record_at("areas/only-landed.html", memory("New", "A new claim."))],
        "l")
    common = [f"areas/{n}.html" for n in names[1:]]

    def key(seed: int, path: str) -> tuple[str, str]:
        return hashlib.sha1(f"{seed}:{path}".encode()).hexdigest()[:8], path

    for seed in (1, 7):
        probes = probes_for(base, landed, 5, seed)
        targets = list(dict.fromkeys(p.path for p in probes))
        assert targets == sorted(common, key=lambda p: key(seed, p))[:5]
        # Each target by its title, then by its claim, as the base holds them.
        assert [(p.kind, p.query) for p in probes[:2]] == [
            ("title", f"Title {targets[0][6:-5]}"), ("claim", f"Claim about {targets[0][6:-5]}.")]
    # Archived with nothing standing for it (m0), or gone (only-base): not probed;
    # added (only-landed): no base rank to compare.
    assert len(probes_for(base, landed, 100, 1)) == 2 * len(common)
    assert probes_for(base, landed, 0, 1) == []
    assert probes_for(base, landed, 5, 1) != probes_for(base, landed, 5, 2)


def test_probe_queries_come_from_the_base_record() -> None:
    base = _version(["a"])
    landed = version_from_records(
        [record_at("areas/a.html", memory("Renamed title", "Claim about a."))], "l")
    # Changed by the landing: probed whatever the sample size, by what the base said.
    assert probes_for(base, landed, 0, 1) == [
        HeadGateProbe("areas/a.html", "Title a", "title"),
        HeadGateProbe("areas/a.html", "Claim about a.", "claim")]


def test_a_claim_that_repeats_the_title_is_one_probe() -> None:
    record = record_at("a.html", memory("Deploy window", "Deploy  window"))
    assert probe_queries_for(record) == (("title", "Deploy window"),)
    untitled = dataclasses.replace(record, title="", claim="First. Second.")
    assert probe_queries_for(untitled) == (("claim", "First. Second."),)


def test_a_moved_or_folded_target_is_found_as_what_stands_for_it() -> None:
    window = memory("Deploy window", "Deploys stop at sixteen hundred.")
    cache = memory("Cache eviction", "The edge cache drops stale entries.")
    queue = memory("Queue backpressure", "Workers pause when memory runs high.")
    base = version_from_records([record_at("areas/inbox/window.html", window),
                                 record_at("areas/cache.html", cache),
                                 record_at("areas/queue.html", queue)], "s")
    moved = record_at("areas/ops/window.html", window)
    folded = record_at("archive/2026/areas/cache.html", set_meta(
        archived(cache), "memhtml-superseded-by", "/areas/queue.html"))
    keeper = record_at("areas/queue.html", memory(
        "Queue backpressure", "Workers pause when memory runs high.",
        "The edge cache drops stale entries, so cache eviction frees memory."))
    report = gate_heads(base, version_from_records([moved, folded, keeper], "l"))
    assert report.passed and report.unfound == () and report.followed == 2, report
    found = {(r.path, r.found_as) for r in report.results}
    assert found == {("areas/inbox/window.html", "areas/ops/window.html"),
                     ("areas/cache.html", "areas/queue.html"), ("areas/queue.html", None)}
    # A keeper that does not say what it absorbed is no home for its probes.
    stranger = record_at("areas/queue.html", queue)
    lost = gate_heads(base, version_from_records([moved, folded, stranger], "l"))
    assert not lost.passed and lost.unfound == ("areas/cache.html",)
    assert "1 memory(ies) the base found are found no more" in describe_head_gate_failure(lost)


def test_archived_into_nothing_is_forgotten_not_probed() -> None:
    base = _version(["a", "b"])
    gone = record_at("archive/2026/areas/a.html", archived(memory("Title a", "Claim about a.")))
    report = gate_heads(base, version_from_records([gone, *list(base.records())[1:]], "l"))
    assert report.passed and report.forgotten == 1
    assert {r.path for r in report.results} == {"areas/b.html"}


def test_score_probes_ranks_and_mrr() -> None:
    version = _version(["a", "b", "c"])
    probes = [HeadGateProbe("areas/a.html", "Title a"),
              HeadGateProbe("areas/b.html", "claim"),  # every record ties; b sorts second
              HeadGateProbe("areas/c.html", "nothing matches")]
    scored = score_probes(version, probes, 10)
    assert scored.ranks == (1, 2, None)
    assert scored.mrr == round((1 + 0.5 + 0) / 3, 4)
    assert scored.inversions == (
        HeadGateInversion("fell-out", "areas/c.html", "nothing matches"),)
    assert score_probes(version, [], 10).mrr == 0.0
    # With k of 1, the second place is out.
    assert score_probes(version, probes[1:2], 1).ranks == (None,)


def test_superseded_outranks_when_above_or_in_while_the_target_is_out() -> None:
    version = version_from_records([
        record_at("areas/new.html", memory_with(
            "Retry budget", "Retries stop after three attempts.",
            links=(("supersedes", "/areas/old.html"),))),
        record_at("areas/old.html", memory("Retry budget retry budget",
                                           "Retry budget retry budget.")),
    ], "s")
    probe = HeadGateProbe("areas/new.html", "retry budget")
    scored = score_probes(version, [probe], 10)
    assert scored.ranks == (2,)
    assert scored.inversions == (HeadGateInversion(
        "superseded-outranks", "areas/new.html", "retry budget", "areas/old.html", 1, 2),)
    out = score_probes(version, [probe], 1)
    assert [i.kind for i in out.inversions] == ["fell-out", "superseded-outranks"]
    assert out.inversions[1].rank is None


def test_gate_of_empty_versions_passes_with_no_probes() -> None:
    empty = version_from_records([], "s")
    report = gate_heads(empty, empty)
    assert (report.probes, report.mrr, report.mrr_before, report.floor, report.passed) == (
        0, 0.0, 0.0, 0.0, True)
    assert describe_head_gate_failure(report) == "head gate: 0 probes; passed"


def test_floor_is_clamped_at_zero_and_rounded() -> None:
    version = _version(["a", "b"])
    report = gate_heads(version, version, HeadGateOptions(tolerance=5.0))
    assert report.floor == 0.0
    report = gate_heads(version, version, HeadGateOptions(tolerance=0.00001))
    assert report.floor == round(report.mrr_before - 0.00001, 4)


def test_added_and_removed_counts() -> None:
    base = _version(["a", "b", "c"])
    landed = _version(["b", "c", "d", "e"], "l")
    report = gate_heads(base, landed)
    assert (report.added, report.removed, report.probes) == (2, 1, 4)
    assert (report.base, report.landed, report.mode) == ("s", "l", "head")


def test_describe_names_five_inversions_and_counts_the_rest() -> None:
    names = [f"m{i}" for i in range(8)]
    base = _version(names)
    # A sharper decoy per title pushes every target to second place, out of a top 1.
    landed = version_from_records(
        list(base.records())
        + [record_at(f"areas/decoy-{n}.html", memory(
            f"Title {n}", f"Title {n} title {n}, claim about {n} claim about {n}."))
           for n in names], "l")
    report = gate_heads(base, landed, HeadGateOptions(k=1))
    assert not report.passed
    line = describe_head_gate_failure(report)
    assert line.startswith("head gate: 16 probes; MRR 0.0000 below floor 0.9800 (base 1.0000)")
    assert "inversions 0 -> 16: fell-out " in line
    assert line.count("fell-out") == 5
    assert "and 11 more; 8 memory(ies) the base found are found no more" in line
    assert line.endswith(" and 3 more")
    assert HeadGateFailed(report).reason == line


def _task(title: str, claim: str) -> str:
    return set_meta(set_meta(memory(title, claim), "memhtml-type", "task"),
                    "memhtml-task-status", "todo")


def test_tasks_are_neither_probed_nor_ranked() -> None:
    """Review tasks quoting a memory outrank it in an ordinary search; in the gate
    they take no place: the memory keeps its rank, nothing is lost, no task is probed."""
    from memhtml.head import SearchHeadInput, search_head

    notes = [record_at(f"areas/m{i}.html", memory(f"Topic {i}", f"Claim number {i}."))
             for i in range(5)]
    target = record_at("areas/backup.html",
                       memory("Nightly backup", "The nightly backup runs at two."))
    standing = record_at("areas/tasks/open.html", _task("Open work", "Something to do."))
    base = version_from_records([*notes, target, standing], "b")
    reviews = [record_at(f"areas/tasks/review-{i}.html",
                         _task(f"Review nightly backup {i}",
                               "Nightly backup: the nightly backup runs at two, or "
                               f"the nightly backup runs at {i}? Nightly backup."))
               for i in range(HEAD_GATE_K + 2)]
    tip = version_from_records([*notes, target, standing, *reviews], "t")
    ranked = [h.path for h in search_head(tip, SearchHeadInput("Nightly backup",
                                                               limit=HEAD_GATE_K))]
    assert target.path not in ranked  # the tasks took every place in plain search
    report = gate_heads(base, tip)
    assert report.passed and report.unfound == ()
    assert all("tasks/" not in r.path for r in report.results)
    assert report.probes == 2 * (len(notes) + 1)
    assert [r.rank_after for r in report.results] == [r.rank_before for r in report.results]
    assert report.mrr == report.mrr_before == 1.0


def test_tasks_quoting_both_probes_of_a_memory_lose_it_nothing() -> None:
    """Twelve tasks quoting a memory's title and claim fill the top 10 of both of its
    probes in plain search; ranked beside it they made it ``unfound`` (a refused merge).
    The gate ranks memories only, so it is found where it was."""
    notes = [record_at(f"areas/m{i}.html", memory(f"Topic {i}", f"Claim number {i}."))
             for i in range(5)]
    target = record_at("areas/backup.html",
                       memory("Nightly backup", "The nightly backup runs at two."))
    base = version_from_records([*notes, target], "b")
    reviews = [record_at(f"areas/tasks/r{i}.html", _task(
        f"Review nightly backup {i}", "Nightly backup: the nightly backup runs at two, or "
        f"the nightly backup runs at two {i}? Nightly backup runs at two."))
        for i in range(12)]
    report = gate_heads(base, version_from_records([*notes, target, *reviews], "t"))
    assert report.passed and report.unfound == () and report.inversions == ()
    assert describe_head_gate_failure(report) == "head gate: 12 probes; passed"
