"""The head gate's parts: probe queries, the seeded sample, scoring and the one-line account."""

from __future__ import annotations

import dataclasses
import hashlib

from tests.property.head_support import archived, memory, memory_with, record_at

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


def test_probes_are_a_seeded_sample_of_records_active_in_both() -> None:
    names = [f"m{i}" for i in range(12)]
    base = _version(names + ["only-base"])
    landed = version_from_records(
        [r for r in base.records() if r.path not in {"areas/m0.html", "areas/only-base.html"}]
        + [record_at("archive/areas/m0.html", archived(memory("Title m0", "Claim about m0.")))]
        + [record_at("areas/only-landed.html", memory("New", "A new claim."))],
        "l")
    common = [f"areas/{n}.html" for n in names[1:]]

    def key(seed: int, path: str) -> tuple[str, str]:
        return hashlib.sha1(f"{seed}:{path}".encode()).hexdigest()[:8], path

    for seed in (1, 7):
        probes = probes_for(base, landed, 5, seed)
        assert [p.path for p in probes] == sorted(common, key=lambda p: key(seed, p))[:5]
        assert all(p.query == f"Title {p.path[6:-5]}" for p in probes)
    assert len(probes_for(base, landed, 100, 1)) == len(common)
    assert probes_for(base, landed, 0, 1) == []
    assert probes_for(base, landed, 5, 1) != probes_for(base, landed, 5, 2)


def test_probe_query_comes_from_the_landed_record() -> None:
    base = _version(["a"])
    landed = version_from_records(
        [record_at("areas/a.html", memory("Renamed title", "Claim about a."))], "l")
    assert probes_for(base, landed, 10, 1) == [HeadGateProbe("areas/a.html", "Renamed title")]


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
    assert (report.added, report.removed, report.probes) == (2, 1, 2)
    assert (report.base, report.landed, report.mode) == ("s", "l", "head")


def test_describe_names_five_inversions_and_counts_the_rest() -> None:
    names = [f"m{i}" for i in range(8)]
    base = _version(names)
    # A sharper decoy per title pushes every target to second place, out of a top 1.
    landed = version_from_records(
        list(base.records())
        + [record_at(f"areas/decoy-{n}.html", memory(f"Title {n}", f"Title {n} title {n}."))
           for n in names], "l")
    report = gate_heads(base, landed, HeadGateOptions(k=1))
    assert not report.passed
    line = describe_head_gate_failure(report)
    assert line.startswith("head gate: 8 probes; MRR 0.0000 below floor 0.9800 (base 1.0000)")
    assert "inversions 0 -> 8: fell-out " in line
    assert line.count("fell-out") == 5
    assert line.endswith(" and 3 more")
    assert HeadGateFailed(report).reason == line
