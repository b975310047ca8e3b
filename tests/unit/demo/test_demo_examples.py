"""The shipped demo example set: its schema, its coverage, and that every entry is a
valid memory file once it goes through the write template.

The demo builds a store from ``memhtml/demo/examples.json``, so a broken entry would
show up as a failed first command for a new user. These tests read the file the way
the package ships it and push each entry through ``render_template`` and
``parse_memory``, the same path a write door takes.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from importlib.resources import files
from typing import Any

import pytest
from returns.result import Success

from memhtml.contracts.record import Link
from memhtml.contracts.vocabulary import (
    EDGE_RELS,
    MEMORY_TYPES,
    is_edge_rel,
    is_memory_type,
    is_task_status,
)
from memhtml.format import (
    MemoryDoc,
    NewMemoryInput,
    block_tag_in_run,
    fenced_block_of,
    is_root_relative_href,
    is_valid_datetime,
    parse_memory,
    render_template,
)

Entry = dict[str, Any]

TODAY = "2026-11-29"
"""The demo's notional today: tasks due before it and not done are overdue."""

REQUIRED = frozenset({"key", "title", "claim", "type", "directory", "entities", "tags", "at"})
OPTIONAL = frozenset(
    {
        "body",
        "article_html",
        "aliases",
        "links",
        "confidence",
        "importance",
        "due",
        "task_status",
        "corrects",
        "near_duplicate_of",
    }
)
OPEN_TASK_STATUSES = frozenset({"todo", "doing", "blocked"})
PEOPLE_DIR = "resources/people/"

KEY = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
DIRECTORY = re.compile(r"(?:areas|resources)/[a-z0-9]+(?:-[a-z0-9]+)*/")
ENTITY = re.compile(r"[a-z]+:[a-z0-9][a-z0-9._-]*")
TAG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
INSTANT = re.compile(r"2026-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
DATE = re.compile(r"2026-[0-9]{2}-[0-9]{2}")
SENTENCE_END = re.compile(r"[.!?](?:\s|$)")


def load_examples() -> list[Entry]:
    """The example set as the installed package carries it."""
    text = files("memhtml.demo").joinpath("examples.json").read_text(encoding="utf-8")
    data = json.loads(text)
    assert isinstance(data, list)
    entries: list[Entry] = []
    for item in data:
        assert isinstance(item, dict)
        entries.append(item)
    return entries


EXAMPLES = load_examples()
BY_KEY: dict[str, Entry] = {e["key"]: e for e in EXAMPLES}


def href_of(key: str) -> str:
    """The root-relative path a memory with this key is written to."""
    directory = BY_KEY[key]["directory"]
    assert isinstance(directory, str)
    return "/" + directory + key + ".html"


def links_of(entry: Entry) -> list[dict[str, str]]:
    links = entry.get("links", [])
    assert isinstance(links, list)
    return links


def body_of(entry: Entry) -> list[str]:
    body = entry.get("body", [])
    assert isinstance(body, list)
    return body


def resolved_links(entry: Entry) -> tuple[Link, ...]:
    """The entry's links as head edges, each target named by its path."""
    links: list[Link] = []
    for link in links_of(entry):
        rel = link["rel"]
        assert is_edge_rel(rel)
        links.append(Link(rel, href_of(link["to"])))
    return tuple(links)


def new_memory_input(entry: Entry) -> NewMemoryInput:
    """The write-door input for an entry, links resolved to their targets' paths."""
    memory_type = entry["type"]
    assert is_memory_type(memory_type)
    status = entry.get("task_status")
    if status is not None:
        assert is_task_status(status)
    return NewMemoryInput(
        title=entry["title"],
        claim=entry["claim"],
        memory_type=memory_type,
        at=entry["at"],
        body=tuple(body_of(entry)),
        article_html=entry.get("article_html"),
        entities=tuple(entry["entities"]),
        tags=tuple(entry["tags"]),
        aliases=tuple(entry.get("aliases", [])),
        links=resolved_links(entry),
        confidence=entry.get("confidence"),
        importance=entry.get("importance"),
        task_status=status,
        due_at=entry.get("due"),
    )


def rendered(entry: Entry) -> MemoryDoc:
    """The entry written through the template and read back; fails the test if refused."""
    path = href_of(entry["key"])[1:]
    result = parse_memory(render_template(new_memory_input(entry)), path)
    if not isinstance(result, Success):
        pytest.fail(f"{path} was refused: {result}")
    doc = result.unwrap()
    assert isinstance(doc, MemoryDoc)
    return doc


# ---------------------------------------------------------------- schema, per entry


@pytest.mark.parametrize("entry", EXAMPLES, ids=[e["key"] for e in EXAMPLES])
def test_entry_schema(entry: Entry) -> None:
    fields = set(entry)
    assert fields >= REQUIRED, f"missing {sorted(REQUIRED - fields)}"
    assert fields <= REQUIRED | OPTIONAL, f"unknown {sorted(fields - REQUIRED - OPTIONAL)}"
    assert KEY.fullmatch(entry["key"])
    assert DIRECTORY.fullmatch(entry["directory"])
    assert is_memory_type(entry["type"])
    assert isinstance(entry["title"], str)
    assert entry["title"].strip()
    assert INSTANT.fullmatch(entry["at"])
    assert is_valid_datetime(entry["at"])
    assert entry["at"] < TODAY
    assert entry["entities"], "every example names at least one entity"
    assert all(ENTITY.fullmatch(e) for e in entry["entities"]), entry["entities"]
    assert len(set(entry["entities"])) == len(entry["entities"])
    assert entry["tags"], "every example carries at least one tag"
    assert all(TAG.fullmatch(t) for t in entry["tags"]), entry["tags"]
    assert len(set(entry["tags"])) == len(entry["tags"])
    if "confidence" in entry:
        assert isinstance(entry["confidence"], int | float)
        assert 0.0 <= entry["confidence"] <= 1.0
    if "importance" in entry:
        assert isinstance(entry["importance"], int)
        assert 1 <= entry["importance"] <= 10
    if "aliases" in entry:
        assert entry["directory"] == PEOPLE_DIR, "aliases belong on person files"
        assert entry["aliases"]
        assert all(isinstance(a, str) and a.strip() for a in entry["aliases"])


@pytest.mark.parametrize("entry", EXAMPLES, ids=[e["key"] for e in EXAMPLES])
def test_claim_is_one_sentence(entry: Entry) -> None:
    claim = entry["claim"]
    assert claim == claim.strip()
    assert claim.endswith(".")
    assert len(SENTENCE_END.findall(claim)) == 1, claim
    assert block_tag_in_run(claim) is None


@pytest.mark.parametrize("entry", EXAMPLES, ids=[e["key"] for e in EXAMPLES])
def test_body_is_prose_or_whole_fences(entry: Entry) -> None:
    if "article_html" in entry:
        assert "body" not in entry, "article_html replaces the claim and body"
        return
    for paragraph in body_of(entry):
        assert isinstance(paragraph, str)
        assert paragraph.strip()
        if fenced_block_of(paragraph) is None:
            assert "```" not in paragraph, "a fence must be a whole paragraph"
            assert block_tag_in_run(paragraph) is None, paragraph


@pytest.mark.parametrize("entry", EXAMPLES, ids=[e["key"] for e in EXAMPLES])
def test_task_fields(entry: Entry) -> None:
    if entry["type"] == "task":
        assert entry["directory"] == "areas/tasks/"
        assert DATE.fullmatch(entry["due"])
        assert is_valid_datetime(entry["due"])
        assert entry["task_status"] in OPEN_TASK_STATUSES
    else:
        assert "due" not in entry
        assert "task_status" not in entry


@pytest.mark.parametrize("entry", EXAMPLES, ids=[e["key"] for e in EXAMPLES])
def test_links_resolve_to_earlier_writes(entry: Entry) -> None:
    """Every target exists and was written first, so loading the set in ``at`` order
    never leaves a dangling href in any commit."""
    seen: set[tuple[str, str]] = set()
    for link in links_of(entry):
        assert set(link) == {"rel", "to"}
        assert is_edge_rel(link["rel"]), link
        assert link["to"] in BY_KEY, f"unknown link target {link['to']}"
        assert link["to"] != entry["key"]
        assert BY_KEY[link["to"]]["at"] < entry["at"], link
        assert is_root_relative_href(href_of(link["to"]))
        pair = (link["rel"], link["to"])
        assert pair not in seen, f"duplicate link {pair}"
        seen.add(pair)
    for field in ("corrects", "near_duplicate_of"):
        if field in entry:
            target = BY_KEY[entry[field]]
            assert target["key"] != entry["key"]
            assert target["at"] < entry["at"]
            assert target["type"] == entry["type"]
            assert set(target["entities"]) & set(entry["entities"])
            assert target["claim"] != entry["claim"]


# ---------------------------------------------------------------- the write path


@pytest.mark.parametrize("entry", EXAMPLES, ids=[e["key"] for e in EXAMPLES])
def test_renders_and_parses_back(entry: Entry) -> None:
    doc = rendered(entry)
    assert doc.title == entry["title"]
    assert doc.article.gist == entry["claim"]
    assert doc.metas.memory_type == entry["type"]
    assert doc.metas.status == "active"
    assert doc.metas.created_at == entry["at"]
    assert doc.metas.updated_at == entry["at"]
    assert doc.entities == tuple(entry["entities"])
    assert doc.tags == tuple(entry["tags"])
    assert doc.aliases == tuple(entry.get("aliases", []))
    assert doc.links == resolved_links(entry)
    assert doc.metas.importance == entry.get("importance")
    if "confidence" in entry:
        assert doc.metas.confidence == pytest.approx(entry["confidence"])
    assert doc.metas.task_status == entry.get("task_status")
    assert doc.metas.due_at == entry.get("due")
    assert doc.warnings == ()
    assert doc.article.html.startswith("<p><mark>")
    assert doc.article.html.count("<mark>") == 1


def test_article_html_entries_keep_their_structure() -> None:
    docs = {e["key"]: rendered(e) for e in EXAMPLES if "article_html" in e}
    assert any(
        sum(1 for f in d.article.facets if f.numeric_value is not None) >= 2 for d in docs.values()
    ), "one article_html entry carries <dl> facets with <data value>"
    assert any(d.article.summary_texts for d in docs.values()), "one carries <details><summary>"
    for key, doc in docs.items():
        raw = BY_KEY[key]["article_html"]
        assert raw.count("<mark") == 1, key
        assert raw.startswith("<p><mark>"), key
        assert doc.article.gist == BY_KEY[key]["claim"]


# ---------------------------------------------------------------- coverage, whole set


def test_set_size_and_unique_paths() -> None:
    assert len(EXAMPLES) >= 44
    assert len(BY_KEY) == len(EXAMPLES), "keys are unique"
    paths = [href_of(e["key"]) for e in EXAMPLES]
    assert len(set(paths)) == len(paths)


def test_every_memory_type_is_present() -> None:
    assert {e["type"] for e in EXAMPLES} == set(MEMORY_TYPES)


def test_link_rels_are_varied() -> None:
    rels = {lk["rel"] for e in EXAMPLES for lk in links_of(e)}
    assert rels <= set(EDGE_RELS)
    assert len(rels) >= 8, sorted(rels)


def test_entities_are_shared() -> None:
    counts = Counter(ent for e in EXAMPLES for ent in e["entities"])
    shared = [ent for ent, n in counts.items() if n >= 3]
    assert len(shared) >= 8, shared
    kinds = {ent.split(":", 1)[0] for ent in counts}
    assert {"service", "person", "tool"} <= kinds


def test_tags_are_shared() -> None:
    counts = Counter(tag for e in EXAMPLES for tag in e["tags"])
    assert sum(1 for n in counts.values() if n >= 3) >= 8


def test_people() -> None:
    people = [e for e in EXAMPLES if e["directory"] == PEOPLE_DIR]
    assert len(people) >= 3
    for person in people:
        assert person["type"] == "semantic"
        assert f"person:{person['key']}" in person["entities"]
    assert any(p.get("aliases") for p in people)
    mentioned = {ent for e in EXAMPLES for ent in e["entities"] if ent.startswith("person:")}
    assert {f"person:{p['key']}" for p in people} <= mentioned
    about = {lk["to"] for e in EXAMPLES for lk in links_of(e) if lk["rel"] == "about_person"}
    assert about <= {p["key"] for p in people}, "about_person points at person files"


def test_tasks() -> None:
    tasks = [e for e in EXAMPLES if e["type"] == "task"]
    assert len(tasks) >= 5
    assert {t["task_status"] for t in tasks} == OPEN_TASK_STATUSES
    overdue = [t for t in tasks if t["due"] < TODAY]
    assert overdue
    assert len(overdue) < len(tasks), "some tasks are still on time"


def test_near_duplicate_pair() -> None:
    flagged = [e for e in EXAMPLES if "near_duplicate_of" in e]
    assert len(flagged) == 1
    other = BY_KEY[flagged[0]["near_duplicate_of"]]
    assert "near_duplicate_of" not in other


def test_correction() -> None:
    corrections = [e for e in EXAMPLES if "corrects" in e]
    assert corrections
    corrected = {e["corrects"] for e in corrections}
    assert not corrected & {e["key"] for e in corrections}, "no chains of corrections"


def test_fenced_code_languages() -> None:
    langs: Counter[str | None] = Counter()
    for entry in EXAMPLES:
        for paragraph in body_of(entry):
            block = fenced_block_of(paragraph)
            if block is not None:
                langs[block.lang] += 1
    assert {"bash", "sql", "python"} <= set(langs)
    assert langs[None] >= 1, "one fence has no info string"


def test_confidence_and_importance_are_used() -> None:
    assert sum(1 for e in EXAMPLES if "confidence" in e) >= 3
    assert sum(1 for e in EXAMPLES if "importance" in e) >= 3


def test_multibyte_prose() -> None:
    prose = [p for e in EXAMPLES for p in body_of(e) if fenced_block_of(p) is None]
    assert any(any(ord(ch) > 0x7F for ch in p) for p in prose)
    assert any(any(0x3040 <= ord(ch) <= 0x9FFF for ch in p) for p in prose), "CJK text"
