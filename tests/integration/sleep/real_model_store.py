"""A small planted store that gives every model phase work, for a night with a real
model (``test_sleep_real_model``, ``bench.sleep_real_model``).

The planted corpus (``memhtml.eval.planted``) at its smallest that still plants every
kind of defect and the entity alias sets: 48 synthetic surveys with one pair of each
kind and two paraphrases, so dedup-merge has a paraphrase group to ask about and flips
the veto must refuse; entity spellings for entity-resolution; contradictions and
their neighbours for edge-typing; old notes in communities for arc-synthesis and
compress; tasks and notes for task-detection. On top of it: two memories in
``areas/inbox/`` that nothing links (placement-triage, under ``--deep``), and two
transcript sessions (trace-consolidation): one holding a fact and a commitment, one
small talk.

The vectors are the corpus's scripted ones, served over loopback as an
OpenAI-compatible embeddings endpoint, so which pairs the phases offer does not
depend on an embedder; what is judged is what the model answers about them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Final

from returns.io import IOResult

from memhtml.adapters.clock import FixedClock
from memhtml.compose import Settings, open_services, value_of
from memhtml.compose.sleep import head_gate, sleep_deps
from memhtml.contracts.services import PathChange
from memhtml.eval.planted import plant_corpus, synthetic_docs
from memhtml.eval.planted_embedder import scripted_embedder
from memhtml.eval.planted_manifest import PlantConfig, PlantedCorpus
from memhtml.format import NewMemoryInput, new_memory_doc, serialize_memory
from memhtml.sleep.deps import PhaseProgress, SleepDeps
from memhtml.store.errors import StoreError
from memhtml.store.landing import Draft, land
from tests.integration.sleep.planted_support import (
    IMPORT_AT,
    RUN_AT,
    planted_settings,
    serve_embeddings,
    write_planted_store,
)

CONFIG: Final = PlantConfig(exact=1, frame_key=1, near=1, paraphrase=2, negation=1,
                            antonym=1, number=1, variant=1, contradictions=1,
                            stale_tasks=1)
DOCS: Final = 48
"""The fewest synthetic documents the alias sets and one pair of each kind fit in."""
INBOX: Final[Mapping[str, tuple[str, str]]] = {
    "areas/inbox/ferry-timetable.html": (
        "Ferry timetable", "The ferry to the survey island leaves at 07:40 on weekdays."),
    "areas/inbox/gauge-spares.html": (
        "Gauge spares", "Spare batteries for the tide gauges are kept in the boat shed."),
}
FACT: Final = "The staging database now lives on host db-7 in the west region."
PROMISE: Final = "I will rotate the storage key on Friday."
SESSIONS: Final[Mapping[str, tuple[Mapping[str, str], ...]]] = {
    "s-rotate": ({"role": "user", "content": FACT},
                 {"role": "assistant", "content": "Noted: db-7, west region."},
                 {"role": "user", "content": PROMISE},
                 {"role": "assistant", "content": "I will remind you on Friday."}),
    "s-thanks": ({"role": "user", "content": "Thanks, that was helpful."},
                 {"role": "assistant", "content": "Glad to help."}),
}


@dataclass(frozen=True)
class RealStore:
    """The prepared store: its root, the corpus it holds, the embeddings endpoint its
    vectors come from, and the transcripts folder its sessions are in."""

    root: Path
    corpus: PlantedCorpus
    embed_url: str
    transcripts: Path


def _inbox_files(at: datetime) -> dict[str, bytes]:
    stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {path: serialize_memory(new_memory_doc(NewMemoryInput(
        title=title, claim=claim, memory_type="semantic", at=stamp,
        body=()))).encode("utf-8") for path, (title, claim) in INBOX.items()}


def _write_sessions(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, lines in SESSIONS.items():
        rows = [*lines, {"type": "session_end"}]
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows),
                                              encoding="utf-8")


@contextlib.contextmanager
def real_model_store(base: Path) -> Iterator[RealStore]:
    """Build the store under ``base`` (``store/`` and ``transcripts/``) and serve its
    vectors while the block runs."""
    corpus = plant_corpus(synthetic_docs(DOCS), CONFIG).unwrap()
    with serve_embeddings(scripted_embedder(corpus)) as url:
        root = base / "store"
        write_planted_store(root, corpus, url)
        services = value_of(open_services(planted_settings(root, url),
                                          clock=FixedClock(IMPORT_AT)))
        store = services.store()
        changes = tuple(PathChange(path, data) for path, data
                        in sorted(_inbox_files(IMPORT_AT - timedelta(days=3)).items()))

        def derive() -> IOResult[Draft, StoreError]:
            return store.deps.tip().map(lambda tip: Draft(
                parent=tip, changes=changes, ops=("write",),
                subject="inbox notes", body="Two notes nothing links, for placement.",
                before={c.path: None for c in changes}, label="import"))

        value_of(land(store.deps, derive))
        transcripts = base / "transcripts"
        _write_sessions(transcripts)
        yield RealStore(root, corpus, url, transcripts)


def model_settings(store: RealStore, url: str, model: str, extra_body: str,
                   token_field: str) -> Settings:
    """The settings a person pointing this store at a local server writes: the
    ``openai`` dialect at ``url``, ``auto`` structured output, the server's token
    field, and the transcripts folder."""
    return replace(planted_settings(store.root, store.embed_url), llm="openai",
                   llm_url=url, llm_model=model, llm_extra_body=extra_body,
                   llm_token_field=token_field, transcripts_dir=str(store.transcripts))


def model_deps(settings: Settings, progress: PhaseProgress | None = None,
               at: datetime = RUN_AT) -> SleepDeps:
    """A night's dependencies under ``settings``, at ``at``."""
    services = value_of(open_services(settings, clock=FixedClock(at)))
    return sleep_deps(services, head_gate, progress).unwrap()
