"""The page name of a tag or an entity: one safe path segment per distinct string,
whatever the string, and the same one whatever the order the strings come in."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.store import site_model
from memhtml.store.site_model import label_segments

SAFE = re.compile(r"[a-z0-9-]+")
AWKWARD = [".", "..", "...", "a/b", "/", "\\", "a\\..\\b", "%2e%2e", "%2F", "index.html",
           "<script>alert(1)</script>", "日本語", "Ünïcødé", "", " ", "-", "x" * 5000,
           "Security", "security", "SECURITY", "con", "nul.txt", "\x00", "\ud800"]


def _check(values: list[str]) -> dict[str, str]:
    segments = label_segments(values)
    assert set(segments) == set(values)
    assert len(set(segments.values())) == len(segments), "two values share a page"
    for value, segment in segments.items():
        assert SAFE.fullmatch(segment), (value, segment)
        assert segment not in (".", "..") and len(segment) <= 120, (value, segment)
    return segments


def test_awkward_values_get_distinct_safe_segments() -> None:
    segments = _check(AWKWARD)
    assert segments["security"].startswith("security-")
    assert segments["Ünïcødé"].startswith("unicde-"), "accents folded, the rest dropped"
    assert segments["日本語"] != segments[""] and "-" not in segments["日本語"]
    assert len(segments["x" * 5000]) == 40 + 1 + 16


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=30))
def test_any_values_get_distinct_safe_segments_in_any_order(values: list[str]) -> None:
    segments = _check(values)
    assert label_segments(list(reversed(values))) == segments
    assert label_segments([*values, *values]) == segments


def test_values_whose_short_digests_meet_take_the_whole_digest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(site_model, "_SHORT_DIGEST", 1)
    values = ["tag" + "!" * i for i in range(40)]  # one slug, 16 one-digit digests
    segments = _check(values)
    assert {len(s) for s in segments.values()} <= {len("tag-") + 1, len("tag-") + 64}
    assert sum(len(s) == len("tag-") + 64 for s in segments.values()) >= 40 - 16


def test_a_whole_digest_tie_is_broken_in_value_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(site_model, "_segment", lambda value, digits: "same")
    assert _check(["b", "a", "c"]) == {"a": "same", "b": "same-2", "c": "same-3"}
