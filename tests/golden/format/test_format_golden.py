"""Golden files for the memory format: each file on disk beside its expected extraction.

``valid/`` holds hand-written memories (some canonical, some hand-formatted) with the
``MemoryDoc`` they must parse to; ``invalid/`` holds files that are not memories with
the exact violation list the checker must report. ``regen.py`` rewrites the JSON from
the current code; a regenerated diff is reviewed by eye before it is kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path

import pytest
from returns.result import Failure, Success

from memhtml.contracts.vocabulary import EDGE_RELS, MEMORY_TYPES
from memhtml.format import (
    ARTICLE_ELEMENTS,
    PERSON_ELEMENTS,
    check_memory,
    content_hash,
    parse_memory,
    serialize_memory,
)

HERE = Path(__file__).resolve().parent
VALID_FILES = sorted((HERE / "valid").glob("*.html"))
INVALID_FILES = sorted((HERE / "invalid").glob("*.html"))


def _json_ready(value: object) -> object:
    """Tuples become lists and floats stay floats, as they do in the stored JSON."""
    loaded: object = json.loads(json.dumps(value, ensure_ascii=False))
    return loaded


def _expected(path: Path) -> dict[str, object]:
    loaded = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_there_are_enough_golden_files() -> None:
    assert len(VALID_FILES) >= 30
    assert len(INVALID_FILES) >= 30
    for path in VALID_FILES + INVALID_FILES:
        assert path.with_suffix(".json").is_file(), f"{path.name} has no expected JSON"


def test_valid_files_cover_the_vocabulary() -> None:
    texts = [path.read_text(encoding="utf-8").lower() for path in VALID_FILES]
    corpus = "\n".join(texts)
    for tag in ARTICLE_ELEMENTS + PERSON_ELEMENTS:
        assert re.search(rf"<{tag}[\s>]", corpus), f"no valid file uses <{tag}>"
    types: set[object] = set()
    for path in VALID_FILES:
        metas = _expected(path)["metas"]
        assert isinstance(metas, dict)
        types.add(metas["memory_type"])
    assert types == set(MEMORY_TYPES)
    spelled = set(re.findall(r'rel="\s*memhtml-([a-z_-]+)\s*"', corpus))
    for rel in EDGE_RELS:
        assert rel.replace("_", "-") in spelled, f"memhtml-{rel} never spelled with hyphens"
        assert rel in spelled, f"memhtml-{rel} never spelled with underscores"


@pytest.mark.parametrize("path", VALID_FILES, ids=lambda p: p.stem)
def test_valid_file_parses_to_its_golden_doc(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expected = _expected(path)
    expected_hash = expected.pop("content_hash")
    expected.pop("serialized_sha256")
    match parse_memory(text, path.name):
        case Success(doc):
            assert _json_ready(dataclasses.asdict(doc)) == expected
        case Failure(err):
            pytest.fail(f"{path.name} was refused: {err.violations}")
        case _:
            raise AssertionError("unreachable")
    assert content_hash(text) == expected_hash


@pytest.mark.parametrize("path", VALID_FILES, ids=lambda p: p.stem)
def test_valid_file_serializes_to_its_golden_bytes(path: Path) -> None:
    expected = _expected(path)
    doc = parse_memory(path.read_text(encoding="utf-8")).unwrap()
    written = serialize_memory(doc)
    assert hashlib.sha256(written.encode("utf-8")).hexdigest() == expected["serialized_sha256"]
    # The hash is a property of the article alone, so the rewrite must not move it.
    assert content_hash(written) == expected["content_hash"]


@pytest.mark.parametrize("path", VALID_FILES, ids=lambda p: p.stem)
def test_valid_file_round_trips(path: Path) -> None:
    doc = parse_memory(path.read_text(encoding="utf-8")).unwrap()
    written = serialize_memory(doc)
    assert parse_memory(written) == Success(doc)


@pytest.mark.parametrize("path", VALID_FILES, ids=lambda p: p.stem)
def test_serialization_is_a_fixed_point(path: Path) -> None:
    doc = parse_memory(path.read_text(encoding="utf-8")).unwrap()
    written = serialize_memory(doc)
    again = serialize_memory(parse_memory(written).unwrap())
    assert again == written


@pytest.mark.parametrize("path", INVALID_FILES, ids=lambda p: p.stem)
def test_invalid_file_reports_its_golden_violations(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expected = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    assert isinstance(expected, list)
    assert expected, f"{path.name} must expect at least one violation"
    assert list(check_memory(text).violations) == expected
    match parse_memory(text, path.name):
        case Failure(err):
            assert list(err.violations) == expected
            assert err.path == path.name
        case Success(doc):
            pytest.fail(f"{path.name} parsed although it is invalid: {doc.title!r}")
        case _:
            raise AssertionError("unreachable")
