"""One file to one record: frame keys, blob shas, the archive flag."""

from __future__ import annotations

import pygit2
import pytest
from returns.result import Failure
from tests.property.head_support import archived, memory, memory_with, record_at

from memhtml.contracts.errors import InvalidMemory
from memhtml.contracts.vocabulary import MemoryType
from memhtml.format import NewMemoryInput, render_template
from memhtml.head import (
    blob_sha_of,
    frame_key_of,
    is_archived_path,
    is_dated_episode,
    record_from,
)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The deploy step is safe.", "the  DEPLOY step is safe"),
        ("The deploy step is safe.", "The deploy-step is safe!"),
        ("The deploy step is safe.", "The deploy_step is\tsafe."),
        ("Ünïcödé claims agree.", "ÜNÏCÖDÉ claims   agree"),
        ("Straße is closed.", "STRASSE is closed"),
    ],
)
def test_frame_key_shared_up_to_case_punctuation_and_whitespace(a: str, b: str) -> None:
    assert frame_key_of(a) == frame_key_of(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Billing runs on node 20.", "Billing runs on node 22."),
        ("The rate is 3.5 percent.", "The rate is 35 percent."),
        ("The deploy step is safe.", "The deploy step is not safe."),
        ("The deploy step is safe.", "The deploy step is never safe."),
        ("The deploy step is safe.", "The deploy step was safe."),
    ],
)
def test_frame_key_differs_on_a_number_a_negation_or_a_word(a: str, b: str) -> None:
    assert frame_key_of(a) != frame_key_of(b)


def test_frame_key_is_short_and_opaque() -> None:
    key = frame_key_of("word " * 1000)
    assert key.startswith("fk:")
    assert len(key) == len(frame_key_of("word"))


@pytest.mark.parametrize("text", ["", "plain", "café ☕ 東京", "a\x00b", "𝄞" * 10])
def test_blob_sha_counts_utf8_bytes(text: str) -> None:
    assert blob_sha_of(text) == str(pygit2.hash(text.encode("utf-8")))


@pytest.mark.parametrize(
    ("path", "expected"),
    [("archive/x.html", True), ("archive/2026/a/b.html", True), ("areas/archive/x.html", False),
     ("archived/x.html", False), ("x.html", False)],
)
def test_is_archived_path(path: str, expected: bool) -> None:
    assert is_archived_path(path) is expected


def test_record_carries_the_derived_facts() -> None:
    html = memory_with("Title", "The claim holds.", "More text.",
                       links=(("supersedes", "/areas/old.html"),), entities=("team:sre",))
    record = record_at("areas/x.html", html)
    assert record.path == "areas/x.html"
    assert record.blob_sha == blob_sha_of(html)
    assert record.frame_key == frame_key_of("The claim holds.")
    assert record.content_hash.startswith("sha256:")
    assert record.archived is False
    assert record.html == html
    assert record.claim == "The claim holds."
    assert record.entities == ("team:sre",)
    assert [(link.rel, link.href) for link in record.links] == [("supersedes", "/areas/old.html")]
    moved = record_at("archive/2026/x.html", archived(html))
    assert moved.archived is True
    assert moved.content_hash == record.content_hash


def test_record_from_fails_with_the_parser_error() -> None:
    result = record_from("<p>not a memory</p>", "areas/x.html")
    assert isinstance(result, Failure)
    error = result.failure()
    assert isinstance(error, InvalidMemory)
    assert error.path == "areas/x.html"
    assert error.violations
    assert error.reason == "; ".join(error.violations)


def test_head_only_edits_keep_the_content_hash() -> None:
    a = record_at("a.html", memory("One title", "Same claim.", "Same body."))
    b = record_at("b.html", memory("Another title", "Same claim.", "Same body.",
                                   at="2026-05-05T00:00:00Z", entities=("x:y",)))
    assert a.content_hash == b.content_hash
    assert a.blob_sha != b.blob_sha


def _episode(memory_type: MemoryType, facet: str) -> str:
    article = (f"<p><mark>The deploy froze at noon.</mark></p><dl>{facet}</dl>")
    return render_template(NewMemoryInput(
        title="Deploy freeze", claim="The deploy froze at noon.", memory_type=memory_type,
        at="2026-01-01T00:00:00Z", article_html=article, detect=lambda _c: None))


@pytest.mark.parametrize(("memory_type", "facet", "dated"), [
    ("episodic", '<dt>day</dt><dd><time datetime="2026-03-04">4 March</time></dd>', True),
    ("episodic", "<dt>Day</dt><dd>2026-03-04</dd>", True),
    ("episodic", "<dt>day</dt><dd>last Tuesday</dd>", True),
    ("episodic", "<dt>day</dt><dd> </dd>", False),
    ("episodic", "<dt>week</dt><dd>2026-03-04</dd>", False),
    ("semantic", "<dt>day</dt><dd>2026-03-04</dd>", False),
])
def test_a_dated_episode_is_an_episodic_memory_with_a_day_facet(
        memory_type: MemoryType, facet: str, dated: bool) -> None:
    record = record_at("areas/ops/freeze.html", _episode(memory_type, facet))
    assert is_dated_episode(record) is dated
