"""Laws of the duplicate lookup a write consults: a stored claim is found again in
any casing and spacing, and nothing else is (another word, other punctuation, or a
memory that is no longer live)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memhtml.format import NewMemoryInput, render_template
from memhtml.head import record_from, version_from_records
from memhtml.head.version import HeadVersion
from memhtml.store import WriteInput
from memhtml.store.duplicates import claim_of, duplicate_of, normalised_claim

STAMP = "2026-05-01T12:00:00Z"
WORDS = st.text(alphabet=st.characters(whitelist_categories=("Lu", "Ll", "Nd")),
                min_size=1, max_size=8)
CLAIMS = st.lists(WORDS, min_size=1, max_size=6).map(" ".join)
SPACES = st.sampled_from([" ", "  ", "\t", "\n", " \n "])


def _version(claim: str, path: str = "areas/inbox/fact.html") -> HeadVersion:
    html = render_template(NewMemoryInput(title="Fact", claim=claim,
                                          memory_type="semantic", at=STAMP))
    return version_from_records([record_from(html, path).unwrap()], "0" * 40)


@st.composite
def respelled(draw: st.DrawFn, claim: str) -> str:
    """``claim`` with every letter's case chosen afresh and every space replaced by
    some run of whitespace, padded at both ends."""
    words = claim.split(" ")
    cased = [
        "".join(c.upper() if draw(st.booleans()) else c.lower() for c in word)
        for word in words
    ]
    glue = [draw(SPACES) for _ in words]
    return draw(SPACES) + "".join(w + g for w, g in zip(cased, glue, strict=True))


@given(st.data(), CLAIMS)
def test_a_claim_is_found_in_any_casing_and_spacing(data: st.DataObject, claim: str) -> None:
    version = _version(claim)
    again = data.draw(respelled(claim))
    if normalised_claim(again) != normalised_claim(claim):
        return  # a letter whose case folding is not its lower case (rare scripts)
    found = duplicate_of(version, again)
    assert found is not None and found.path == "areas/inbox/fact.html"


@given(CLAIMS, WORDS, st.sampled_from([".", "!", "?", ":", "-"]))
def test_another_word_or_mark_is_another_claim(claim: str, word: str, mark: str) -> None:
    version = _version(claim)
    assert duplicate_of(version, f"{claim} {word}") is None
    assert duplicate_of(version, claim + mark) is None


@given(CLAIMS)
def test_normalising_is_idempotent_and_an_archived_memory_is_no_duplicate(claim: str) -> None:
    assert normalised_claim(normalised_claim(claim)) == normalised_claim(claim)
    archived = _version(claim, "archive/2026/areas/inbox/fact.html")
    assert duplicate_of(archived, claim) is None
    assert duplicate_of(_version(claim), "   ") is None


def test_the_claim_a_write_would_store() -> None:
    assert claim_of(WriteInput(title="T", claim="Plain.")) == "Plain."
    beside = WriteInput(title="T", claim="Lead.", article_html="<p>More.</p>")
    assert claim_of(beside) == "Lead."
    own = WriteInput(title="T", article_html="<p><mark>Marked here.</mark> More.</p>")
    assert claim_of(own) == "Marked here."
    assert claim_of(WriteInput(title="T", article_html="<p>No mark.</p>")) is None
