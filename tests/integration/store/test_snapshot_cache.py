"""Snapshots: a data-only file that gives back the very version saved, and is refused
(then rebuilt) whenever it is damaged, foreign, renamed or of another format.

The law: ``read_snapshot(save_snapshot(dir, v)).version()`` equals ``v`` in every
record (field values and their types), every index (including which twin holds a
content hash), the lexical arrays byte for byte, and its search results.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pickle
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from returns.pipeline import is_successful
from returns.result import Success

from memhtml.adapters.snapshot_files import (
    LAYOUT_KEY,
    SNAPSHOT_FORMAT,
    Snapshot,
    SnapshotUnusable,
    read_snapshot,
    save_snapshot,
    snapshot_dir,
    snapshot_files,
    snapshot_path,
)
from memhtml.contracts.record import (
    RECORD_FIELDS,
    CitationValue,
    FacetValue,
    Link,
    MemoryRecord,
    record_rows,
)
from memhtml.contracts.vocabulary import EDGE_RELS, MEMORY_STATUSES, MEMORY_TYPES, TASK_STATUSES
from memhtml.format import render_template
from memhtml.head import (
    HeadVersion,
    SkippedFile,
    build_indexes,
    insert_record,
    record_from,
    remove_record,
)
from memhtml.head.codec import RECORD_KINDS, decode_version, encode_version
from memhtml.head.indexes import Indexes
from memhtml.head.lazy_map import LazyMap
from memhtml.store import Store, WriteInput, write
from memhtml.store.reads import status_of
from tests.integration.store.store_support import make_store, ok, state_dir_of, tip
from tests.property.head_support import fingerprint, memory
from tests.property.strategies import article_bodies, memory_inputs

QUERIES = ["deploy canary", "cache latency", "retry backoff queue", "audit", "café 日本"]
WORDS = ["deploy", "canary", "cache", "retry", "backoff", "queue", "latency", "audit", "café",
         "日本", "not", "the"]
PATHS = [f"areas/{name}.html" for name in "abcdefg"] + ["archive/2026/h.html"]
SHA = "0123456789abcdef0123456789abcdef01234567"

# --------------------------------------------------------------------------- strategies

_ODD = st.sampled_from(["", "\x00", "a\x00b", "\n", "\ud800", "🙂", "<&\"'>", "\u00a0"])
_TEXT = st.one_of(st.text(max_size=20), _ODD,
                  st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join))
_LONG = st.one_of(_TEXT, st.builds(lambda t, n: t * n, _TEXT, st.integers(1, 80)))
"""Some texts past the codec's short-string limit, so both string paths run."""


def _optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


def _tuple_of(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.lists(strategy, max_size=3).map(tuple)


@st.composite
def synthetic_records(draw: st.DrawFn, path: str) -> MemoryRecord:
    """A record with every field drawn, beyond what the parser makes: odd strings, lone
    surrogates and NULs, big integers, every optional set or not."""
    return MemoryRecord(
        path=path,
        blob_sha=draw(st.sampled_from(["b1", "b2", "b3"])),
        content_hash=draw(st.sampled_from(["sha256:one", "sha256:two", "sha256:three"])),
        frame_key=draw(st.sampled_from(["fk:1", "fk:2"])),
        archived=path.startswith("archive/"),
        html=draw(_LONG),
        title=draw(_TEXT),
        claim=draw(_TEXT),
        body_text=draw(_LONG),
        memory_type=draw(st.sampled_from(MEMORY_TYPES)),
        status=draw(st.sampled_from(MEMORY_STATUSES)),
        created_at=draw(_TEXT),
        updated_at=draw(_TEXT),
        event_at=draw(_optional(_TEXT)),
        confidence=draw(_optional(st.floats(allow_nan=False, allow_infinity=False))),
        importance=draw(_optional(st.integers(-(2**70), 2**70))),
        author=draw(_optional(_TEXT)),
        session_id=draw(_optional(_TEXT)),
        prompt_id=draw(_optional(_TEXT)),
        turn_uuid=draw(_optional(_TEXT)),
        valid_from=draw(_optional(_TEXT)),
        valid_until=draw(_optional(_TEXT)),
        reprieves=draw(_optional(st.integers(0, 9))),
        archived_at=draw(_optional(_TEXT)),
        superseded_by=draw(_optional(_TEXT)),
        needs_revision=draw(_optional(st.booleans())),
        task_status=draw(_optional(st.sampled_from(TASK_STATUSES))),
        due_at=draw(_optional(_TEXT)),
        stated_content_hash=draw(_optional(_TEXT)),
        source=draw(_optional(_TEXT)),
        source_sha256=draw(_optional(_TEXT)),
        source_links=draw(_optional(_TEXT)),
        source_shape=draw(_optional(_TEXT)),
        entities=draw(_tuple_of(st.sampled_from(["service:api", "person:ann", "tool:x"]))),
        tags=draw(_tuple_of(_TEXT)),
        aliases=draw(_tuple_of(_TEXT)),
        links=draw(_tuple_of(st.builds(Link, st.sampled_from(EDGE_RELS),
                                       st.sampled_from(PATHS + ["/x.html"])))),
        summary_texts=draw(_tuple_of(_TEXT)),
        aside_texts=draw(_tuple_of(_TEXT)),
        captions=draw(_tuple_of(_TEXT)),
        defined_terms=draw(_tuple_of(_TEXT)),
        code_langs=draw(_tuple_of(_TEXT)),
        abbreviations=draw(_tuple_of(_TEXT)),
        facets=draw(_tuple_of(st.builds(FacetValue, _TEXT, _TEXT, _optional(
            st.floats(allow_nan=False, allow_infinity=False))))),
        citations=draw(_tuple_of(st.builds(CitationValue, _TEXT, _optional(_TEXT)))),
        warnings=draw(_tuple_of(_TEXT)),
    )


@st.composite
def parsed_records(draw: st.DrawFn, path: str) -> MemoryRecord:
    """A record the parser made from a generated file, with a generated article."""
    inputs = draw(memory_inputs())
    if draw(st.booleans()):
        inputs = dataclasses.replace(inputs, body=(), article_html=draw(article_bodies()))
    parsed = record_from(render_template(inputs), path)
    assume(isinstance(parsed, Success))
    return parsed.unwrap()


def records_at(path: str) -> st.SearchStrategy[MemoryRecord]:
    return st.one_of(synthetic_records(path), parsed_records(path))


@st.composite
def versions(draw: st.DrawFn) -> HeadVersion:
    """A version built the way the head builds them: a bulk load, then single inserts and
    removals (as ``advance_head`` applies them), so holders are not always the least
    twin and the lexical index carries a delta over its base."""
    initial = [draw(records_at(path)) for path in draw(st.lists(st.sampled_from(PATHS)))]
    indexes: Indexes = build_indexes(initial)
    for _ in range(draw(st.integers(0, 6))):
        path = draw(st.sampled_from(PATHS))
        if draw(st.booleans()):
            indexes = insert_record(indexes, draw(records_at(path)))
        else:
            indexes = remove_record(indexes, path)
    skipped = draw(st.lists(st.builds(SkippedFile, _TEXT, _TEXT), max_size=2))
    return HeadVersion(indexes, SHA, None, tuple(skipped))


def _types(version: HeadVersion) -> list[list[type]]:
    return [[type(value) for value in row] for row in record_rows(version.records())]


def _through_a_file(version: HeadVersion) -> HeadVersion:
    with tempfile.TemporaryDirectory() as folder:
        path = ok(save_snapshot(Path(folder), version))
        return ok(read_snapshot(path)).version()


# --------------------------------------------------------------------------- the law


def test_every_record_field_has_a_kind() -> None:
    assert set(RECORD_KINDS) == set(RECORD_FIELDS)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(versions())
def test_a_snapshot_gives_back_the_version_saved(version: HeadVersion) -> None:
    back = _through_a_file(version)
    assert back == version
    assert fingerprint(back, QUERIES) == fingerprint(version, QUERIES)
    assert _types(back) == _types(version)
    assert dict(back.indexes.by_content_hash.items()) == \
        dict(version.indexes.by_content_hash.items())
    base = back.indexes.lexical.base
    for array in (base.lengths, base.doc_ids, base.tfs):
        assert not array.flags.writeable


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(versions(), st.sampled_from(["2026-01-01T00:00:00Z", "2030-06-01T00:00:00Z"]))
def test_a_restored_version_tallies_its_columns_as_the_records_say(
        version: HeadVersion, now: str) -> None:
    """Every field a restored version hands over as a column is the records' own, value
    and type, and ``status`` reads them without building a record."""
    back = _through_a_file(version)
    lazy: object = back.indexes.records
    assert isinstance(lazy, LazyMap)
    plain = [n for n in RECORD_FIELDS if lazy.column(n) is not None]
    assert set(plain) == {n for n in RECORD_FIELDS if RECORD_KINDS[n] != "text"}
    assert status_of(back, now) == status_of(version, now)
    columns = sorted(back.field_rows(plain), key=lambda row: str(row[0]))
    assert not lazy.built
    records = sorted(version.field_rows(plain), key=lambda row: str(row[0]))
    assert columns == records
    assert [[type(v) for v in row] for row in columns] == \
        [[type(v) for v in row] for row in records]


def test_holders_survive_even_when_they_are_not_the_least_twin() -> None:
    twin = memory("Twin", "Deploys happen on Tuesdays.")
    first = record_from(twin, "areas/b.html").unwrap()
    later = record_from(twin, "areas/a.html").unwrap()
    indexes = insert_record(insert_record(build_indexes([]), first), later)
    assert indexes.by_content_hash[first.content_hash] == "areas/b.html"
    back = _through_a_file(HeadVersion(indexes, SHA))
    assert back.by_content_hash(first.content_hash) == "areas/b.html"
    # Removing the holder leaves the hash unheld though a twin stays: kept as well.
    unheld = remove_record(indexes, "areas/b.html")
    assert first.content_hash not in unheld.by_content_hash
    back = _through_a_file(HeadVersion(unheld, SHA))
    assert back.get("areas/a.html") == later
    assert back.by_content_hash(first.content_hash) is None


def test_a_compacted_index_and_an_empty_one_round_trip() -> None:
    records = [record_from(memory(f"Note {i}", f"Deploy canary number {i}."),
                           f"areas/n{i:03d}.html").unwrap() for i in range(80)]
    indexes = build_indexes(records[:5])
    for record in records[5:]:
        indexes = insert_record(indexes, record)  # compacts past 64 added documents
    version = HeadVersion(indexes, SHA)
    assert _through_a_file(version) == version
    empty = HeadVersion(build_indexes([]), SHA)
    assert _through_a_file(empty) == empty


def test_a_record_the_codec_cannot_hold_is_not_snapshotted(tmp_path: Path) -> None:
    record = record_from(memory("A", "Alpha."), "areas/a.html").unwrap()
    bad = dataclasses.replace(record, confidence="high")  # type: ignore[arg-type]
    result = save_snapshot(tmp_path, HeadVersion(build_indexes([bad]), SHA))
    assert not is_successful(result)
    assert snapshot_files(tmp_path) == []


# --------------------------------------------------------------------------- checks


def _records(path: Path) -> list[npt.NDArray[Any]]:
    out = []
    with path.open("rb") as stream:
        while stream.peek(1):
            out.append(np.load(stream, allow_pickle=False))
    return out


def _rewrite(path: Path, header_edit: Callable[[dict[str, Any]], object] = lambda _: None,
             array_edit: Callable[[dict[str, npt.NDArray[Any]]], object] = lambda _: None,
             *, checksums: bool = True) -> None:
    """Rewrite a snapshot: edit its header and arrays, recomputing the checksums
    unless told not to."""
    header_array, *rest = _records(path)
    header = json.loads(header_array.tobytes())
    arrays = {name: array.copy() for (name, _, _), array in zip(header["arrays"], rest,
                                                                strict=True)}
    array_edit(arrays)
    if checksums:
        header["arrays"] = [[n, int(a.nbytes), zlib.crc32(np.ascontiguousarray(a).data)]
                            for n, a in arrays.items()]
    header_edit(header)
    stream = io.BytesIO()
    np.save(stream, np.frombuffer(json.dumps(header).encode(), dtype=np.uint8))
    for array in arrays.values():
        np.save(stream, array)
    path.write_bytes(stream.getvalue())


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    records = [record_from(memory(t, f"{t} deploys on Tuesday."), f"areas/{t}.html").unwrap()
               for t in ("alpha", "beta", "gamma")]
    return ok(save_snapshot(tmp_path, HeadVersion(build_indexes(records), SHA)))


def _refusal(path: Path) -> str:
    result = read_snapshot(path)
    assert not is_successful(result)
    from returns.unsafe import unsafe_perform_io

    error = unsafe_perform_io(result.failure())
    assert isinstance(error, SnapshotUnusable)
    return error.reason


def _flip_a_string_byte(path: Path) -> None:
    header_array, *_ = _records(path)
    data = bytearray(path.read_bytes())
    data[len(data) - 1] ^= 0x01  # inside the last array's payload
    path.write_bytes(bytes(data))
    assert header_array.size


def _flip_in(name: str) -> Callable[[Path], None]:
    """Flip one bit in the middle of the named array's payload, checksums left as
    they were: what a bad disk block does to a mapped array."""
    def flip(path: Path) -> None:
        header_array, *_ = _records(path)
        names = [entry[0] for entry in json.loads(header_array.tobytes())["arrays"]]
        with path.open("rb") as stream:
            np.load(stream, allow_pickle=False)  # the header
            for listed in names:
                np.lib.format.read_magic(stream)
                shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
                start = stream.tell()
                size = int(np.prod(shape)) * dtype.itemsize
                if listed == name:
                    break
                stream.seek(start + size)
        assert listed == name and size > 0
        data = bytearray(path.read_bytes())
        data[start + size // 2] ^= 0x04
        path.write_bytes(bytes(data))

    return flip


DAMAGE: dict[str, tuple[Callable[[Path], object], str]] = {
    "a flipped posting": (_flip_in("segment.doc_ids"), "checksum"),
    "a flipped frequency": (_flip_in("segment.tfs"), "checksum"),
    "postings in two dimensions": (lambda p: _rewrite(p, array_edit=lambda a: a.update(
        {"segment.doc_ids": a["segment.doc_ids"].reshape(1, -1)})), "plain numbers"),
    "postings as text": (lambda p: _rewrite(p, array_edit=lambda a: a.update(
        {"segment.tfs": a["segment.tfs"].astype("U2")})), "plain numbers"),
    "big-endian postings": (lambda p: _rewrite(p, array_edit=lambda a: a.update(
        {"segment.tfs": a["segment.tfs"].astype(">i4")})), "expected 1-d"),
    "garbage": (lambda p: p.write_bytes(b"not a snapshot"), "unreadable"),
    "empty": (lambda p: p.write_bytes(b""), "unreadable"),
    "cut in the header": (lambda p: p.write_bytes(p.read_bytes()[:100]), "unreadable"),
    "cut in an array": (lambda p: p.write_bytes(p.read_bytes()[:-5]), ""),
    "bytes after the end": (lambda p: p.write_bytes(p.read_bytes() + b"\x93NUMPY"),
                            "after the last array"),
    "a flipped bit": (_flip_a_string_byte, "checksum"),
    "another layout": (lambda p: _rewrite(p, lambda h: h.update(layout="x")), "layout"),
    "a newer format": (lambda p: _rewrite(p, lambda h: h.update(format=SNAPSHOT_FORMAT + 1)),
                       "newer format"),
    "an older format": (lambda p: _rewrite(p, lambda h: h.update(format=4)), "another format"),
    "another program's arrays": (lambda p: _rewrite(p, lambda h: h.update(magic="other")),
                                 "not a memhtml snapshot"),
    "a renamed file": (lambda p: _rewrite(p, lambda h: h.update(sha="f" * 40)),
                       "does not match the file name"),
    "an array missing": (lambda p: _rewrite(p, array_edit=lambda a: a.pop("holders.path")),
                         "does not decode"),
    "an index out of the table": (lambda p: _rewrite(p, array_edit=lambda a: a.update(
        {"record.title": np.full_like(a["record.title"], 10**6)})), "outside the table"),
    "a holder that cannot hold": (lambda p: _rewrite(p, array_edit=lambda a: a.update(
        {"holders.path": a["holders.path"][::-1].copy()})), "cannot hold"),
    "a hash held twice": (lambda p: _rewrite(p, array_edit=lambda a: a.update({
        name: np.concatenate([a[name], a[name][:1]])
        for name in ("holders.hash", "holders.path")})), "two holders"),
    "a wrong dtype": (lambda p: _rewrite(p, array_edit=lambda a: a.update(
        {"segment.tfs": a["segment.tfs"].astype(np.int64)})), "expected 1-d"),
    "a pickle": (lambda p: p.write_bytes(pickle.dumps({"layout": LAYOUT_KEY})), "unreadable"),
    "an object array": (lambda p: np.save(p.open("wb"), np.array([{}], dtype=object),
                                          allow_pickle=True), "unreadable"),
    "a zip of arrays": (lambda p: np.savez(p.open("wb"), x=np.zeros(3)), "not a memhtml"),
}


@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_a_snapshot_that_does_not_add_up_is_refused(saved: Path, damage: str) -> None:
    assert is_successful(read_snapshot(saved))
    harm, reason = DAMAGE[damage]
    harm(saved)
    assert reason in _refusal(saved)


def test_a_pickle_in_the_snapshot_folder_never_runs(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    ok(write(store, WriteInput(title="Alpha", claim="Alpha deploys.")))
    state = state_dir_of(store)
    sha = tip(store) or ""
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> tuple[Any, ...]:
            return (Path.touch, (marker,))

    for path in snapshot_files(state):
        path.unlink()  # so the cold start below must judge the pickle, then load in full
    snapshot_path(state, sha).write_bytes(pickle.dumps(Payload()))
    legacy = snapshot_dir(state) / f"{sha}.pickle"
    legacy.write_bytes(pickle.dumps(Payload()))
    version = ok(Store(store.deps).head())
    assert version.get("areas/inbox/alpha.html") is not None
    assert not marker.exists()
    # The bad file was replaced by a real snapshot, and the old pickle was removed.
    assert isinstance(ok(read_snapshot(snapshot_path(state, sha))), Snapshot)
    assert not legacy.exists()


def test_a_save_clears_what_dead_writers_left(tmp_path: Path) -> None:
    folder = snapshot_dir(tmp_path)
    folder.mkdir(parents=True)
    stale = folder / f".{SHA}.1.deadbeef.tmp"
    fresh = folder / f".{SHA}.2.cafef00d.tmp"
    for path in (stale, fresh):
        path.write_bytes(b"partial")
    old = time.time() - 7200
    os.utime(stale, (old, old))
    ok(save_snapshot(tmp_path, HeadVersion(build_indexes([]), SHA)))
    assert not stale.exists()
    assert fresh.exists(), "a writer may still be at work on a recent one"


def test_the_codec_refuses_arrays_it_did_not_write() -> None:
    version = HeadVersion(build_indexes([]), SHA)
    arrays = encode_version(version).unwrap()
    assert decode_version(arrays, SHA) == Success(version)
    assert all(array.dtype != object for array in arrays.values())
    broken = dict(arrays)
    broken["meta"] = np.frombuffer(b"[1, 2]", dtype=np.uint8)
    assert "not a JSON object" in decode_version(broken, SHA).failure().reason
