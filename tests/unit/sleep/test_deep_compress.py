"""compress under ``--deep`` on a real store with a scripted model and a deterministic
embedder: communities over the grouping band, community-less candidates grouped by a
shared entity (hubs skipped), extra passes that embed each new canonical and find its
edges before the next call, never more than three, the episode and omission rules
unchanged, and a run without ``--deep`` exactly as before."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from tests.fake_embedders import AnchoredEmbedder, Pull
from tests.unit.sleep.fake_model import ScriptedModel, offered
from tests.unit.sleep.sleep_support import WRITTEN, World, blank_world, ok
from tests.unit.sleep.test_compress import (
    DIARY,
    DIARY_NOTES,
    OPS,
    OUTSIDER,
    STAMP,
    Canon,
    answering,
    canonical_at,
    claims_of,
    corpus,
    details,
    env_for,
    facts,
    held,
    keys_by_path,
    land,
    put,
    title_of,
)

from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import Link
from memhtml.contracts.services import ModelRequest
from memhtml.domain.thresholds import (
    COMPRESS_BATCH,
    DEEP_COMPRESS_PASSES,
    ENTITY_HUB_CLAIMANTS,
)
from memhtml.head import empty_vector_cache, fill_vectors, vector_text_of
from memhtml.sleep.budget import CallBudget
from memhtml.sleep.phase import PhaseEnv, PhaseResult
from memhtml.sleep.phases.compress import compress
from memhtml.sleep.phases.relationship_mining import relationship_mining
from memhtml.store.layout import archive_path

DIMENSION = 64
TOPICS = (Pull(("freeze", "froze"), "freeze", 0.9), Pull(("deploy",), "deploy", 0.9))
"""A text naming a topic's word lies at cosine 0.9 to the topic's direction (the first
topic it names), so two such texts meet at about 0.81: in the grouping band, under the
mining floor."""


def topic_embedder() -> AnchoredEmbedder:
    """A deterministic embedder that records what it is asked to embed (in ``log``,
    shared with the model's responder, so the order of the two shows)."""
    return AnchoredEmbedder(TOPICS, dimension=DIMENSION, seed=7, model_id="topic")


def logging(log: list[tuple[str, str]],
            respond: Callable[[ModelRequest], Mapping[str, object]]
            ) -> Callable[[ModelRequest], Mapping[str, object]]:
    def logged(request: ModelRequest) -> Mapping[str, object]:
        log.append(("ask", request.prompt))
        return respond(request)

    return logged


def deep_env(w: World, model: ScriptedModel | None, embedder: AnchoredEmbedder | None, *,
             deep: bool = True, dry_run: bool = False, calls: CallBudget | None = None
             ) -> PhaseEnv:
    """The env compress sees after preflight and relationship-mining of a run (deep or
    not): the vector cache filled by ``embedder``, the mined edges and, under deep, the
    band."""
    env = env_for(w, model, dry_run=dry_run, calls=calls)
    if embedder is None:
        return replace(env, deep=deep)
    cache = ok(fill_vectors(env.version, empty_vector_cache(embedder.space), embedder)).cache
    embedder.log.clear()
    mined = ok(relationship_mining(replace(env, phase="relationship-mining", vectors=cache,
                                           deep=deep)))
    return replace(env, deep=deep, embedder=embedder, vectors=cache, mined=mined.mined,
                   lateral=mined.lateral)


def run(env: PhaseEnv) -> PhaseResult:
    return ok(compress(env))


def titles(request: ModelRequest) -> list[str]:
    return list(keys_by_path(request))


def isolated(paths: Sequence[str], entities: tuple[str, ...] = ()) -> World:
    """Memories with no link at all, the clock then set to the run."""
    w = blank_world()
    for path in paths:
        put(w, path, entities=entities)
    w.clock.advance((STAMP - WRITTEN).total_seconds())
    return w


# --------------------------------------------------------------------------- the band


LOOSE = tuple(f"inbox/deploy-note-{n}.html" for n in ("one", "two", "three"))
"""Named in words: claims naming a path carry its digits, and two near duplicates whose
numbers differ are a pair the merge veto refuses, which compress never folds."""


def test_the_band_gives_linkless_neighbours_a_community_under_deep_only() -> None:
    plain_model = ScriptedModel(respond=answering())
    plain = run(deep_env(isolated(LOOSE), plain_model, topic_embedder(), deep=False))
    assert plain_model.calls == 0
    assert (plain.counts["without_community"], plain.counts["communities"]) == (3, 0)

    model = ScriptedModel(respond=answering())
    deep = run(deep_env(isolated(LOOSE), model, topic_embedder()))
    assert model.calls == 1
    assert sorted(titles(model.requests[0])) == sorted(title_of(p) for p in LOOSE)
    assert (deep.counts["without_community"], deep.counts["communities"]) == (0, 1)


def test_retention_bands_do_not_move_with_the_band() -> None:
    plain = run(deep_env(isolated(LOOSE), ScriptedModel(respond=answering()), topic_embedder(),
                         deep=False))
    deep = run(deep_env(isolated(LOOSE), ScriptedModel(respond=answering()), topic_embedder()))
    assert deep.counts["band"] == plain.counts["band"] == len(LOOSE)


# --------------------------------------------------------------------------- entities


BILLING = tuple(f"inbox/invoice-{n}.html" for n in range(1, 4))


def test_community_less_candidates_sharing_an_entity_are_asked_about() -> None:
    w = isolated(BILLING, entities=("org:billing",))
    before = ok(w.store.head())
    folded: Canon = ("Invoice facts", facts(BILLING[:2]), details(BILLING[:2]), BILLING[:2])
    model = ScriptedModel(respond=answering(folded))
    result = run(deep_env(w, model, None))
    first, second = model.requests
    assert sorted(titles(first)) == sorted(title_of(p) for p in BILLING)
    # The canonical carries the entity, so the next pass groups it with the one left.
    assert sorted(titles(second)) == sorted([folded[0], title_of(BILLING[2])])
    assert result.counts["passes"] == 2
    assert (result.counts["entity_groups"], result.counts["entity_grouped"]) == (2, 5)
    assert result.counts["communities"] == 0
    (commit,) = result.commits
    assert commit.subject == "1 canonical compressed from entity org:billing, 2 memories archived"
    after = land(w, result)
    made = canonical_at(after, before, folded[0])
    assert made.entities == ("org:billing",)
    assert held(after, BILLING[2]).html == held(before, BILLING[2]).html

    plain_model = ScriptedModel(respond=answering(folded))
    plain = run(deep_env(isolated(BILLING, entities=("org:billing",)), plain_model, None,
                         deep=False))
    assert plain_model.calls == 0 and plain.commits == ()
    assert "entity_groups" not in plain.counts


def test_a_candidate_joins_the_first_entity_in_sorted_order() -> None:
    paths = tuple(f"inbox/n-{n}.html" for n in range(1, 5))
    w = blank_world()
    put(w, paths[0], entities=("org:alpha", "org:beta"))
    put(w, paths[1], entities=("org:alpha", "org:beta"))
    put(w, paths[2], entities=("org:beta",))
    put(w, paths[3], entities=("org:beta", "org:gamma"))
    w.clock.advance((STAMP - WRITTEN).total_seconds())
    model = ScriptedModel(respond=answering())
    result = run(deep_env(w, model, None))
    assert [sorted(titles(r)) for r in model.requests] == [
        sorted(title_of(p) for p in paths[:2]), sorted(title_of(p) for p in paths[2:])]
    assert result.counts["entity_groups"] == 2


def hub_world(claimants: int) -> World:
    """``claimants`` linkless memories claiming "acme" (and a task that claims it too,
    which never counts)."""
    w = blank_world()
    for n in range(claimants):
        put(w, f"inbox/acme-{n:03}.html", entities=("org:acme",))
    put(w, "inbox/tasks/chase-acme.html", memory_type="task", entities=("org:acme",))
    w.clock.advance((STAMP - WRITTEN).total_seconds())
    return w


def test_an_entity_over_the_hub_line_groups_nothing() -> None:
    assert ENTITY_HUB_CLAIMANTS == 64
    model = ScriptedModel(respond=answering())
    hub = run(deep_env(hub_world(ENTITY_HUB_CLAIMANTS + 1), model, None, dry_run=True))
    assert (hub.counts["hubs_skipped"], hub.counts["entity_groups"]) == (1, 0)
    assert hub.counts["would_call"] == 0

    grouped = run(deep_env(hub_world(ENTITY_HUB_CLAIMANTS), model, None, dry_run=True))
    assert (grouped.counts["hubs_skipped"], grouped.counts["entity_groups"]) == (0, 1)
    assert grouped.counts["entity_grouped"] == ENTITY_HUB_CLAIMANTS
    assert grouped.counts["would_call"] == ENTITY_HUB_CLAIMANTS // COMPRESS_BATCH
    assert model.calls == 0


# --------------------------------------------------------------------------- passes

DEPLOY: Canon = ("Deploy notes facts", facts(OPS[2:4]), details(OPS[2:4]), (OPS[2], OPS[3]))


def test_a_folding_pass_embeds_its_canonical_before_the_next_pass_asks() -> None:
    w = corpus()
    before = ok(w.store.head())
    embedder = topic_embedder()
    model = ScriptedModel(respond=logging(embedder.log, answering(DEPLOY)))
    env = deep_env(w, model, embedder)
    result = run(env)

    assert result.counts["passes"] == 2  # pass 2 folded nothing: no third
    assert model.calls == 2
    first, second = model.requests
    assert first.prompt != second.prompt
    assert DEPLOY[0] not in titles(first)
    # The canonical links only to archived members: its band edges, found after pass 1,
    # are what put it in a community with the deploy notes left.
    assert DEPLOY[0] in titles(second)
    assert not {title_of(OPS[2]), title_of(OPS[3])} & set(titles(second))

    after = land(w, result)
    made = canonical_at(after, before, DEPLOY[0])
    # Its vector was asked for between the two calls, and handed on to later phases.
    assert [what for what, _ in embedder.log] == ["ask", "embed", "ask"]
    assert embedder.embedded == [vector_text_of(made)]
    assert result.vectors is not None and env.vectors is not None
    assert result.vectors.get(made.content_hash) is not None
    assert env.vectors.get(made.content_hash) is None  # the run's cache is not touched
    assert result.observed == {"embedded": 1}
    assert len(result.commits) == 1
    assert (result.counts["canonicals"], result.counts["calls"]) == (1, 2)


def first_two(request: ModelRequest) -> Mapping[str, object]:
    """Fold the first two members offered into a canonical about deploys, carrying
    both members' claims."""
    keys = list(offered(request))
    n = len(request.prompt)
    claims = claims_of(request)[:2]
    return {"canonicals": [{"title": f"Deploy facts recorded {n}", "claim": " ".join(claims),
                            "body": claims, "absorbs": keys[:2]}]}


def test_passes_stop_at_three_even_while_folding() -> None:
    assert DEEP_COMPRESS_PASSES == 3
    w = corpus()
    embedder = topic_embedder()
    model = ScriptedModel(respond=logging(embedder.log, first_two))
    result = run(deep_env(w, model, embedder))
    assert result.counts["passes"] == DEEP_COMPRESS_PASSES
    assert model.calls == DEEP_COMPRESS_PASSES
    assert result.counts["canonicals"] == DEEP_COMPRESS_PASSES
    # Each pass's canonical embedded once, before the next pass; the last one never.
    assert [what for what, _ in embedder.log] == ["ask", "embed", "ask", "embed", "ask"]
    # One commit per batch that wrote, each landing on the one before.
    assert len(result.commits) == DEEP_COMPRESS_PASSES
    assert [c.subject.endswith(f"(pass {n})") for n, c in enumerate(result.commits, 1)] == [
        False, True, True]
    after = land(w, result)
    digests = [r for r in after.records() if r.title.startswith("Deploy facts recorded")]
    live = [r for r in digests if not r.archived]
    assert len(digests) == 3 and len(live) >= 1
    for record in digests:
        if record.archived:
            assert record.superseded_by is not None


def test_a_spent_budget_ends_the_passes() -> None:
    w = corpus()
    embedder = topic_embedder()
    model = ScriptedModel(respond=first_two)
    result = run(deep_env(w, model, embedder, calls=CallBudget(1)))
    assert (model.calls, result.counts["passes"]) == (1, 1)
    assert embedder.embedded == []


def test_without_an_embedder_a_pass_still_follows_a_fold() -> None:
    w = corpus()
    model = ScriptedModel(respond=first_two)
    env = deep_env(w, model, topic_embedder())
    result = run(replace(env, embedder=None))
    assert result.counts["passes"] == 3
    assert result.vectors is None
    assert result.observed == {"embedded": 0}


def test_deep_never_archives_an_unnamed_member_or_a_dated_episode() -> None:
    w = corpus(diary=True)
    before = ok(w.store.head())
    freeze: Canon = ("The deploy freeze facts",
                     f"The deploy froze at noon; {facts(DIARY_NOTES)[4:]}",
                     details(DIARY_NOTES), (DIARY, *DIARY_NOTES))
    embedder = topic_embedder()
    result = run(deep_env(w, ScriptedModel(respond=answering(freeze)), embedder))
    assert result.counts["episodes_kept"] == 1
    after = land(w, result)
    made = canonical_at(after, before, freeze[0])
    episode = held(after, DIARY)
    assert not episode.archived and episode.status == "active"
    assert Link("part_of", to_document_path(made.path)) in episode.links
    for path in DIARY_NOTES:
        assert held(after, archive_path(path, STAMP.year)).superseded_by == (
            to_document_path(made.path))
    for path in (*OPS, OUTSIDER):
        assert held(after, path).html == held(before, path).html


# --------------------------------------------------------------------------- the edges


def test_without_deep_the_result_is_todays_whatever_the_run_carries() -> None:
    embedder = topic_embedder()
    carried = deep_env(corpus(), ScriptedModel(respond=first_two), embedder)
    assert carried.lateral  # a deep mining's band, handed to a run told not to read it
    bare = run(env_for(corpus(), ScriptedModel(respond=first_two)))
    plain = run(replace(carried, deep=False,
                        model=ScriptedModel(respond=first_two), calls=CallBudget()))
    assert plain.counts == bare.counts
    assert [(c.subject, c.changes, c.body) for c in plain.commits] == [
        (c.subject, c.changes, c.body) for c in bare.commits]
    assert plain.warnings == bare.warnings
    assert (plain.vectors, plain.observed) == (None, {})
    assert set(bare.counts) == {
        "band", "candidates", "communities", "without_community", "singletons", "capped",
        "lone", "canonicals", "archived", "episodes_kept", "too_few", "refused",
        "refused_protected", "refused_ungrounded", "protected",
        "batches", "calls", "failed_batches", "budget_skipped", "unknown_keys"}
    assert embedder.embedded == []


def test_a_dry_deep_run_counts_pass_one_and_asks_and_embeds_nothing() -> None:
    embedder = topic_embedder()
    model = ScriptedModel(respond=first_two)
    w = isolated(LOOSE)
    for path in BILLING:
        put(w, path, entities=("org:billing",))
    result = run(deep_env(w, model, embedder, dry_run=True))
    assert model.calls == 0 and embedder.embedded == []
    assert result.commits == ()
    assert (result.counts["communities"], result.counts["entity_groups"]) == (1, 1)
    assert result.counts["would_call"] == 2


def test_two_deep_runs_send_the_same_bytes() -> None:
    first, second = (ScriptedModel(respond=first_two) for _ in range(2))
    run(deep_env(corpus(db=True), first, topic_embedder()))
    run(deep_env(corpus(db=True), second, topic_embedder()))
    assert first.sent == second.sent
    assert len(first.sent) > 2
