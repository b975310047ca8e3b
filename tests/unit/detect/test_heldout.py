"""Fence-language detection on the held-out set, and prose that must never be stamped.

tests/data/langdetect/heldout.jsonl was written after the scorer was frozen and
was never used to tune it, so it is the set the deployed threshold answers to
(see ``python -m bench.langdetect`` and the detection section of docs/design.md).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memhtml.detect import CANONICAL_LANGS, DEPLOY_THRESHOLD, Detection, detect, detect_lang

HELDOUT = Path(__file__).resolve().parents[2] / "data" / "langdetect" / "heldout.jsonl"


@cache
def _heldout() -> dict[str, tuple[str | None, str]]:
    rows: dict[str, tuple[str | None, str]] = {}
    for line in HELDOUT.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        assert raw["set"] == "heldout"
        assert raw["id"] not in rows
        rows[raw["id"]] = (raw["label"], raw["code"])
    return rows


@cache
def _detections() -> dict[str, Detection]:
    return {snippet_id: detect(code) for snippet_id, (_, code) in _heldout().items()}


def _prose_ids() -> list[str]:
    return [snippet_id for snippet_id in _heldout() if snippet_id.startswith("null-prose-")]


def test_heldout_set_is_labeled_in_the_vocabulary_or_null() -> None:
    rows = _heldout()
    assert len(rows) >= 300
    labels = {label for label, _ in rows.values()}
    assert labels - {None} == set(CANONICAL_LANGS)
    for snippet_id, (label, _) in rows.items():
        assert snippet_id.startswith("null-" if label is None else f"{label}-"), snippet_id
    assert len(_prose_ids()) >= 20


def test_heldout_confidence_is_in_unit_interval() -> None:
    for snippet_id, found in _detections().items():
        assert 0.0 <= found.confidence < 1.0, snippet_id
        assert found.lang is None or found.lang in CANONICAL_LANGS


def test_heldout_precision_at_deploy_threshold_meets_the_floor() -> None:
    stamped = correct = 0
    for snippet_id, (label, _) in _heldout().items():
        found = _detections()[snippet_id]
        if found.lang is not None and found.confidence >= DEPLOY_THRESHOLD:
            stamped += 1
            correct += found.lang == label
    assert stamped > 0
    assert correct / stamped >= 0.95


@pytest.mark.parametrize("snippet_id", _prose_ids())
def test_heldout_prose_is_not_stamped(snippet_id: str) -> None:
    _, code = _heldout()[snippet_id]
    assert detect_lang(code) is None


# Everyday English: function words, common verbs, nouns and adjectives. Many of
# them (from, order, table, check, call, only, when, month, year, work, ...) are
# keywords to the PostgreSQL lexer, which is what the test below is about.
_WORDS = """
the a an and or but so because after before when while if then than that this these those
we you they he she it i our your their my his her its
is are was were be been being have has had do does did will would can could should may might must
ask bring build call change check choose clean close come cook count cover decide deliver drive drop
eat explain fill find finish fix follow forget give grow help hold keep know leave let like listen
look lose meet miss move need offer open order pack pay pick plan play print pull push read remember
reply report return ride run save say see select sell send share show sign sit sleep speak spend
start stay stop take talk teach tell think travel try turn understand use visit wait walk want watch
wear work worry write
morning evening week month year today tomorrow yesterday weekend holiday meeting lunch dinner
house kitchen garden office room table chair window door street city station airport hotel
friend family team manager client customer teacher doctor neighbour child parent colleague
book letter email phone laptop car train bus ticket bill receipt invoice package box bag key
money price budget idea question answer problem reason result decision project
big small long short new old good bad early late quick slow busy quiet happy tired careful
first last next other every each all some many few more most less least same different
about above across along around at between by for from in into near of off on onto out over
through to toward under until up with within without again also always never often only soon
still just very really almost already maybe perhaps please thanks yes no not
""".split()


@st.composite
def _sentence(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=4, max_size=20))
    words[0] = words[0].capitalize()
    return " ".join(words) + draw(st.sampled_from([".", ".", "?", "!"]))


@st.composite
def _prose(draw: st.DrawFn) -> str:
    sentences = draw(st.lists(_sentence(), min_size=1, max_size=4))
    # A paragraph is one line in Markdown; a hard-wrapped note is one per line.
    return draw(st.sampled_from([" ", "\n"])).join(sentences) + "\n"


# The scorer alone stamps such prose: the PostgreSQL lexer's keyword list covers
# dozens of everyday English words, its `sql` twin is skipped as a dialect duel, and
# the margin is divided by lines, so one line of ordinary English clears even 0.99
# (the example scores 0.9991 as sql). detect_lang's prose gate turns it away.
@settings(max_examples=100)
@example("Check the order from last month and share it with the old team only when they call.\n")
@given(_prose())
def test_generated_prose_is_not_stamped(text: str) -> None:
    assert detect_lang(text) is None, detect(text)


def test_the_prose_gate_never_turns_away_a_real_fence() -> None:
    """Measured on both sets: every fence the gate calls prose is labeled null."""
    from memhtml.detect.detector import looks_like_prose

    gated = [(snippet_id, label) for snippet_id, (label, code) in _heldout().items()
             if looks_like_prose(code)]
    assert gated, "the held-out prose is recognised"
    assert [g for g in gated if g[1] is not None] == []
