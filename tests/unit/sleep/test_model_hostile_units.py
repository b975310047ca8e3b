"""The model phases' surfaces attacked piece by piece, on the doubles and real files:
the transcripts directory (names, links, FIFOs, files swapped or grown between the
listing and the read, modification times no ``datetime`` holds, ten thousand files),
model answers carrying what JSON allows and files do not, the kernel's keys, the
places an answer may name for placement, and the entity hub line of deep compress.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful
from tests.unit.sleep.fake_model import ScriptedModel
from tests.unit.sleep.sleep_support import WRITTEN, World, blank_world, err, ok
from tests.unit.sleep.test_compress import Canon, answering, details, facts
from tests.unit.sleep.test_compress import env_for as compress_env
from tests.unit.sleep.test_compress import put as put_compress
from tests.unit.sleep.test_deep_compress import deep_env
from tests.unit.sleep.test_deep_compress import run as run_compress
from tests.unit.sleep.test_placement_triage import RUN, inbox, placing, titles
from tests.unit.sleep.test_placement_triage import put as put_placement
from tests.unit.sleep.test_placement_triage import run as run_placement
from tests.unit.sleep.test_placement_triage import store as placement_store
from tests.unit.sleep.test_trace_consolidation import (
    OLD,
    STAMP,
    consolidated,
    env,
    line,
    memory,
    model,
    run,
    transcript,
)

from memhtml.adapters.clock import ManualClock
from memhtml.adapters.llm import HttpLanguageModel
from memhtml.adapters.transcripts import DirectoryTranscripts, modified_at
from memhtml.contracts.services import ModelRequest
from memhtml.domain.thresholds import (
    ENTITY_HUB_CLAIMANTS,
    TRACE_SESSIONS_PER_NIGHT,
    TRANSCRIPT_MAX_BYTES,
)
from memhtml.llm import encode_json
from memhtml.llm.decode import answer_of_anthropic, answer_of_openai
from memhtml.sleep.batch import key_for, mint
from memhtml.sleep.phases.compress import compress
from memhtml.sleep.phases.trace_consolidation import trace_consolidation
from memhtml.sleep.phases.trace_prompt import TITLE_CHARS
from memhtml.sleep.phases.trace_sessions import parse_transcript
from memhtml.store import WriteInput, write
from memhtml.store.doors import archive

LONE_SURROGATE = "\ud800"
"""What ``json.loads`` makes of the escape ``"\\ud800"``: a str no UTF-8 encoder takes."""


def listed(folder: Path) -> list[str]:
    return [e.session for e in ok(DirectoryTranscripts(folder).sessions())]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = tmp_path / "transcripts"
    made.mkdir()
    return made


# --------------------------------------------------------------------------- listing


@pytest.mark.parametrize(("name", "kept"), [
    ("ok.jsonl", True), ("A-b_c.9.jsonl", True), ("-rf.jsonl", True),
    ("x" * 128 + ".jsonl", True), ("x" * 129 + ".jsonl", False),
    ("..jsonl", False), ("...jsonl", False), (".hidden.jsonl", False),
    ("sp ace.jsonl", False), ("tab\t.jsonl", False), ("new\nline.jsonl", False),
    ("caf\u00e9.jsonl", False), ("\u0430dmin.jsonl", False), ("semi;colon.jsonl", False),
    ("ok.JSONL", False), ("ok.jsonl.bak", False), ("ok.json", False), (".jsonl", False),
])
def test_only_safe_stems_are_listed(folder: Path, name: str, kept: bool) -> None:
    (folder / name).write_text(line("user", "x") + "\n", encoding="utf-8")
    assert listed(folder) == ([name.removesuffix(".jsonl")] if kept else [])


def test_links_fifos_and_directories_are_never_listed(folder: Path, tmp_path: Path
                                                      ) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text(line("user", "secret"), encoding="utf-8")
    (folder / "to-file.jsonl").symlink_to(outside)
    (folder / "to-dir.jsonl").symlink_to(tmp_path)
    (folder / "dangling.jsonl").symlink_to(tmp_path / "missing")
    (folder / "self.jsonl").symlink_to(folder / "self.jsonl")
    os.mkfifo(folder / "fifo.jsonl")
    (folder / "dir.jsonl").mkdir()
    (folder / "dir.jsonl" / "inner.jsonl").write_text(line("user", "nested"))
    assert listed(folder) == []


def test_a_file_swapped_or_grown_after_the_listing_is_refused(folder: Path,
                                                              tmp_path: Path) -> None:
    for name in ("linked", "fifo", "grown", "kept"):
        (folder / f"{name}.jsonl").write_text(line("user", name), encoding="utf-8")
    source = DirectoryTranscripts(folder)
    assert [e.session for e in ok(source.sessions())] == ["fifo", "grown", "kept", "linked"]
    outside = tmp_path / "outside.jsonl"
    outside.write_text(line("user", "secret"), encoding="utf-8")
    (folder / "linked.jsonl").unlink()
    (folder / "linked.jsonl").symlink_to(outside)
    (folder / "fifo.jsonl").unlink()
    os.mkfifo(folder / "fifo.jsonl")  # opened for reading it would block: it is not
    (folder / "grown.jsonl").write_bytes(b"x" * 101)

    def refusal(session: str, limit: int = TRANSCRIPT_MAX_BYTES) -> str:
        return err(source.read(session, limit)).reason

    assert "cannot open" in refusal("linked")
    assert refusal("fifo") == "not a regular file"
    assert refusal("grown", 100) == "larger than 100 bytes"
    assert ok(source.read("grown", 101)) == b"x" * 101
    for never in ("../transcripts/kept", "kept/../kept", "missing", ""):
        assert refusal(never) == "not a session this source listed"


def far_off(folder: Path, name: str, seconds: float) -> bool:
    """Set ``name``'s modification time; False when the file system clamps it."""
    path = folder / f"{name}.jsonl"
    os.utime(path, (seconds, seconds))
    return os.stat(path).st_mtime == seconds


@pytest.fixture
def roomy_folder(tmp_path: Path) -> Iterator[Path]:
    """A directory on a file system storing times far past what ``datetime`` holds
    (tmpfs keeps 64-bit seconds; the test's own directory may clamp them)."""
    for parent in (tmp_path, Path("/dev/shm")):
        if not parent.is_dir():
            continue
        made = Path(tempfile.mkdtemp(dir=parent))
        probe = made / "probe.jsonl"
        probe.write_text("")
        if far_off(made, "probe", 1e12):
            probe.unlink()
            yield made
            for item in made.iterdir():
                item.unlink()
            made.rmdir()
            return
        probe.unlink()
        made.rmdir()
    pytest.skip("no file system here stores a modification time past year 9999")


def test_a_modification_time_no_datetime_holds_is_clamped_not_raised(roomy_folder: Path
                                                                     ) -> None:
    # Fixed here: the listing used to raise ValueError ("year 33658 is out of range"),
    # failing the phase and `sleep plan` over one file's timestamp.
    fact = "The cache TTL is 300 seconds."
    transcript(roomy_folder, "ancient", [line("user", fact)])
    transcript(roomy_folder, "future-open", [line("user", fact)])
    transcript(roomy_folder, "future-closed", [line("user", fact),
                                               json.dumps({"type": "session_end"})])
    assert far_off(roomy_folder, "ancient", -1e12)
    assert far_off(roomy_folder, "future-open", 1e15)
    assert far_off(roomy_folder, "future-closed", 1e12)
    entries = {e.session: e.modified for e in ok(DirectoryTranscripts(roomy_folder).sessions())}
    assert entries["ancient"] == datetime.min.replace(tzinfo=UTC)
    assert entries["future-open"] == entries["future-closed"] == datetime.max.replace(tzinfo=UTC)

    answer = {"memories": [memory("Cache TTL", fact, fact)], "commitments": []}
    result = run(blank_world(), roomy_folder, model(default=answer))
    # The far past is long settled, the far future never by age (only when closed).
    assert sorted(consolidated(result)) == ["ancient", "future-closed"]
    assert result.counts["unsettled"] == 1


def test_modified_at_is_total() -> None:
    assert modified_at(0.0) == datetime(1970, 1, 1, tzinfo=UTC)
    for seconds in (1e12, 1e300, float("inf")):
        assert modified_at(seconds) == datetime.max.replace(tzinfo=UTC)
    for seconds in (-1e12, -1e300, float("-inf")):
        assert modified_at(seconds) == datetime.min.replace(tzinfo=UTC)


def test_ten_thousand_transcripts_cost_one_listing_and_the_nightly_cap(folder: Path
                                                                       ) -> None:
    total = 10_000
    stamp = OLD.timestamp()
    for n in range(total):
        path = folder / f"s{n:05}.jsonl"
        path.write_bytes(b'{"role":"user","content":"fact %d"}\n' % n)
        os.utime(path, (stamp + n, stamp + n))
    llm = model()
    started = time.perf_counter()
    result = run(blank_world(), folder, llm)
    elapsed = time.perf_counter() - started
    assert llm.calls == TRACE_SESSIONS_PER_NIGHT
    assert result.counts["sessions"] == total
    assert result.counts["deferred"] == total - TRACE_SESSIONS_PER_NIGHT
    assert consolidated(result) == [f"s{n:05}" for n in range(TRACE_SESSIONS_PER_NIGHT)]
    print(f"\n10k transcripts: one night's survey and 20 calls in {elapsed:.2f}s")


# --------------------------------------------------------------------------- answers


@pytest.mark.parametrize("answer", [
    {"memories": [{**memory("T", "C", "fact"), "path": "areas/tasks/pwn.html"}],
     "commitments": []},
    {"memories": [memory("T" * (TITLE_CHARS + 1), "C", "fact")], "commitments": []},
    {"memories": [memory("T" * 10_000, "C", "fact")], "commitments": []},
    {"memories": [{**memory("T", "C", "fact"), "memory_type": "task"}], "commitments": []},
    {"memories": [{**memory("T", "C", "fact"), "entities": ["person:Mallory"]}],
     "commitments": []},
    {"memories": [], "commitments": [{"statement": "S", "confidence": 1.5, "done": False,
                                      "quote": "fact"}]},
    {"memories": [], "commitments": [], "links": ["/areas/ops/runbook.html"]},
    {"memories": "areas/inbox/x.html", "commitments": []},
])
def test_an_answer_reaching_past_the_schema_writes_nothing_and_earns_no_watermark(
        folder: Path, answer: Mapping[str, object]) -> None:
    transcript(folder, "s1", [line("user", "The fact is stated here.")])
    result = run(blank_world(), folder, model(default=answer))
    assert result.counts["failed_sessions"] == 1
    assert result.commits == () and consolidated(result) == []
    # The night is counted: a session answered off the schema night after night is
    # handed to a person, never asked forever.
    (record,) = result.marks
    assert (record.kind, record.get("rule"), record.get("nights")) == (
        "model-refused", "session-yielded-nothing", 1)


def test_a_claim_with_a_nul_is_refused_and_nothing_is_written(folder: Path) -> None:
    transcript(folder, "s1", [line("user", "The fact is stated here: a claim with a NUL.")])
    answer = {"memories": [memory("Claim with a NUL", "A claim \x00 with a NUL.",
                                  "fact is stated")],
              "commitments": []}
    result = run(blank_world(), folder, model(default=answer))
    assert result.counts["refused"] == 1 and result.counts["memories"] == 0
    assert result.commits == ()


def test_a_lone_surrogate_in_a_written_memory_is_refused_not_raised() -> None:
    got = write(blank_world().store, WriteInput(title=f"x{LONE_SURROGATE}", claim="c"))
    assert not is_successful(got)


def test_a_lone_surrogate_in_an_answer_fails_the_session_not_the_run(folder: Path) -> None:
    transcript(folder, "s1", [line("user", "The fact is stated here.")])
    answer = {"memories": [memory(f"T{LONE_SURROGATE}", "C.", "fact is stated")],
              "commitments": []}
    result = run(blank_world(), folder, model(default=answer))
    assert result.counts["memories"] == 0


def test_a_transcript_with_a_lone_surrogate_fails_its_session_not_the_run(
        folder: Path) -> None:
    transcript(folder, "s1", ['{"role": "user", "content": "broken \\ud800 text"}'])
    assert parse_transcript((folder / "s1.jsonl").read_bytes()).turns[0].text.endswith(
        f"{LONE_SURROGATE} text")
    http = HttpLanguageModel("openai", "http://127.0.0.1:9/v1", "m", None, 1.0, {},
                             ManualClock(STAMP), retries=0, environ={})
    result = ok(trace_consolidation(replace(env(blank_world(), folder, None), model=http)))
    assert consolidated(result) == []


def test_encode_json_refuses_a_lone_surrogate() -> None:
    assert not is_successful(encode_json({"a": LONE_SURROGATE}))


def test_an_anthropic_answer_with_a_lone_surrogate_is_malformed() -> None:
    payload = {"type": "message", "stop_reason": "tool_use", "content": [
        {"type": "tool_use", "name": "t", "input": {"a": LONE_SURROGATE}}]}
    assert not is_successful(answer_of_anthropic(payload, "t", "m"))


def test_an_openai_answer_with_a_lone_surrogate_is_malformed() -> None:
    payload = {"choices": [{"finish_reason": "stop",
                            "message": {"content": '{"a": "\\ud800"}'}}]}
    assert not is_successful(answer_of_openai(payload, "m"))


# --------------------------------------------------------------------------- the kernel


@given(st.integers(min_value=1, max_value=12),
       st.one_of(st.text(max_size=8), st.integers(), st.none(), st.floats(),
                 st.lists(st.text(max_size=3), max_size=2)))
def test_only_a_minted_key_resolves(size: int, value: object) -> None:
    keys = mint(list(range(size)))
    offset = keys.offset(value)
    minted = {key_for(n): n for n in range(size)}
    assert offset == minted.get(value) if isinstance(value, str) else offset is None


@pytest.mark.parametrize("value", ["m0", "m01", "m+1", "m 1", " m1", "m1 ", "M1", "m\uff11",
                                   "m\u0661", "m1\n", "m1.0", "m-1", "m" + "9" * 4000])
def test_a_near_key_resolves_to_nothing(value: str) -> None:
    assert mint(list(range(12))).offset(value) is None


def test_a_key_past_the_digit_limit_resolves_to_nothing() -> None:
    assert mint(list(range(12))).offset("m" + "9" * 5000) is None


# --------------------------------------------------------------------------- placement


LONE = inbox("lone")


@pytest.mark.parametrize(("place", "moved"), [
    ("areas/inbox", False), ("areas/inbox/", False), ("areas/tasks", False),
    ("archive/2026", False), ("areas/..", False), ("areas/./ops", False),
    ("areas//ops", False), ("resources/people", False), ("resources/people/x", False),
    ("Areas/Ops", False), ("areas/OPS", False), ("areas/\u03bfps", False),
    ("areas/ops\u200b", False), ("areas/o\x00ps", False), ("areas\\ops", False),
    ("areas/ops/sub", False), ("areas/new topic", False), ("areas/" + "a" * 49, False),
    ("areas/-ops", False), ("areas/ops-", False), ("areas/o--ps", False),
    ("areas/ops/", True), ("/areas/ops", True), (" areas/ops\n", True),
    ("areas/" + "a" * 48, True), ("resources/ops-2", True),
])
def test_an_answer_can_only_name_a_topic_directory(place: str, moved: bool) -> None:
    w = placement_store(*LONE)
    result = run_placement(w, ScriptedModel(respond=placing({LONE[0]: (place, 0.9)})))
    assert (result.counts["moved"], result.counts["bad_place"]) == (int(moved), int(not moved))
    written = {c.path for commit in result.commits for c in commit.changes
               if c.data is not None}
    assert all(p.startswith(("areas/", "resources/")) for p in written)
    assert not {p for p in written if p.startswith(("areas/inbox/", "areas/tasks/",
                                                    "resources/people/"))}


def test_a_member_named_twice_keeps_its_first_answer() -> None:
    w = placement_store(*LONE)

    def respond(request: ModelRequest) -> Mapping[str, object]:
        return {"placements": [{"key": "m1", "place": "areas/ops", "confidence": 0.9},
                               {"key": "m1", "place": "resources/other", "confidence": 1.0}]}

    result = run_placement(w, ScriptedModel(respond=respond))
    assert (result.counts["moved"], result.counts["repeated"]) == (1, 1)
    written = {c.path for commit in result.commits for c in commit.changes
               if c.data is not None}
    assert "areas/ops/lone.html" in written
    assert not [p for p in written if p.startswith("resources/")]


def test_a_case_twin_of_an_existing_topic_is_refused_by_the_store() -> None:
    w = placement_store(*LONE)
    put_placement(w, "areas/Infra/base.html")
    result = run_placement(w, ScriptedModel(respond=placing({LONE[0]: ("areas/infra", 0.9)})))
    assert (result.counts["moved"], result.counts["store_refused"]) == (0, 1)
    assert result.commits == ()


# --------------------------------------------------------------------------- deep compress


def claimants(active: int, archived: int) -> World:
    """``active`` linkless memories claiming "org:acme", ``archived`` more that did and
    were archived, and a task claiming it."""
    w = blank_world()
    for n in range(active):
        put_compress(w, f"inbox/acme-{n:03}.html", entities=("org:acme",))
    for n in range(archived):
        put_compress(w, f"inbox/old-acme-{n:03}.html", entities=("org:acme",))
        ok(archive(w.store, f"inbox/old-acme-{n:03}.html"))
    put_compress(w, "inbox/tasks/chase-acme.html", memory_type="task",
                 entities=("org:acme",))
    w.clock.advance((STAMP - WRITTEN).total_seconds())
    return w


def test_archived_and_task_claimants_do_not_make_a_hub() -> None:
    at_line = run_compress(deep_env(claimants(ENTITY_HUB_CLAIMANTS, 5), ScriptedModel(),
                                    None, dry_run=True))
    assert (at_line.counts["hubs_skipped"], at_line.counts["entity_grouped"]) == (
        0, ENTITY_HUB_CLAIMANTS)
    over = run_compress(deep_env(claimants(ENTITY_HUB_CLAIMANTS + 1, 0), ScriptedModel(),
                                 None, dry_run=True))
    assert (over.counts["hubs_skipped"], over.counts["entity_groups"]) == (1, 0)



def test_a_canonical_compress_wrote_into_the_inbox_is_pinned_against_placement() -> None:
    notes = tuple(f"areas/inbox/deploy-{n}.html" for n in range(1, 5))
    w = blank_world()
    put_compress(w, "areas/ops/runbook.html")
    for n, path in enumerate(notes):
        put_compress(w, path, notes[:n])
    w.clock.advance((STAMP - WRITTEN).total_seconds())
    base = w.main()
    folded: Canon = ("Deploy notes facts", facts(notes[2:]), details(notes[2:]), notes[2:])
    squeezed = ok(compress(compress_env(w, ScriptedModel(respond=answering(folded)))))
    assert squeezed.counts["canonicals"] == 1
    for commit in squeezed.commits:
        w.raw(list(commit.changes), f"compress ({RUN}): {commit.subject}\n\n"
                                    f"Memhtml-Run: {RUN}\nMemhtml-Phase: compress\n")
    (canonical,) = [r.path for r in ok(w.store.head()).records()
                    if r.title == folded[0]]
    assert canonical.startswith("areas/inbox/"), canonical

    everything = dict.fromkeys((*notes, canonical), ("areas/ops", 1.0))
    llm = ScriptedModel(respond=placing(everything))
    placed = run_placement(w, llm, base=base)
    offered_titles = {t for r in llm.requests for t in titles(r)}
    # The two notes compress left as they were are free to move; the canonical it
    # wrote is this run's decision, so it is not even offered.
    assert offered_titles == {"Deploy 1", "Deploy 2"}
    assert (placed.counts["touched"], placed.counts["moved"]) == (1, 2)
    assert all(canonical not in {c.path for c in commit.changes}
               for commit in placed.commits)
