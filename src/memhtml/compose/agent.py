"""The agent doors' services: the store's head, this clone's reads and the
transcripts directory, handed to the pure ``memhtml.agent`` functions.

``brief`` reads the access log of the last ``READS_DAYS`` days (a store with no state
plane, or one whose database cannot be read, briefs without the part: a briefing
must not fail on a counter). ``capture`` reads the transcript the caller names (at
most ``CAPTURE_MAX_BYTES``) and writes its redacted copy where ``transcripts_dir``
says; with the setting unset it is refused with the one line that sets it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Final

from returns.io import IOFailure, IOResult, IOSuccess
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.agent.brief import BRIEF_ITEMS, BRIEF_TOKENS, Brief, brief
from memhtml.agent.capture import CAPTURE_MAX_BYTES, prepare
from memhtml.agent.recall import RECALL_LIMIT, RECALL_TOKENS, Recall, recall
from memhtml.compose.services import Services
from memhtml.compose.settings import SettingsError
from memhtml.contracts.errors import TranscriptFailure
from memhtml.store import Store, StoreError
from memhtml.store.stamps import now_stamp

READS_DAYS: Final = 90


def brief_of(services: Services, store: Store, *, budget: int = BRIEF_TOKENS,
             items: int = BRIEF_ITEMS) -> IOResult[Brief, StoreError]:
    """The session brief of the store's tip."""
    now = services.clock.now()
    reads: dict[str, int] = {}
    if services.state is not None:
        counted = services.state.access_counts(now - timedelta(days=READS_DAYS))
        if is_successful(counted):
            reads = {path: c.count
                     for path, c in unsafe_perform_io(counted.unwrap()).items()}
    return store.head().map(lambda version: brief(version, now_stamp(now), reads,
                                                  budget=budget, items=items))


def recall_of(store: Store, prompt: str, *, limit: int = RECALL_LIMIT,
              budget: int = RECALL_TOKENS) -> IOResult[Recall, StoreError]:
    """The memories of the store's tip the prompt has evidence for."""
    return store.head().map(lambda version: recall(version, prompt, limit=limit,
                                                   budget=budget))


@dataclass(frozen=True, slots=True)
class Captured:
    session: str
    path: str
    written: bool
    """False when the copy already held exactly these bytes."""
    lines: int
    redacted: int
    unparsed: int
    ended: bool


def capture_session(services: Services, source: Path, session: str, *, end: bool = False
                    ) -> IOResult[Captured, SettingsError | TranscriptFailure]:
    """``source`` redacted into ``transcripts_dir`` as ``<session>.jsonl``."""
    from memhtml.adapters.transcripts import keep_session, read_source
    from memhtml.compose.sleep import transcripts_source

    chosen = transcripts_source(services.settings.transcripts_dir)
    if not is_successful(chosen):
        return IOFailure(chosen.failure())
    directory = chosen.unwrap()
    if directory is None:
        return IOFailure(SettingsError(
            "transcripts_dir is not set, so there is nowhere to keep sessions for the "
            "nightly run: add transcripts_dir = \"~/.local/share/memhtml/transcripts\" to "
            "~/.config/memhtml/config.toml (or set MEMHTML_TRANSCRIPTS_DIR)"))
    root: Path = directory.root  # type: ignore[attr-defined]
    read: IOResult[bytes, SettingsError | TranscriptFailure] = read_source(
        source, CAPTURE_MAX_BYTES)

    def keep(data: bytes) -> IOResult[Captured, SettingsError | TranscriptFailure]:
        ready = prepare(data, end=end)
        written: IOResult[bool, SettingsError | TranscriptFailure] = keep_session(
            root, session, ready.data)
        return written.map(lambda done: Captured(
            session, str(root / f"{session}.jsonl"), done, ready.lines, ready.redacted,
            ready.unparsed, end))

    return read.bind(keep)




@dataclass(frozen=True, slots=True)
class GraphImported:
    commit: str | None
    """None when every entity was already there (nothing to commit)."""
    written: tuple[str, ...]
    kept: tuple[str, ...]
    """Entities whose memory an earlier import wrote (same path, same title): left as
    they are."""
    links: int
    relations_as_text: int
    """Relations to an entity the file does not hold: kept as a body line only."""


def import_mcp_memory(store: Store, source: Path
                      ) -> IOResult[GraphImported, StoreError | TranscriptFailure]:
    """The MCP memory server's graph file, as memories and edges in one commit, or
    nothing (``agent.mcp_memory`` says how each part maps)."""
    from memhtml.adapters.transcripts import read_source
    from memhtml.agent.mcp_memory import edge_of, entity_label, paths_of, read_graph
    from memhtml.store import BLink, BWrite, Refused, WriteInput, batch

    read: IOResult[bytes, StoreError | TranscriptFailure] = read_source(
        source, CAPTURE_MAX_BYTES)

    def plan(data: bytes) -> IOResult[GraphImported, StoreError | TranscriptFailure]:
        graph = read_graph(data)
        if isinstance(graph, list):
            return IOFailure(Refused(
                f"{source} is not a memory graph the MCP memory server writes; nothing "
                f"imported ({len(graph)} problem(s))", tuple(graph[:50])))
        return store.head().bind(lambda version: land(graph, version))

    def land(graph: Any, version: Any) -> IOResult[GraphImported, StoreError]:
        entities = list(graph.entities.values())
        wanted = paths_of(entities, set())
        kept = {e.name for e in entities
                if (r := version.get(wanted[e.name])) is not None and r.title == e.name}
        fresh = [e for e in entities if e.name not in kept]
        # A fresh entity never takes a path a memory already holds.
        occupied = {p for p in wanted.values() if version.get(p) is not None}
        paths = {**{n: wanted[n] for n in kept}, **paths_of(fresh, occupied)}
        ops: list[Any] = []
        for entity in sorted(fresh, key=lambda e: paths[e.name]):
            claim = (entity.observations[0] if entity.observations
                     else f"{entity.name} is a {entity.entity_type}.")
            body = tuple(entity.observations[1:]) + tuple(
                f"{rel}: {to}" for rel, to in entity.relations)
            ops.append(BWrite(WriteInput(
                title=entity.name, claim=claim, body=body, entities=(entity_label(entity),),
                tags=("mcp-memory",), path=paths[entity.name])))
        links: set[tuple[str, str, str]] = set()
        as_text = 0
        for source_name, rel, target in graph.relations:
            if source_name not in paths or target not in paths:
                as_text += 1
                continue
            if source_name in kept or paths[source_name] == paths[target]:
                continue
            links.add((paths[source_name], edge_of(rel), "/" + paths[target]))
        ops += [BLink(a, rel, b) for a, rel, b in sorted(links)]
        if not ops:
            return IOSuccess(GraphImported(None, (), tuple(sorted(kept)), 0, as_text))
        landed: IOResult[Any, StoreError] = batch(
            store, ops, trailers=(("Memhtml-Import", "mcp-memory"),))
        return landed.map(lambda done: GraphImported(
            done.commit, tuple(paths[e.name] for e in fresh), tuple(sorted(kept)),
            len(links), as_text))

    return read.bind(plan)


__all__ = ["Captured", "GraphImported", "brief_of", "capture_session", "import_mcp_memory",
           "recall_of"]
