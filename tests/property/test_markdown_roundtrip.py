"""A store written out as markdown and read back in is the same store.

Two laws. The escaping law is the export's own: any plain text, written as a
markdown paragraph, reads back through a CommonMark parser as the very characters a
reader of the memory sees (nothing turns into emphasis, a link, a heading or a list).
The round-trip law spans both directions: for a generated store (a few memories with
printable claims, every type, their own write and update instants, tags, and
``relates_to`` edges between them), ``import markdown`` of the export, into a fresh
store, gives the same claims, types, dates, tags and edges.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from returns.io import IOResult

from memhtml.adapters.clock import FixedClock
from memhtml.cli.app import app
from memhtml.contracts.paths import to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.vocabulary import MEMORY_TYPES
from memhtml.format.fences import fenced_block_of
from memhtml.format.hash import collapse_ascii_whitespace
from memhtml.head.record import record_from
from memhtml.store import Store, WriteInput, link, write
from memhtml.store.markdown_export import escape_text, export_markdown
from tests.integration.store.store_support import make_memory_store, ok

_ASCII_WS = " \t\n\r\f"

_PRINTABLE = st.one_of(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
    st.sampled_from(["*", "_", "`", "[", "]", "(", ")", "<", ">", "&", "&amp;", "#", "|",
                     "~", "!", "\\", "-", "+", "=", "1.", "2)", "<b>", "[[x]]", "**",
                     "\u00a0", "\u3000", "\ufffe", " ", "\t", "\n", "---", "    "]),
)
"""Printable text with every character markdown gives a meaning to, and the
whitespace a reader keeps (no-break and ideographic spaces) beside what collapses."""

texts = st.lists(_PRINTABLE, min_size=1, max_size=40).map("".join).filter(
    lambda text: text.strip(_ASCII_WS) != "" and fenced_block_of(text.strip(_ASCII_WS)) is None)

_PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def shown(text: str) -> str:
    """What a reader sees of ``text``: ASCII whitespace runs as one space, ends trimmed."""
    return collapse_ascii_whitespace(text).strip(" ")


def read_back(markdown: str) -> tuple[list[str], str]:
    """The block token types a CommonMark parser makes of ``markdown`` and the text of
    its inline content; any inline markup token is named in the text, so it shows."""
    tokens = _PARSER.parse(markdown)
    kinds = [token.type for token in tokens]
    parts: list[str] = []
    for token in tokens:
        for child in token.children or ():
            if child.type == "text":
                parts.append(child.content)
            elif child.type == "softbreak":
                parts.append("\n")
            else:
                parts.append(f"<{child.type}>")
    return kinds, "".join(parts)


@given(texts)
def test_escaped_text_reads_back_as_the_same_characters(text: str) -> None:
    kinds, read = read_back(escape_text(shown(text)))
    assert kinds == ["paragraph_open", "inline", "paragraph_close"]
    assert read == shown(text)


# -- the round trip through import ------------------------------------------------------

START = datetime(2024, 1, 1, tzinfo=UTC)
IMPORTED_TAG = "imported"
"""The tag ``import markdown`` gives every memory unless told otherwise."""

tag_words = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True).filter(
    lambda tag: tag != IMPORTED_TAG)


@dataclasses.dataclass(frozen=True)
class Planned:
    claim: str
    memory_type: str
    created: int
    """Seconds after ``START``."""
    tags: tuple[str, ...]


@st.composite
def stores(draw: st.DrawFn) -> tuple[list[Planned], list[tuple[int, int]], int]:
    """A few memories with distinct claims, and edges between them, and when the
    edges are added (which stamps the linking memory's update time)."""
    claims = draw(st.lists(texts, min_size=1, max_size=4,
                           unique_by=lambda text: shown(text).casefold()))
    planned = [Planned(claim, draw(st.sampled_from(MEMORY_TYPES)),
                       draw(st.integers(0, 10**8)),
                       tuple(draw(st.lists(tag_words, max_size=3, unique=True))))
               for claim in claims]
    pairs = [(a, b) for a in range(len(planned)) for b in range(len(planned)) if a != b]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=4)) if pairs else []
    later = draw(st.integers(10**8 + 1, 2 * 10**8))
    return planned, edges, later


def _at(store: Store, seconds: int) -> Store:
    clock = FixedClock(START + timedelta(seconds=seconds))
    return Store(dataclasses.replace(store.deps, clock=clock))


def build(planned: list[Planned], edges: list[tuple[int, int]], later: int
          ) -> list[MemoryRecord]:
    store, _ = make_memory_store()
    paths: list[str] = []
    for index, memory in enumerate(planned):
        landed = ok(write(_at(store, memory.created), WriteInput(
            title=f"Memory {index}", claim=memory.claim,
            memory_type=memory.memory_type,  # type: ignore[arg-type]
            tags=memory.tags, directory="areas/generated/")))
        paths.append(landed.paths[0])
    for source, target in edges:
        ok(link(_at(store, later), paths[source], "relates_to", "/" + paths[target]))
    return list(ok(store.head()).records())


def run(*tokens: str) -> tuple[int, Any]:
    """One command line in-process, its JSON answer read from its stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = app(list(tokens), result_action="return_value")
    text = out.getvalue()
    return code, json.loads(text) if text.strip() else None


def imported(tmp: Path, files: dict[str, str]) -> list[MemoryRecord]:
    """The export's files written to ``tmp/md``, imported into a fresh store by the
    command line; the memories it committed."""
    source, target = tmp / "md", tmp / "store"
    for rel, text in files.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(text, encoding="utf-8")
    code, answer = run("init", str(target), "--json")
    assert code == 0, answer
    code, answer = run("import", "markdown", str(source), "--store", str(target), "--json")
    assert code == 0, answer
    records = []
    for path in sorted(target.rglob("*.html")):
        rel = path.relative_to(target).as_posix()
        if not rel.startswith("."):
            records.append(ok(IOResult.from_result(
                record_from(path.read_text(encoding="utf-8"), rel))))
    return records


def edges_by_claim(records: list[MemoryRecord]) -> set[tuple[str, str, str]]:
    claim_at = {r.path: r.claim for r in records}
    return {(r.claim, edge.rel, claim_at.get(to_tree_path(edge.href), edge.href))
            for r in records for edge in r.links}


@settings(max_examples=15, deadline=None)
@given(stores())
def test_import_of_export_is_the_same_store(
        tmp_path_factory: pytest.TempPathFactory,
        drawn: tuple[list[Planned], list[tuple[int, int]], int]) -> None:
    planned, edges, later = drawn
    before = build(planned, edges, later)
    after = imported(tmp_path_factory.mktemp("roundtrip"), export_markdown(before).files)
    assert sorted(r.claim for r in after) == sorted(r.claim for r in before)
    by_claim = {r.claim: r for r in after}
    for old in before:
        new = by_claim[old.claim]
        assert new.memory_type == old.memory_type, old.claim
        assert (new.created_at, new.updated_at) == (old.created_at, old.updated_at)
        assert set(new.tags) - {IMPORTED_TAG} == set(old.tags)
    assert edges_by_claim(after) == edges_by_claim(before)
