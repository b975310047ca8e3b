"""bench/sleep_real_model: a night with a real small model, phase by phase.

    python -m bench.sleep_real_model                  # --deep, 1,800 s model budget
    python -m bench.sleep_real_model --threads 2 --seconds 600

The model is Gemma 3 270M (Q4_K_M) served by llama-cpp-python's OpenAI-compatible
server on loopback (``bench.llama_server``: the ``model`` extra). The store is the
small planted one of ``tests.integration.sleep.real_model_store`` (every model phase
has work), configured as a person would configure it for that server: the ``openai``
dialect, ``llm_structured = auto``, ``llm_token_field = max_tokens``, greedy decoding
through ``llm_extra_body``. One ``--deep`` night runs, in this process.

What is measured, per phase:

- **wall**: from the runner's ``start`` to its ``done`` for the phase (the phase's
  whole work, model calls included);
- **calls** and **model s**: each ``complete_json`` the phase made, timed around the
  call (a call that steps down from ``json_schema`` to ``json_object`` is one call);
- **prompt / completion tokens per call**: what the server itself counted, read from
  its log after each call (``Llama.generate: K prefix-match hit, remaining R prompt
  tokens``, so prompt = K + R with the cached prefix included; ``eval time ... / M
  runs``, so completion = M);
- **out/s**: completion tokens over model seconds (prompt evaluation and grammar
  compilation included, so below the decoder's own speed);
- what the phase did with the answers (its counts: applied, refused, failed batches).

It prints one row per model phase and the night's totals. The figures depend on the
machine and its load (a two-core machine running nothing else, for the recorded
ones); the ratio that matters is model seconds against wall.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from tests.integration.sleep.real_model_store import (
    model_deps,
    model_settings,
    real_model_store,
)

from bench.llama_server import EXTRA_BODY, THREADS, TOKEN_FIELD, RecordingModel, serving_llama
from memhtml.compose import value_of
from memhtml.sleep.contract import SleepPhase
from memhtml.sleep.runner import RunOptions, run_sleep

MODEL_PHASES: tuple[SleepPhase, ...] = (
    "dedup-merge", "entity-resolution", "edge-typing", "arc-synthesis", "compress",
    "trace-consolidation", "task-detection", "placement-triage")
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1800.0,
                        help="the night's --max-llm-seconds")
    parser.add_argument("--threads", type=int, default=THREADS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memhtml-real-model-") as tmp:
        base = Path(tmp)
        with real_model_store(base) as store, serving_llama(
                base / "weights", base / "server.log", threads=args.threads) as server:
            settings = model_settings(store, server.url, server.model, EXTRA_BODY,
                                      TOKEN_FIELD)
            spans: dict[str, list[float]] = {}
            recorder: RecordingModel | None = None

            def progress(_position: int, phase: str, status: str) -> None:
                now = time.monotonic()
                if status == "start":
                    spans[phase] = [now, now]
                    if recorder is not None:
                        recorder.phase = phase
                else:
                    spans.setdefault(phase, [now, now])[1] = now

            deps = model_deps(settings, progress)
            recorder = (RecordingModel(deps.model, server.log) if deps.model is not None
                        else None)
            assert recorder is not None, "the settings name a model"
            started = time.monotonic()
            report = value_of(run_sleep(replace(deps, model=recorder),
                                        RunOptions(deep=True, max_llm_seconds=args.seconds)))
            night = time.monotonic() - started
    print(f"model {server.model} via llama-cpp-python, {args.threads} thread(s); "
          f"night {night:.1f} s, ok={report.ok}")
    print(f"{'phase':20} {'calls':>5} {'wall s':>7} {'model s':>8} {'s/call':>7} "
          f"{'prompt tok':>10} {'compl tok':>9} {'out/s':>6}  outcome")
    records = {r.phase: r for r in report.phases}
    for phase in MODEL_PHASES:
        calls = [c for c in recorder.calls if c.phase == phase]
        start, end = spans.get(phase, [0.0, 0.0])
        model_s = sum(c.seconds for c in calls)
        n = len(calls) or 1
        completion = sum(c.completion_tokens for c in calls)
        counts = records[phase].counts
        outcome = ", ".join(f"{k}={v}" for k, v in counts.items()
                            if k in OUTCOME_KEYS and v) or records[phase].status
        print(f"{phase:20} {len(calls):>5} {end - start:>7.1f} {model_s:>8.1f} "
              f"{model_s / n:>7.1f} {sum(c.prompt_tokens for c in calls) / n:>10.0f} "
              f"{completion / n:>9.0f} {completion / model_s if model_s else 0:>6.1f}  "
              f"{outcome}")
    total = recorder.seconds
    print(f"{'all':20} {len(recorder.calls):>5} {night:>7.1f} {total:>8.1f}; "
          f"failed calls {sum(c.answer is None for c in recorder.calls)}")


OUTCOME_KEYS = frozenset({
    "folded", "model_pairs", "merged", "model_merges_waiting", "promoted",
    "contradicts_detected", "below_floor", "unjudged", "chosen", "arcs", "canonicals",
    "archived", "too_few", "refused_ungrounded", "refused_protected", "memories",
    "unverified", "barren", "nothing_to_keep", "consolidated", "findings",
    "below_confidence", "tasks_minted", "moved", "kept", "failed_batches",
    "triage_failed_batches", "write_failed_batches", "budget_skipped"})


if __name__ == "__main__":
    main()
