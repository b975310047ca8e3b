"""bench/sleep_model: a night with an instant model against a night with none.

The store is the 5,000-memory planted one of ``bench.sleep_planted`` (SciFact, the
planted defects, vectors from the scripted embedder, a bare repository). The target
is that a night with a model that answers at once costs at most 1.5x a night with no
model, measured in the same process; the gap is then what the model phases cost
around the model (selecting, framing, reading, applying), since the model costs
nothing. The process's peak RSS should stay under 1 GB.

How it is measured:

- two untimed warm-up nights, one of each kind, embed the base and whatever the
  model nights write, so every timed night finds its vectors cached;
- then ``--rounds`` rounds (default ``MEMHTML_BENCH_RUNS``, else 3), each a night
  without a model and a night with the instant model, in alternating order (round 1
  no-model first, round 2 model first, ...), so drift in the machine's load does
  not favour one side;
- every night starts from the same main, at the same instant, with an empty state
  plane: its branch is deleted once it is timed and main never moves, so each night
  cuts the same run id from the same tree and sees the same corpus;
- only ``run_sleep`` is timed (not the store build, not the branch deletion).

It prints each round's two times and their ratio, the medians, the model calls per
phase (the same every round, or the bench stops), what the model phases did, and
``ru_maxrss``: the peak resident size of the whole process (store build included),
not of any one night.

**The instant model** answers every request with a schema-valid answer chosen to
make its phase go through its apply path, not to be right:

- ``group_duplicate_memories`` (dedup-merge): every set in the batch as one group
  (each member's text opens with its set number), cut into groups of at most
  ``DEDUP_COMPONENT_CAP``; a lone member is left out. The groups then pass the veto
  and the fold as the model's would.
- ``cluster_entity_names`` (entity-resolution): one cluster of the first two names
  offered, the first canonical, confidence 0.9: a first detection, so the merge
  waits for a second night (nothing merges); no cluster when the batch offers one
  name.
- ``type_edges`` (edge-typing): ``none`` for every pair offered, subject ``a``.
- ``write_canonicals`` (compress): no canonicals.
- ``choose_arcs`` (arc-synthesis's triage): every community offered judged, none
  chosen, so no writing call follows.
- ``report_open_commitments`` (task-detection): no findings.

Trace-consolidation has no transcript source here, and placement-triage runs only in
a deep night, so neither asks. Every answer is checked with
``memhtml.llm.schema.violations`` against its request's schema (the schema itself
with ``validate_schema``); an answer off its schema, or a tool the model has no answer
for, stops the bench once the night is over (a raise inside a phase would be recorded
as that phase's failure, not seen here).

``--small`` plants a 1,000-memory store and runs one round: a smoke test of the
bench, not a figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import resource
import statistics
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Final

from returns.io import IOFailure, IOResult, IOSuccess
from returns.result import Failure

from bench.common import run
from bench.sleep_planted import AT, AUTHOR, SIZE, planted_store
from memhtml.adapters.clock import FixedClock
from memhtml.adapters.memory_state import InMemoryState
from memhtml.adapters.vector_cache import VectorFiles
from memhtml.compose.sleep import head_gate
from memhtml.contracts import DocumentEmbedder, GitService, LanguageModel
from memhtml.contracts.errors import ModelError, ModelMalformed
from memhtml.contracts.services import ModelRequest
from memhtml.domain.thresholds import DEDUP_COMPONENT_CAP
from memhtml.eval.planted import extra_files
from memhtml.eval.planted_embedder import scripted_embedder
from memhtml.llm.schema import validate_schema, violations
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.phases.arc_synthesis import TRIAGE_TOOL as ARC_TRIAGE_TOOL
from memhtml.sleep.phases.compress_prompt import TOOL_NAME as COMPRESS_TOOL
from memhtml.sleep.phases.dedup_prompt import MAX_GROUPS as DEDUP_MAX_GROUPS
from memhtml.sleep.phases.dedup_prompt import TOOL_NAME as DEDUP_TOOL
from memhtml.sleep.phases.edge_typing import TOOL_NAME as EDGE_TOOL
from memhtml.sleep.phases.entity_resolution import TOOL_NAME as ENTITY_TOOL
from memhtml.sleep.phases.task_detection import TOOL_NAME as TASK_TOOL
from memhtml.sleep.runner import RunReport, run_sleep

ROUNDS: Final = int(os.environ.get("MEMHTML_BENCH_RUNS", "3"))
SMALL_SIZE: Final = 1_000
TARGET_RATIO: Final = 1.5
TARGET_RSS_MB: Final = 1_024
ENTITY_CONFIDENCE: Final = 0.9
"""Above the model-only floor, so the cluster counts as a detection."""
EDGE_CONFIDENCE: Final = 0.9

PHASE_OF_TOOL: Final[Mapping[str, str]] = {
    DEDUP_TOOL: "dedup-merge",
    ENTITY_TOOL: "entity-resolution",
    EDGE_TOOL: "edge-typing",
    ARC_TRIAGE_TOOL: "arc-synthesis",
    COMPRESS_TOOL: "compress",
    TASK_TOOL: "task-detection",
}
"""The tools the instant model answers, and the phase that asks each."""
MODEL_PHASES: Final = (*PHASE_OF_TOOL.values(), "trace-consolidation", "placement-triage")

_SET = re.compile(r"set (\d+):")


# --------------------------------------------------------------------------- the model


Members = Sequence[tuple[str, str]]
"""A batch's members as offered: ``(key, rendered text)``, in batch order."""


def offered(prompt: str) -> Members:
    """The ``(key, text)`` members a kernel-framed prompt lists, in order: one JSON
    object a line, each opening with its key."""
    members: list[tuple[str, str]] = []
    for line in prompt.split("\n"):
        if line.startswith('{"key": '):
            item = json.loads(line)
            members.append((str(item["key"]), str(item["text"])))
    return tuple(members)


def _dedup_groups(members: Members) -> list[dict[str, object]]:
    sets: dict[str, list[str]] = {}
    for key, text in members:
        found = _SET.match(text)
        sets.setdefault(found.group(1) if found else "", []).append(key)
    groups: list[dict[str, object]] = []
    for keys in sets.values():
        for start in range(0, len(keys), DEDUP_COMPONENT_CAP):
            chunk = keys[start:start + DEDUP_COMPONENT_CAP]
            if len(chunk) >= 2:
                groups.append({"members": chunk})
    return groups[:DEDUP_MAX_GROUPS]


def _keys(members: Members) -> list[str]:
    return [key for key, _ in members]


def _entity_clusters(members: Members) -> Mapping[str, object]:
    keys = _keys(members)
    clusters = [] if len(keys) < 2 else [
        {"members": keys[:2], "canonical": keys[0], "confidence": ENTITY_CONFIDENCE}]
    return {"clusters": clusters}


def _edge_verdicts(members: Members) -> Mapping[str, object]:
    return {"verdicts": [{"key": key, "rel": "none", "subject": "a",
                          "confidence": EDGE_CONFIDENCE} for key in _keys(members)]}


def _arc_triage(members: Members) -> Mapping[str, object]:
    return {"communities": [{"key": key, "arc": False, "title": None}
                            for key in _keys(members)]}


ANSWERS: Final[Mapping[str, Callable[[Members], Mapping[str, object]]]] = {
    DEDUP_TOOL: lambda members: {"groups": _dedup_groups(members)},
    ENTITY_TOOL: _entity_clusters,
    EDGE_TOOL: _edge_verdicts,
    COMPRESS_TOOL: lambda _members: {"canonicals": []},
    ARC_TRIAGE_TOOL: _arc_triage,
    TASK_TOOL: lambda _members: {"findings": []},
}
"""The instant model's answer per tool, from the members a batch offered."""


def instant_answer(request: ModelRequest) -> Mapping[str, object] | None:
    """The instant model's answer to ``request`` (module docstring), or None for a tool
    it has no answer for."""
    answer = ANSWERS.get(request.tool_name)
    return None if answer is None else answer(offered(request.prompt))


@dataclass
class InstantModel:
    """A ``LanguageModel`` that answers at once, in process (``instant_answer``).

    What goes wrong is kept, not raised: a phase that raises is recorded as failed,
    and the bench must see it. ``problems`` lists every answer off its schema and
    every request it could not answer; both are answered ``ModelMalformed``, as the
    port promises."""

    calls: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    _schemas: set[str] = field(default_factory=set)

    @property
    def model_id(self) -> str:
        return "bench-instant"

    def complete_json(self, request: ModelRequest) -> IOResult[Mapping[str, object], ModelError]:
        self.calls[request.tool_name] += 1
        if request.tool_name not in self._schemas:
            if isinstance(refused := validate_schema(request.schema), Failure):
                self.problems.append(f"{request.tool_name}: schema refused: {refused.failure()}")
            self._schemas.add(request.tool_name)
        answer = instant_answer(request)
        if answer is None:
            self.problems.append(f"{request.tool_name}: no answer for this tool")
            return IOFailure(ModelMalformed(self.model_id, "no answer for this tool"))
        found = violations(request.schema, answer)
        if found:
            # Recorded for the bench, and failed as any model fails an answer off its
            # schema: handed over, it would reach a reader no real model's answer can.
            self.problems.append(f"{request.tool_name}: off-schema answer: {'; '.join(found)}")
            return IOFailure(ModelMalformed(self.model_id,
                                            f"off-schema answer: {'; '.join(found)}"))
        return IOSuccess(answer)


# --------------------------------------------------------------------------- the nights


@dataclass(frozen=True)
class Night:
    """One timed night: its kind, seconds, report, per-phase seconds and model calls."""

    with_model: bool
    seconds: float
    report: RunReport
    phases: Mapping[str, float]
    calls: Mapping[str, int]


@dataclass(frozen=True)
class Bench:
    """The planted store and what every night shares."""

    git: GitService
    embedder: DocumentEmbedder
    vectors: VectorFiles
    files: int

    def night(self, with_model: bool) -> Night:
        """One night from main, timed, its branch deleted after (see the docstring)."""
        timings: dict[str, float] = {}

        def progress(_n: int, phase: str, status: str) -> None:
            timings[phase] = timings.get(phase, 0.0) + (
                -time.perf_counter() if status == "start" else time.perf_counter())

        model = InstantModel() if with_model else None
        language_model: LanguageModel | None = model
        deps = SleepDeps(git=self.git, clock=FixedClock(AT + timedelta(days=1)),
                         author=AUTHOR, state=InMemoryState(), gate=head_gate,
                         embedder=self.embedder, embedder_name="openai",
                         vectors=self.vectors, model=language_model, progress=progress)
        gc.collect()
        began = time.perf_counter()
        report = run(run_sleep(deps))
        seconds = time.perf_counter() - began
        if report.branch is not None:
            run(self.git.delete_branch(report.branch))
        if model is not None and model.problems:
            raise SystemExit("the instant model went wrong:\n  " + "\n  ".join(
                sorted(set(model.problems))))
        if not report.ok:
            raise SystemExit("a night failed: " + "; ".join(
                f"{r.phase} {r.status}: {r.reason}" for r in report.phases
                if r.phase in report.failed))
        calls = {} if model is None else {PHASE_OF_TOOL.get(tool, tool): n
                                          for tool, n in sorted(model.calls.items())}
        return Night(with_model, seconds, report, timings, calls)


def build(size: int) -> Bench:
    """The planted store of ``size`` memories, committed on main in a bare repository,
    as ``bench.sleep_planted`` builds it."""
    root, git, corpus = planted_store(size, "memhtml-bench-model-")
    return Bench(git, scripted_embedder(corpus),
                 VectorFiles(root / "vectors"), len(corpus.files))


def rounds(bench: Bench, count: int) -> list[tuple[Night, Night]]:
    """``count`` rounds of (no-model night, model night), run in alternating order."""
    out: list[tuple[Night, Night]] = []
    for n in range(count):
        order = (False, True) if n % 2 == 0 else (True, False)
        nights = {kind: bench.night(kind) for kind in order}
        out.append((nights[False], nights[True]))
    return out


# --------------------------------------------------------------------------- reporting


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def show(bench: Bench, done: Sequence[tuple[Night, Night]], built_rss: float) -> None:
    print(f"planted store: {bench.files} files over SciFact; {len(done)} round(s), "
          "alternating order, each night from the same main with an empty state plane")
    print("round  first     no model    model   ratio")
    for n, (bare, modelled) in enumerate(done, start=1):
        first = "no-model" if n % 2 == 1 else "model"
        print(f"{n:5}  {first:<8} {bare.seconds:7.2f} s {modelled.seconds:7.2f} s  "
              f"x{modelled.seconds / bare.seconds:.3f}")
    ratios = [m.seconds / b.seconds for b, m in done]
    bare_s = statistics.median(b.seconds for b, _ in done)
    model_s = statistics.median(m.seconds for _, m in done)
    print(f"median        {bare_s:7.2f} s {model_s:7.2f} s  x{model_s / bare_s:.3f} "
          f"(median of ratios x{statistics.median(ratios):.3f}; target <= {TARGET_RATIO}x)")
    made = {tuple(sorted(m.calls.items())) for _, m in done}
    if len(made) != 1:
        raise SystemExit(f"the model nights made different calls: {sorted(made)}")
    last = done[-1][1]
    print("model calls per phase (every round): " + ", ".join(
        f"{phase} {last.calls.get(phase, 0)}" for phase in PHASE_OF_TOOL.values())
        + f"; {sum(last.calls.values())} in all")
    print("phase seconds, median (no model / model), where either is >= 0.01 s:")
    for phase in last.phases:
        bare_p = statistics.median(b.phases.get(phase, 0.0) for b, _ in done)
        model_p = statistics.median(m.phases.get(phase, 0.0) for _, m in done)
        if max(bare_p, model_p) >= 0.01:
            print(f"  {phase:<22} {bare_p:6.2f} s {model_p:6.2f} s")
    print("what the model phases did (last model night):")
    for record in last.report.phases:
        if record.phase in MODEL_PHASES:
            counts = " ".join(f"{k}={v}" for k, v in sorted(record.counts.items())
                              if v and not isinstance(v, bool))
            print(f"  {record.phase}: {record.status} {counts or record.reason or ''}")
    print(f"peak RSS after the store build   {built_rss:6.0f} MB")
    print(f"peak RSS of the process (ru_maxrss) {_rss_mb():6.0f} MB "
          f"(target <= {TARGET_RSS_MB})")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.sleep_model",
        description="A sleep night with an instant in-process model against one with "
                    "no model, over the planted store, in one process.")
    parser.add_argument("--rounds", type=int, default=ROUNDS,
                        help="rounds of (no-model, model) nights (default: "
                             "MEMHTML_BENCH_RUNS, else 3)")
    parser.add_argument("--size", type=int, default=SIZE,
                        help=f"memories in the planted store (default {SIZE})")
    parser.add_argument("--small", action="store_true",
                        help=f"a {SMALL_SIZE}-memory store and one round: a smoke test")
    args = parser.parse_args(argv)
    size, count = (SMALL_SIZE, 1) if args.small else (args.size, args.rounds)
    if count < 1 or size <= extra_files():
        parser.error(f"need --rounds >= 1 and --size > {extra_files()}")
    bench = build(size)
    built_rss = _rss_mb()
    bench.night(False)
    bench.night(True)
    show(bench, rounds(bench, count), built_rss)


if __name__ == "__main__":
    main()
