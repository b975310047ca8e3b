"""A store written out as markdown and read back in is the same store.

Two laws. The escaping law is the export's own: any plain text, written as a
markdown paragraph, reads back through a CommonMark parser as the very characters a
reader of the memory sees (nothing turns into emphasis, a link, a heading or a list).
The store-first law: for a generated store (a few memories with printable claims,
every type, their own write and update instants, tags, entities, aliases,
importance, confidence, tasks in every open state with due dates, articles holding
facets, an event time, asides, folds and captioned code, edges of several rels
between them, and a correction, so a ``supersedes`` edge to an archived memory),
``import markdown`` of the export, into a fresh store, gives the same records, paths
and provenance aside (``markdown_support.store_difference``). The notes-first law is
``test_markdown_notes_roundtrip``.
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
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.vocabulary import MEMORY_TYPES
from memhtml.format.fences import fenced_block_of
from memhtml.format.hash import collapse_ascii_whitespace
from memhtml.head.record import record_from
from memhtml.store import Store, WriteInput, correct, link, write
from memhtml.store.markdown_export import escape_text, export_markdown
from tests.integration.store.store_support import make_memory_store, ok
from tests.property.markdown_support import store_difference

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
entity_names = st.from_regex(r"(person|service|tool):[a-z][a-z0-9-]{0,8}", fullmatch=True)
ARTICLES = (
    None,
    "<p><mark>{claim}</mark> Set on <time datetime=\"2026-03-02\">2 March</time>.</p>"
    "<dl><dt>error rate</dt><dd><data value=\"0.5\">0.5% of requests</data></dd></dl>"
    "<aside>Not a <cite>bad</cite> build.</aside>",
    "<p><mark>{claim}</mark></p><ol start=\"2\"><li>one</li><li>two <kbd>q</kbd></li></ol>"
    "<details><summary>Why</summary><p>Because <abbr title=\"on call\">OC</abbr>.</p></details>"
    "<figure><pre><code data-lang=\"bash\">make\n\nmake again</code></pre>"
    "<figcaption>The build</figcaption></figure>",
)
"""Article bodies beyond the template's: event time, facets with numbers, an aside, a
citation, numbering from 2, a keyboard key, a fold, an abbreviation, a captioned
figure whose code holds a blank line."""


@dataclasses.dataclass(frozen=True)
class Planned:
    claim: str
    memory_type: str
    created: int
    """Seconds after ``START``."""
    tags: tuple[str, ...]
    entities: tuple[str, ...]
    importance: int | None
    confidence: float | None
    task_status: str | None
    due: str | None
    aliases: tuple[str, ...]
    article: str | None


@st.composite
def planned_memories(draw: st.DrawFn, claim: str) -> Planned:
    memory_type = draw(st.sampled_from(MEMORY_TYPES))
    task = memory_type == "task"
    return Planned(
        claim, memory_type, draw(st.integers(0, 10**8)),
        tuple(draw(st.lists(tag_words, max_size=3, unique=True))),
        tuple(draw(st.lists(entity_names, max_size=2, unique=True))),
        draw(st.none() | st.integers(1, 10)),
        draw(st.none() | st.sampled_from((0.5, 0.75, 0.9, 1.0))),
        draw(st.sampled_from(("todo", "doing", "blocked"))) if task else None,
        draw(st.none() | st.sampled_from(("2026-11-25", "2026-12-05T09:00:00Z"))) if task
        else None,
        tuple(draw(st.lists(st.sampled_from(("alias one", "IM")), max_size=1))),
        draw(st.sampled_from(ARTICLES)))


@st.composite
def stores(draw: st.DrawFn) -> tuple[list[Planned], list[tuple[int, int, str]], int, bool]:
    """A few memories with distinct claims and every field a memory can carry; edges
    between them; when the edges are added (which stamps the linking memory's update
    time); and whether the first is corrected (its old version archived, so the new
    one ``supersedes`` a memory the export does not write)."""
    claims = draw(st.lists(texts.filter(lambda text: shown(text).strip() != ""), min_size=1,
                           max_size=4, unique_by=lambda text: shown(text).casefold()))
    planned = [draw(planned_memories(claim)) for claim in claims]
    pairs = [(a, b) for a in range(len(planned)) for b in range(len(planned)) if a != b]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=4)) if pairs else []
    rels = [draw(st.sampled_from(("relates_to", "part_of", "blocks", "supports")))
            for _ in edges]
    later = draw(st.integers(10**8 + 1, 2 * 10**8))
    return planned, [(a, b, rel) for (a, b), rel in zip(edges, rels, strict=True)], later, \
        draw(st.booleans())


def _at(store: Store, seconds: int) -> Store:
    clock = FixedClock(START + timedelta(seconds=seconds))
    return Store(dataclasses.replace(store.deps, clock=clock))


def build(planned: list[Planned], edges: list[tuple[int, int, str]], later: int,
          corrected: bool) -> list[MemoryRecord]:
    store, _ = make_memory_store()
    paths: list[str] = []
    for index, memory in enumerate(planned):
        article = None if memory.article is None or not _markup_safe(memory.claim) else \
            memory.article.format(claim=html_escape(shown(memory.claim)))
        landed = ok(write(_at(store, memory.created), WriteInput(
            title=f"Memory {index}", claim=memory.claim,
            memory_type=memory.memory_type,  # type: ignore[arg-type]
            tags=memory.tags, entities=memory.entities, importance=memory.importance,
            confidence=memory.confidence, aliases=memory.aliases,
            task_status=memory.task_status,  # type: ignore[arg-type]
            due_at=memory.due, article_html=article, directory="areas/generated/")))
        paths.append(landed.paths[0])
    for source, target, rel in edges:
        ok(link(_at(store, later), paths[source], rel, "/" + paths[target]))
    if corrected and _markup_safe(planned[0].claim):
        ok(correct(_at(store, later + 1), paths[0], WriteInput(
            title="Memory 0", claim=shown(planned[0].claim) + " Still so.")))
    return [r for r in ok(store.head()).records() if not r.archived]


def _markup_safe(claim: str) -> bool:
    """A claim an article fragment can hold as written: visible, and no character an
    XML tree refuses (the template path takes the others)."""
    return bool(shown(claim).strip()) and all(
        ch in "\t\n\r" or (0x20 <= ord(ch) < 0xFFFE and not 0xD800 <= ord(ch) < 0xE000)
        for ch in claim)


def html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


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
    assert code == 0 and not answer["skipped"] and not answer["unresolved"], answer
    records = []
    for path in sorted(target.rglob("*.html")):
        rel = path.relative_to(target).as_posix()
        if not rel.startswith("."):
            records.append(ok(IOResult.from_result(
                record_from(path.read_text(encoding="utf-8"), rel))))
    return records


@settings(max_examples=15, deadline=None)
@given(stores())
def test_import_of_export_is_the_same_store(
        tmp_path_factory: pytest.TempPathFactory,
        drawn: tuple[list[Planned], list[tuple[int, int, str]], int, bool]) -> None:
    """Every field of every memory comes back (paths and provenance aside): claims,
    types, stamps, importance, confidence, entities, task status and due date, the
    article's facets, event time, asides, folds, captions and text, and every edge,
    a ``supersedes`` to the archived version among them."""
    before = build(*drawn)
    after = imported(tmp_path_factory.mktemp("roundtrip"), export_markdown(before).files)
    assert store_difference(before, after, (IMPORTED_TAG,)) == []
