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
from returns.result import Failure, Result, Success
from returns.unsafe import unsafe_perform_io

from memhtml.agent.brief import BRIEF_ITEMS, BRIEF_TOKENS, Brief, brief
from memhtml.agent.capture import CAPTURE_MAX_BYTES, prepare
from memhtml.agent.recall import RECALL_LIMIT, RECALL_TOKENS, Recall, recall
from memhtml.compose.services import Services
from memhtml.compose.settings import SettingsError
from memhtml.contracts.errors import TranscriptFailure
from memhtml.contracts.vocabulary import OWN_SCOPE
from memhtml.store import Store, StoreError
from memhtml.store.stamps import now_stamp

READS_DAYS: Final = 90


def transcripts_root(services: Services, why: str) -> Result[Path, SettingsError]:
    """The directory ``transcripts_dir`` names, or why not: a bad value, or none set
    (then ``why`` says what that stops, with the one line that sets it)."""
    from memhtml.compose.sleep import transcripts_source

    def root_of(source: object) -> Result[Path, SettingsError]:
        if source is None:
            return Failure(SettingsError(
                f"transcripts_dir is not set, so {why}: add transcripts_dir = "
                "\"~/.local/share/memhtml/transcripts\" to ~/.config/memhtml/config.toml "
                "(or set MEMHTML_TRANSCRIPTS_DIR)"))
        return Success(Path(source.root))  # type: ignore[attr-defined]

    return transcripts_source(services.settings.transcripts_dir).bind(root_of)


def brief_of(services: Services, store: Store, *, budget: int = BRIEF_TOKENS,
             items: int = BRIEF_ITEMS, scope: str = OWN_SCOPE) -> IOResult[Brief, StoreError]:
    """The session brief of the store's tip (``scope``: the name it is read under)."""
    now = services.clock.now()
    reads: dict[str, int] = {}
    if services.state is not None:
        counted = services.state.access_counts(now - timedelta(days=READS_DAYS))
        if is_successful(counted):
            reads = {path: c.count
                     for path, c in unsafe_perform_io(counted.unwrap()).items()}
    return store.head().map(lambda version: brief(version, now_stamp(now), reads,
                                                  budget=budget, items=items, scope=scope))


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

    found = transcripts_root(services, "there is nowhere to keep sessions for the nightly run")
    if not is_successful(found):
        return IOFailure(found.failure())
    root = found.unwrap()
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




EXPORT_MAX_BYTES: Final = 512 * 1024 * 1024
"""The most of a ``conversations.json`` read, from a file or a zip member, whatever
the zip's header claims (a bomb stops here)."""
CLAIM_CHARS: Final = 300


@dataclass(frozen=True, slots=True)
class ChatsImported:
    commit: str | None
    memories: tuple[str, ...]
    sessions: int
    """Transcripts written (the rest were there already, byte for byte)."""
    kept: int
    """Conversations an earlier import brought in: left as they are."""
    empty: int
    duplicates: int
    cut: int


def read_export_bytes(source: Path) -> IOResult[bytes, TranscriptFailure]:
    """``conversations.json`` itself, or that member of an export zip (found by name
    in any folder, read in memory up to ``EXPORT_MAX_BYTES``; nothing is extracted)."""
    import zipfile

    from memhtml.adapters.transcripts import read_source

    where = str(source)
    try:
        is_zip = zipfile.is_zipfile(source)
    except OSError as exc:
        return IOFailure(TranscriptFailure(where, f"cannot open it: {exc.strerror or exc}"))
    if not is_zip:
        return read_source(source, EXPORT_MAX_BYTES)
    try:
        with zipfile.ZipFile(source) as archive:
            members = [m for m in archive.infolist()
                       if m.filename.rsplit("/", 1)[-1] == "conversations.json"
                       and not m.is_dir()]
            if len(members) != 1:
                return IOFailure(TranscriptFailure(
                    where, "the zip holds no conversations.json" if not members
                    else "the zip holds more than one conversations.json"))
            with archive.open(members[0]) as handle:
                data = handle.read(EXPORT_MAX_BYTES + 1)
    except (OSError, zipfile.BadZipFile, RuntimeError, NotImplementedError, ValueError) as exc:
        return IOFailure(TranscriptFailure(where, f"cannot read the zip: {exc}"))
    if len(data) > EXPORT_MAX_BYTES:
        return IOFailure(TranscriptFailure(where, f"conversations.json is larger than "
                                                  f"{EXPORT_MAX_BYTES} bytes"))
    return IOSuccess(data)


def import_chats(services: Services, store: Store, source: Path, kind: str
                 ) -> IOResult[ChatsImported, StoreError | SettingsError | TranscriptFailure]:
    """A ChatGPT or Claude export: one episodic memory per conversation (its title,
    when it began, its first message) in one commit, and its transcript in
    ``transcripts_dir`` for the nightly run to distil. Refused whole, nothing
    written, when the export is not that service's shape."""
    from memhtml.adapters.transcripts import keep_session
    from memhtml.agent.chat_exports import read_export, transcript_of
    from memhtml.agent.mcp_memory import slug_paths
    from memhtml.store import BWrite, Refused, WriteInput, batch

    found = transcripts_root(services, "the conversations would have nowhere to wait for "
                                       "the nightly run; nothing imported")
    if not is_successful(found):
        return IOFailure(found.failure())
    root = found.unwrap()
    folder = f"resources/chats/{kind}/"

    def plan(data: bytes) -> IOResult[ChatsImported, StoreError | SettingsError |
                                      TranscriptFailure]:
        found = read_export(data, kind)
        if isinstance(found, list):
            return IOFailure(Refused(f"{source} is not a {kind} export's conversations.json; "
                                     "nothing imported", tuple(found)))
        head: IOResult[Any, StoreError | SettingsError | TranscriptFailure] = store.head()
        return head.bind(lambda version: land(found, version))

    def land(export: Any, version: Any) -> IOResult[ChatsImported, StoreError | SettingsError
                                                     | TranscriptFailure]:
        talks = [c for c in export.conversations if c.turns]
        named = {c.id: f"{c.title} {c.id}" for c in talks}
        wanted = slug_paths(folder, list(named.values()), set())
        by_id = {cid: wanted[name] for cid, name in named.items()}
        kept = {c.id for c in talks if version.get(by_id[c.id]) is not None}
        ops = []
        for talk in talks:
            if talk.id in kept:
                continue
            first = next((t.text for t in talk.turns if t.role == "user"), talk.title)
            first = " ".join(first.split())
            claim = first if len(first) <= CLAIM_CHARS else first[:CLAIM_CHARS - 1] + "…"
            day = talk.started[:10] if talk.started else "an unknown day"
            ops.append(BWrite(WriteInput(
                title=talk.title, claim=claim, memory_type="episodic",
                body=(f"A {kind} conversation begun on {day}, {len(talk.turns)} turns; its "
                      f"transcript is session {kind}-{talk.id}.",),
                tags=(f"{kind}-import",), path=by_id[talk.id])))
        landed: IOResult[Any, StoreError | SettingsError | TranscriptFailure] = (
            batch(store, ops, trailers=(("Memhtml-Import", kind),)) if ops
            else IOSuccess(None))

        def sessions(done: Any) -> IOResult[ChatsImported, StoreError | SettingsError |
                                            TranscriptFailure]:
            written = 0
            for talk in talks:
                kept_one: IOResult[bool, StoreError | SettingsError | TranscriptFailure] = \
                    keep_session(root, f"{kind}-{talk.id}", transcript_of(talk))
                if not is_successful(kept_one):
                    return kept_one.map(lambda _: _never())
                written += bool(unsafe_perform_io(kept_one.unwrap()))
            return IOSuccess(ChatsImported(
                done.commit if done is not None else None,
                tuple(by_id[t.id] for t in talks if t.id not in kept), written, len(kept),
                len(export.conversations) - len(talks), export.duplicates, export.cut))

        return landed.bind(sessions)

    read: IOResult[bytes, StoreError | SettingsError | TranscriptFailure] = \
        read_export_bytes(source)
    return read.bind(plan)


def _never() -> ChatsImported:
    raise AssertionError("mapped only over a failure")


__all__ = ["Captured", "ChatsImported", "GraphImported", "brief_of", "capture_session",
           "import_chats", "import_mcp_memory", "recall_of"]
