"""The merge veto, orientation and the in-batch role guard."""

from __future__ import annotations

import pytest

from memhtml.domain.merge import (
    CorpusMember,
    MergeDecision,
    MergeProposal,
    MergeText,
    VetoCache,
    group_proposals,
    is_near_duplicate,
    merge_candidates,
    merge_outcomes,
    merge_veto,
    negation_divergent,
    numeric_token_divergent,
    orient,
    variant_qualifier_divergent,
    veto_features,
)
from memhtml.domain.veto_text import term_stem

SAME = MergeText("the deploy step is safe to rerun")


def proposal(keep: str, drop: str) -> MergeProposal:
    return MergeProposal(keep, drop, "cosine", 0.95, SAME, SAME)


def test_contractions_surface_negation() -> None:
    assert negation_divergent("the cache is warm", "the cache isn't warm")
    assert negation_divergent("the cache is warm", "the cache isn\u2019t warm")
    assert not negation_divergent("it is not warm", "it never is warm")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("X is available", "X is unavailable"),
        ("the worker is active", "the worker is inactive"),
        ("the write path is blocking", "the write path is non-blocking"),
        ("the write path is blocking", "the write path is nonblocking"),
        ("the hook is connected", "the hook is disconnected"),
        ("the flag is enabled", "the flag is disabled"),
        ("the policy is to allow root", "the policy is to deny root"),
        ("uploads are accepted", "uploads are rejected"),
        ("the check passes", "the check fails"),
        ("the door is open", "the door is closed"),
        ("the cache is on", "the cache is off"),
        ("the replica is up", "the replica is down"),
        ("the run ended in success", "the run ended in failure"),
        ("drafts are included", "drafts are excluded"),
        ("the value is true", "the value is false"),
    ],
)
def test_affix_and_antonym_flips_fire_negation_both_ways(a: str, b: str) -> None:
    assert negation_divergent(a, b)
    assert negation_divergent(b, a)
    assert merge_veto(MergeText(a), MergeText(b)) == ("negation",)
    assert merge_veto(MergeText("claim", b), MergeText("claim", a)) == ("negation",)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # The stem must be a token on the other side, of three letters or more.
        ("rebuild the index nightly", "rebuild it nightly"),
        ("the index is big", "the dex is big"),
        ("it is in the unit", "it is in the it"),
        # Lookalike roots: the prefix is part of the word, not a negation.
        ("put the token in the header", "input the token in the header"),
        ("play the recording", "display the recording"),
        ("count the retries", "discount the retries"),
        # A side holding both forms flips nothing.
        ("X is enabled, Y disabled", "X is enabled"),
        ("the api is available", "the api is available, the cache unavailable"),
        # The same polarity in two spellings is agreement.
        ("the io is nonblocking", "the io is non-blocking"),
    ],
)
def test_affix_lookalikes_do_not_fire(a: str, b: str) -> None:
    assert not negation_divergent(a, b)
    assert not negation_divergent(b, a)


def test_a_non_ending_the_claim_does_not_negate_the_article() -> None:
    a = MergeText("the mode is non", "blocking writes")
    b = MergeText("the mode is non", "blocking writes")
    assert merge_veto(a, b) == ()
    assert veto_features(a).flipped == frozenset()


def test_the_cache_agrees_with_the_veto_on_affix_flips() -> None:
    a, b = MergeText("the api is available"), MergeText("the api is unavailable")
    cache = VetoCache()
    assert cache.veto(a, b) == cache.veto(b, a) == merge_veto(a, b) == ("negation",)
    assert cache.features(b) == veto_features(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # The same claim, one body adding an unrelated remark.
        (MergeText("Deploys run on Tuesdays.", "Agreed with the release team."),
         MergeText("Deploys run on Tuesdays.", "Agreed with the release team. Never on a "
                                               "Friday.")),
        (MergeText("Deploys run on Tuesdays and never on Fridays."),
         MergeText("Deploys run on Tuesdays.")),
        # A remark naming the claim's subject negates nothing the other side states.
        (MergeText("The deploy script copies the build to staging."),
         MergeText("The deploy script copies the build to staging.",
                   "Never run the deploy script by hand.")),
        # Polarity words are terms, not operators: word order does not make a flip.
        (MergeText("Retry failed jobs at night."),
         MergeText("Retry the jobs that failed at night.")),
        # Both sides negate the same thing, in two spellings.
        (MergeText("The api is not available."), MergeText("The api is unavailable.")),
        (MergeText("The flag is not disabled."), MergeText("The flag is enabled.")),
        # Markers that negate nothing.
        (MergeText("Check whether or not the cache is warm."),
         MergeText("Check whether the cache is warm.")),
        (MergeText("The index is not only fast but also small."),
         MergeText("The index is fast and small.")),
        (MergeText("Is the cache warm? No."), MergeText("Is the cache warm?")),
    ],
)
def test_a_negated_remark_that_flips_nothing_shared_is_no_veto(a: MergeText, b: MergeText
                                                                 ) -> None:
    assert merge_veto(a, b) == merge_veto(b, a) == ()


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The cache expires idle sessions.", "The cache does not expire idle sessions."),
        ("The cache expires idle sessions.", "The cache never expires idle sessions."),
        ("The worker retries timed out requests.", "The worker doesn't retry timed out "
                                                   "requests."),
        ("The job can lock the orders table.", "The job cannot lock the orders table."),
        ("Run the migration before the deploy.", "Do not run the migration before the "
                                                 "deploy."),
        ("The export runs with a lock.", "The export runs without a lock."),
        ("The cache warmer is cached.", "The cache warmer is not cached."),
        ("Avoid the staging database for load tests.", "Use the staging database for load "
                                                       "tests."),
        ("The migration succeeded.", "The migration failed."),
        ("Deploying on Friday is allowed.", "Deploying on Friday is forbidden."),
    ],
)
def test_every_flip_of_shared_content_is_vetoed(a: str, b: str) -> None:
    assert merge_veto(MergeText(a), MergeText(b)) == ("negation",)
    assert merge_veto(MergeText(b), MergeText(a)) == ("negation",)


def test_a_flip_stated_beside_an_agreeing_sentence_is_vetoed() -> None:
    """The negating side uses the governed word elsewhere, about something else: the
    clause it negates is still one the other side states and it does not."""
    a = MergeText("Storage is encrypted.", "The audit log is encrypted at rest. The "
                                           "backups are encrypted at rest.")
    b = MergeText("Storage is encrypted.", "The audit log is encrypted at rest. The "
                                           "backups are not encrypted at rest.")
    assert merge_veto(a, b) == merge_veto(b, a) == ("negation",)


def test_a_side_holding_both_readings_flips_nothing() -> None:
    both = MergeText("The cache is warm.", "Sometimes the cache is not warm.")
    assert merge_veto(both, both) == ()
    assert merge_veto(both, MergeText("The cache is warm.")) == ()


def test_term_stems_join_the_forms_of_a_word() -> None:
    assert {term_stem(w) for w in ("expire", "expires", "expired", "expiring")} == {"expir"}
    assert {term_stem(w) for w in ("retry", "retries", "retried")} == {"retry"}
    assert term_stem("uses") == "use" and term_stem("use") == "use"
    assert term_stem("v2.1") == "v2.1" and term_stem("api") == "api"


def test_numeric_tokens_include_versions_and_dates() -> None:
    assert numeric_token_divergent("retry 3 times", "retry 13 times")
    assert numeric_token_divergent("pin v2.1", "pin v2.10")
    assert not numeric_token_divergent("retry 3 times", "retries: 3 times")
    assert not numeric_token_divergent("no numbers", "none at all")


def test_variant_qualifiers() -> None:
    assert variant_qualifier_divergent("runs on the M1", "runs on the M1 Pro")
    assert not variant_qualifier_divergent("the beta build", "the build (beta)")


def test_numeric_predicate_reads_the_claim_only() -> None:
    a = MergeText("deploys go through the queue", "seen in ticket 4411 on 2026-01-02")
    b = MergeText("deploys go through the queue", "confirmed again in ticket 5120")
    assert merge_veto(a, b) == ()


def test_negation_and_variant_read_the_article_too() -> None:
    a = MergeText("the deploy step", "it is safe to rerun")
    b = MergeText("the deploy step", "it is not safe to rerun")
    assert merge_veto(a, b) == ("negation",)
    c = MergeText("build on the laptop", "tested on the M1")
    d = MergeText("build on the laptop", "tested on the M1 Max")
    assert merge_veto(c, d) == ("variant",)


def test_all_predicates_are_reported_in_fixed_order() -> None:
    a = MergeText("the 2.0 beta is safe")
    b = MergeText("the 3.0 release is not safe")
    assert merge_veto(a, b) == ("negation", "numeric", "variant")
    assert VetoCache().veto(b, a) == ("negation", "numeric", "variant")


def test_near_duplicate_is_strictly_above_the_threshold() -> None:
    assert not is_near_duplicate(0.92)
    assert is_near_duplicate(0.9201)


def test_orientation_keeps_the_older_file() -> None:
    old = CorpusMember("b.html", 1)
    new = CorpusMember("a.html", 9)
    assert orient(new, old, 0.95).keep_path == "b.html"
    assert orient(old, new, 0.95).keep_path == "b.html"
    tie_a, tie_b = CorpusMember("z.html", 3), CorpusMember("y.html", 3)
    assert orient(tie_a, tie_b, 0.95).keep_path == "y.html"


def test_a_group_folds_into_its_lowest_offset_member() -> None:
    group = [CorpusMember("c.html", 5), CorpusMember("a.html", 7), CorpusMember("b.html", 2)]
    assert [(p.keep_path, p.drop_path) for p in group_proposals(group)] == [
        ("b.html", "c.html"),
        ("b.html", "a.html"),
    ]
    assert group_proposals([CorpusMember("x.html", 1)]) == ()


def test_role_guard_refuses_the_chain_that_archives_a_keeper() -> None:
    out = merge_outcomes([proposal("gf", "a"), proposal("b", "gf")])
    assert out.committed == (MergeDecision("gf", "a", "cosine", 0.95),)
    assert out.role_guarded == (proposal("b", "gf"),)
    assert out.vetoed == ()


def test_a_dropped_file_is_neither_dropped_again_nor_kept() -> None:
    out = merge_outcomes([proposal("k", "d"), proposal("j", "d"), proposal("d", "e")])
    assert [(d.keep_path, d.drop_path) for d in out.committed] == [("k", "d")]
    assert len(out.role_guarded) == 2


def test_a_keeper_may_keep_again() -> None:
    out = merge_outcomes([proposal("k", "a"), proposal("k", "b"), proposal("k", "c")])
    assert [d.drop_path for d in out.committed] == ["a", "b", "c"]


def test_vetoed_is_counted_apart_from_role_guarded() -> None:
    safe, unsafe = MergeText("the deploy step is safe"), MergeText("the deploy step is NOT safe")
    vetoed = MergeProposal("k", "d", "model", None, safe, unsafe)
    out = merge_outcomes([vetoed, proposal("k", "d")])
    assert [v.predicates for v in out.vetoed] == [("negation",)]
    assert [(d.keep_path, d.drop_path) for d in out.committed] == [("k", "d")]


def test_a_proposal_missing_a_text_is_refused_and_counted_apart() -> None:
    missing = MergeProposal("k", "d", "cosine", 0.99, SAME, None)
    other = MergeProposal("j", "e", "model", None, None, SAME)
    out = merge_outcomes([missing, other, proposal("k", "d")])
    assert out.missing_text == (missing, other)
    assert out.vetoed == () and out.role_guarded == ()
    # The refused pair claimed no role, so the readable one after it still folds.
    assert [(d.keep_path, d.drop_path) for d in out.committed] == [("k", "d")]


def test_self_merge_and_cap() -> None:
    pairs = [proposal("x", "x")] + [proposal("k", f"d{i:03d}") for i in range(150)]
    out = merge_outcomes(pairs)
    assert out.self_merges == 1
    assert len(out.committed) == 100
    assert out.capped == 50


def test_model_groups_come_first_and_mined_duplicates_are_not_offered_twice() -> None:
    a, b, c = (CorpusMember(p, n, SAME) for n, p in enumerate("abc"))
    proposals = merge_candidates([[c, b]], [(b, c, 0.99), (a, b, 0.95), (a, c, 0.92)])
    assert [(p.keep_path, p.drop_path, p.source) for p in proposals] == [
        ("b", "c", "model"),
        ("a", "b", "cosine"),
    ]
    committed = merge_outcomes(proposals).committed
    # b claimed its keeper role from the model first, so the cosine pair cannot drop it.
    assert [(d.keep_path, d.drop_path) for d in committed] == [("b", "c")]
