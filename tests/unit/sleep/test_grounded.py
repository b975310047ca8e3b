"""Model text checked by code: keys, numbers and fragments are refused as a title,
claim or paragraph whatever is generated; sentences drawn from the members pass; a
canonical that leaves out a member's claim does not."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import given, settings

from memhtml.sleep.grounded import (
    CARRIED_FLOOR,
    DRAWN_FLOOR,
    Member,
    Written,
    carried,
    carried_faults,
    drawn,
    source_terms,
    text_fault,
    written_faults,
)
from memhtml.sleep.ledger import parse_line

MEMBERS = (
    ("Jenkins backup", "The Jenkins backup runs nightly at 02:00 UTC.",
     "It copies the build history to the storage bucket."),
    ("Backup retention", "Jenkins backups are kept for thirty days.",
     "Older archives are pruned by the cleanup job."),
    ("Backup restore drill", "A restore from the Jenkins backup is rehearsed each quarter.",
     "The drill restores into a scratch controller."),
)
SOURCES = source_terms(part for member in MEMBERS for part in member)
SENTENCES = tuple(sentence for _, claim, body in MEMBERS for sentence in (claim, body))

keys = st.builds(lambda prefix, n: f"{prefix}{n}",
                 st.sampled_from(["", "m", "M", "p", "key", "k"]), st.integers(0, 10_000))
separators = st.sampled_from([" ", ", ", "; ", " / ", "\n", " and ", " & "])
key_texts = st.builds(lambda parts, sep: sep.join(parts), st.lists(keys, min_size=1,
                      max_size=6), separators)
numbers = st.one_of(st.integers(-10**9, 10**9).map(str),
                    st.floats(allow_nan=False, allow_infinity=False).map(str),
                    st.integers(0, 23).map(lambda h: f"{h:02d}:00"))
punctuation = st.text(alphabet=" .,;:!?-()[]{}'\"/", max_size=6)
words = st.sampled_from(["backup", "jenkins", "nightly", "restore", "drill", "bucket"])


@settings(max_examples=60)
@given(text=st.one_of(key_texts, numbers), around=punctuation,
       part=st.sampled_from(["title", "claim", "paragraph"]))
def test_keys_and_numbers_are_never_text(text: str, around: str, part: str) -> None:
    fault = text_fault(f"{around}{text}{around}", part)  # type: ignore[arg-type]
    assert fault is not None
    assert fault.rule in ("text-key-or-number", "text-blank")


@settings(max_examples=60)
@given(fragment=st.lists(words, min_size=1, max_size=2).map(" ".join),
       tail=st.lists(keys, max_size=3).map(" ".join),
       part=st.sampled_from(["claim", "paragraph"]))
def test_fragments_are_no_claim_and_no_paragraph(fragment: str, tail: str, part: str
                                                 ) -> None:
    fault = text_fault(f"{fragment} {tail}".strip(), part)  # type: ignore[arg-type]
    assert fault is not None and fault.rule == "text-fragment"


@settings(max_examples=60)
@given(chosen=st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=4, unique=True),
       title=st.sampled_from([m[0] for m in MEMBERS]))
def test_sentences_drawn_from_the_members_pass(chosen: list[str], title: str) -> None:
    text = Written(title, chosen[0], tuple(chosen[1:]))
    assert written_faults(text, SOURCES) == ()


@settings(max_examples=40)
@given(order=st.permutations(range(len(MEMBERS))))
def test_a_canonical_of_the_members_sentences_carries_every_member(order: list[int]
                                                                   ) -> None:
    picked = [MEMBERS[n] for n in order]
    text = Written("Jenkins backup", " ".join(m[1] for m in picked),
                   tuple(m[2] for m in picked))
    members = [Member(title, claim) for title, claim, _ in MEMBERS]
    assert written_faults(text, SOURCES) == ()
    assert carried_faults(text, members) == ()


def test_the_issues_weak_canonical_is_refused() -> None:
    weak = Written("Jenkins Backup for New Roes", "m4", ("m4", "m6"))
    faults = written_faults(weak, SOURCES)
    assert [(f.part, f.rule) for f in faults] == [
        ("title", "text-not-drawn"),  # "new" and "roes" are no member's words
        ("claim", "text-key-or-number"), ("paragraph 1", "text-key-or-number"),
        ("paragraph 2", "text-key-or-number")]
    for claim in ("10", "p20"):
        (fault,) = written_faults(Written("Jenkins backup", claim, ()), SOURCES)
        assert fault.rule == "text-key-or-number"


def test_a_canonical_that_keeps_only_one_member_does_not_carry_the_others() -> None:
    text = Written("Jenkins backup", MEMBERS[0][1], (MEMBERS[0][2],))
    faults = carried_faults(text, [Member(t, c) for t, c, _ in MEMBERS])
    assert [f.part for f in faults] == ["Backup retention", "Backup restore drill"]
    for fault in faults:
        figures = dict(fault.figures)
        assert float(figures["overlap"]) < CARRIED_FLOOR == figures["floor"]


def test_a_kept_episode_need_only_share_a_term() -> None:
    text = Written("Jenkins backup", MEMBERS[0][1], ())
    assert carried_faults(text, [Member("day", "The drill ran on Monday.", archived=False)]) \
        != ()
    assert carried_faults(text, [Member("day", "The backup ran on Monday.",
                                        archived=False)]) == ()


def test_invented_text_is_not_drawn() -> None:
    (fault,) = written_faults(Written("Jenkins backup", "Deploys follow the morning window.",
                                      ()), SOURCES)
    assert fault.rule == "text-not-drawn"
    assert dict(fault.figures)["floor"] == DRAWN_FLOOR
    assert drawn("Deploys follow the morning window.", SOURCES) == 0.0


def test_stemming_reads_word_forms_as_one_term() -> None:
    assert carried("Jenkins backups are kept for thirty days.",
                   source_terms(["The Jenkins backup is kept thirty days."])) == 1.0


def test_a_refusal_is_a_ledger_record_with_its_rule_and_figures() -> None:
    (fault,) = written_faults(Written("Jenkins backup", "Invented words entirely here.", ()),
                              SOURCES)
    mark = fault.mark("compress", "canonical over a, b", 2)
    parsed = parse_line(mark.line())
    assert parsed == mark
    assert (mark.get("rule"), mark.get("part"), mark.get("batch")) == (
        "text-not-drawn", "claim", 2)
    assert mark.get("overlap") == 0.0 and mark.get("floor") == DRAWN_FLOOR
