"""A correction keeps what it was not given.

The law: ``correct`` with only a new claim changes only the claim (and the
supersedes edge and the dates). Every other field the corrected memory stated comes
forward (title, type, entities, tags, aliases, outbound links, confidence,
importance, author, validity, task status and due date) and so does every other word
of its article; a link from another memory to it now names the correction.
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.services import PathChange
from memhtml.format import NewMemoryInput, article_with_claim, parse_memory, render_template
from memhtml.format.serialize import canonical_article_html
from memhtml.store import WriteInput, correct, link, write
from tests.integration.store.store_support import AUTHOR, CLOCK, make_memory_store, ok, tip
from tests.property.strategies import claims, memory_inputs

KEPT = ("title", "memory_type", "entities", "tags", "aliases", "confidence", "importance",
        "author", "valid_from", "valid_until", "task_status", "due_at")


def _article(record: MemoryRecord) -> str:
    return parse_memory(record.html).unwrap().article.html


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(memory=memory_inputs(), claim=claims)
def test_a_correction_with_only_a_claim_changes_only_the_claim(
        memory: NewMemoryInput, claim: str) -> None:
    # A claim of nothing but Unicode spaces (U+00A0) is an empty mark, which the door
    # refuses with the format's reason; the law is about claims that say something.
    assume(claim.strip() != "")
    assume(" ".join(claim.split()) != " ".join(memory.claim.split()))
    store, git = make_memory_store()
    # Committed by hand, as a person's git commit lands a file: its edges may name
    # memories this store never held (no door writes such an edge), and a correction
    # carries them as they stand.
    old_path = "areas/inbox/corrected.html"
    ok(git.commit("refs/heads/main", tip(store), [
        PathChange(old_path, render_template(memory).encode("utf-8"))], "by hand", AUTHOR,
        CLOCK.now()))
    other = ok(write(store, WriteInput(title="Other note", claim="It leans on the first.")))
    ok(link(store, other.primary or "", "supports", old_path))
    old = ok(store.head()).get(old_path)
    assert old is not None
    landed = ok(correct(store, old_path, WriteInput(claim=claim)))
    version = ok(store.head())
    new = version.get(landed.primary or "")
    assert new is not None
    for name in KEPT:
        assert getattr(new, name) == getattr(old, name), name
    archived = next(p for p in landed.paths if p.startswith("archive/"))
    assert set(new.links) == {link for link in old.links if link.rel != "supersedes"} | {
        Link("supersedes", to_document_path(archived))}
    expected = article_with_claim(_article(old), claim)
    assert expected is not None
    assert _article(new) == canonical_article_html(expected)
    leaning = version.get(other.primary or "")
    assert leaning is not None
    assert Link("supports", to_document_path(new.path)) in leaning.links


@settings(max_examples=20, deadline=None)
@given(title=claims, tags=st.lists(st.sampled_from(["ops", "deploy", "db"]), min_size=1,
                                   max_size=2, unique=True))
def test_what_a_correction_gives_replaces_what_it_had(title: str, tags: list[str]) -> None:
    store, _ = make_memory_store()
    old_path = ok(write(store, WriteInput(
        title="Deploy window", claim="Deploys happen on Tuesdays.", tags=("release",),
        entities=("service:checkout-api",), body=("Never on a Friday.",)))).primary or ""
    landed = ok(correct(store, old_path, WriteInput(title=title, tags=tuple(tags),
                                                     body=("Thursdays too.",))))
    new = ok(store.head()).get(landed.primary or "")
    assert new is not None
    assert new.title == " ".join(title.split()) and new.tags == tuple(tags)
    assert new.entities == ("service:checkout-api",)  # not given: kept
    assert new.claim == "Deploys happen on Tuesdays."  # not given: kept
    assert "Thursdays too." in new.body_text and "Friday" not in new.body_text


@given(blank=st.text(alphabet=" \t\u00a0\u2003\u3000", min_size=1, max_size=4))
def test_a_correction_whose_claim_is_only_spaces_is_refused_and_commits_nothing(
        blank: str) -> None:
    store, _ = make_memory_store()
    old = ok(write(store, WriteInput(title="Standup", claim="Standup is at 9:30."))).primary
    assert old is not None
    before = tip(store)
    refused = correct(store, old, WriteInput(claim=blank))
    assert "empty" in str(refused), refused
    assert tip(store) == before
