"""Chat exports' parsers: a ChatGPT conversation is the branch its current node ends,
in order, whatever else the tree holds; ids are safe session stems; a duplicate id is
taken once."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.agent.chat_exports import Export, read_export, safe_id, transcript_of
from memhtml.sleep.phases.trace_sessions import parse_transcript


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=1, max_size=25), st.data())
def test_a_chatgpt_conversation_is_the_branch_its_current_node_ends(
        parents_seed: list[int], data: st.DataObject) -> None:
    # A random tree: node i's parent is one of the nodes before it.
    mapping: dict[str, object] = {"n0": {"id": "n0", "parent": None, "message": None}}
    for i, seed in enumerate(parents_seed, start=1):
        mapping[f"n{i}"] = {"id": f"n{i}", "parent": f"n{seed % i}", "message": {
            "author": {"role": "user" if i % 2 else "assistant"},
            "content": {"parts": [f"turn {i}"]}}}
    current = data.draw(st.integers(0, len(parents_seed)))
    chain: list[str] = []
    node: object = f"n{current}"
    while isinstance(node, str):
        chain.append(node)
        entry = mapping[node]
        assert isinstance(entry, dict)
        node = entry["parent"]
    expected = [f"turn {n[1:]}" for n in reversed(chain) if n != "n0"]
    export = read_export(json.dumps([{"title": "t", "id": "a/b:c", "current_node":
                                      f"n{current}", "mapping": mapping}]).encode(), "chatgpt")
    assert isinstance(export, Export)
    (talk,) = export.conversations
    assert [t.text for t in talk.turns] == expected
    assert re.fullmatch(r"[A-Za-z0-9_-]+", talk.id)
    parsed = parse_transcript(transcript_of(talk))
    assert [t.text for t in parsed.turns] == expected and parsed.closed


@given(st.text(max_size=200))
def test_any_id_becomes_a_safe_stem(value: str) -> None:
    stem = safe_id(value)
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,100}", stem)


def test_a_duplicate_id_is_taken_once() -> None:
    one = {"uuid": "u1", "name": "a", "chat_messages": [{"sender": "human", "text": "hi"}]}
    export = read_export(json.dumps([one, {**one, "name": "b"}]).encode(), "claude")
    assert isinstance(export, Export) and export.duplicates == 1
    assert [c.title for c in export.conversations] == ["a"]
