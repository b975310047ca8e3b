"""What compress never folds, whatever its model answers (``sleep.protected``): an arc,
a person's file, what an earlier phase of the run made or decided on (a decayed
confidence and a link following an archive are not decisions), one side of a pair a
person is asked about, one side of a near-duplicate pair the merge veto refuses; and a
canonical over two near duplicates the veto refuses (the 300 s and 600 s TTLs), or
over two memories linked ``contradicts``, is refused whole. Each refusal is a
``compress-refused`` record in the run's ledger. A model answering "fold everything"
plays every test."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.fake_embedders import AnchoredEmbedder, Pull
from tests.unit.sleep.fake_model import ScriptedModel, offered
from tests.unit.sleep.sleep_support import World, blank_world, ok
from tests.unit.sleep.test_compress import STAMP, env_for

from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import Link
from memhtml.contracts.services import ModelRequest, PathChange
from memhtml.domain.merge import merge_veto
from memhtml.domain.thresholds import DEDUP_RECALL_FLOOR
from memhtml.format import add_meta, set_meta
from memhtml.head import HeadVersion, VectorCache, empty_vector_cache, fill_vectors, load_head
from memhtml.sleep.findings import Finding, Measurement
from memhtml.sleep.ledger import PendingMark
from memhtml.sleep.phase import MinedEdge, PhaseEnv, PhaseResult
from memhtml.sleep.phases.compress import compress
from memhtml.sleep.protected import decided, merge_text, protect
from memhtml.sleep.tasks import task_input
from memhtml.store import WriteInput, archive, write

DIMENSION = 64
OPS = "areas/ops/"
NOTES = tuple(f"{OPS}{name}.html" for name in ("window", "freeze", "rollback", "pager"))
"""One community of plain notes (each links every earlier one), numbers in none."""
TTL_A = f"{OPS}cache-ttl.html"
TTL_B = f"{OPS}cache-ttl-again.html"


TTL_PULL = Pull(("ttl",), "ttl", 0.98)
"""Texts about the cache TTL near one direction (two of them meet above 0.9); every
other text a seeded direction of its own."""


def ttl_embedder() -> AnchoredEmbedder:
    return AnchoredEmbedder((TTL_PULL,), dimension=DIMENSION, seed=3, model_id="ttl")


def note(w: World, path: str, claim: str, earlier: Sequence[str] = (),
         extra: Sequence[Link] = (), **more: object) -> None:
    """A memory written in May (so it fades by the run), linking every earlier path
    (and ``extra``)."""
    links = (*extra, *(Link("relates_to", to_document_path(p)) for p in earlier))
    title = path.rsplit("/", 1)[-1].removesuffix(".html").replace("-", " ").title()
    ok(write(w.store, WriteInput(title=title, claim=claim, path=path, links=links,
                                 **more), allow_duplicate=True))  # type: ignore[arg-type]


def community(w: World, extra: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The plain notes and ``extra`` (path, claim) as one community."""
    paths: list[str] = []
    for path, claim in [*((p, f"The ops team keeps a {p.rsplit('/', 1)[-1][:-5]} note.")
                          for p in NOTES), *extra]:
        note(w, path, claim, paths)
        paths.append(path)
    return paths


def to_run(w: World) -> None:
    w.clock.advance((STAMP - w.clock.now()).total_seconds())


def claims_of(request: ModelRequest) -> list[str]:
    """Each offered member's claim, in offer order."""
    return [line.removeprefix("claim: ") for text in offered(request).values()
            for line in text.split("\n") if line.startswith("claim: ")]


def fold_everything(request: ModelRequest) -> Mapping[str, object]:
    """The over-eager model: one canonical absorbing every member offered, its text
    the members' own (so only what compress protects can stop it)."""
    keys = list(offered(request))
    claims = claims_of(request)
    return {"canonicals": [{"title": "The ops team notes", "claim": " ".join(claims),
                            "body": claims, "absorbs": keys}]}


def vectors_of(w: World) -> VectorCache:
    embedder = ttl_embedder()
    version = ok(w.store.head())
    return ok(fill_vectors(version, empty_vector_cache(embedder.space), embedder)).cache


def cosine(cache: VectorCache, version: HeadVersion, a: str, b: str) -> float:
    ra, rb = version.get(a), version.get(b)
    assert ra is not None and rb is not None
    va, vb = cache.get(ra.content_hash), cache.get(rb.content_hash)
    assert va is not None and vb is not None
    x, y = np.asarray(va, dtype=np.float64), np.asarray(vb, dtype=np.float64)
    return float(np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y)))


def night(w: World, *, base: str | None = None, mined: Sequence[MinedEdge] | None = None,
          vectors: VectorCache | None = None) -> PhaseResult:
    """compress with the over-eager model over main's tip; ``base`` the commit the run
    was cut at (the tip itself when None)."""
    env: PhaseEnv = env_for(w, ScriptedModel(respond=fold_everything))
    if base is not None:
        env = replace(env, base=base, base_version=ok(load_head(w.git, base)))
    return ok(compress(replace(env, mined=None if mined is None else tuple(mined),
                               vectors=vectors)))


def gone(w: World, result: PhaseResult) -> set[str]:
    """The paths the phase's commits archived away."""
    return {c.path for commit in result.commits for c in commit.changes
            if c.data is None}


def refused(result: PhaseResult) -> dict[str, str]:
    """Path -> rule of every compress-refused record the phase earned."""
    return {str(m.get("path")): str(m.get("rule")) for m in result.marks
            if m.kind == "compress-refused"}


# --------------------------------------------------------------------------- the TTLs


UNITS = ("s", "ms", "minutes", "MB")


@settings(max_examples=30)
@given(first=st.integers(1, 100_000), second=st.integers(1, 100_000),
       unit=st.sampled_from(UNITS), mined=st.booleans())
def test_two_ttls_the_veto_refuses_are_never_folded_whatever_the_model_answers(
        first: int, second: int, unit: str, mined: bool) -> None:
    w = blank_world()
    claims = (f"The cache TTL is {first} {unit}.", f"The cache TTL is {second} {unit}.")
    community(w, ((TTL_A, claims[0]), (TTL_B, claims[1])))
    to_run(w)
    version: HeadVersion = ok(w.store.head())
    cache = vectors_of(w)
    similarity = cosine(cache, version, TTL_A, TTL_B)
    assert similarity >= DEDUP_RECALL_FLOOR
    edges = (MinedEdge(TTL_A, TTL_B, similarity),) if mined else ()
    result = night(w, mined=edges, vectors=cache)
    archived = gone(w, result)
    vetoed = bool(merge_veto(*(merge_text(r) for r in (version.get(TTL_A), version.get(TTL_B))
                               if r is not None)))
    assert vetoed == (first != second)
    if vetoed:
        # Neither TTL leaves; each refusal is recorded with its rule.
        assert not archived & {TTL_A, TTL_B}
        rule = "veto" if mined else "veto-pair"
        assert {p: r for p, r in refused(result).items() if p in (TTL_A, TTL_B)} == {
            TTL_A: rule, TTL_B: rule}
        if mined:
            # Kept out of the batch: the rest of the community still folds.
            assert archived == set(NOTES)
            assert result.counts["protected"] == 2
        else:
            # Refused at the answer: the whole canonical is not written.
            assert archived == set()
            assert result.counts["refused_protected"] == 1
    else:
        assert archived == {*NOTES, TTL_A, TTL_B}
        assert refused(result) == {}


# --------------------------------------------------------------------------- members


def test_an_arc_and_a_persons_file_are_never_offered() -> None:
    w = blank_world()
    paths = community(w)
    note(w, f"{OPS}story.html", "How the ops notes hang together.", paths,
         memory_type="arc")
    note(w, "resources/people/ines.html", "Ines runs the ops rota.", paths,
         entities=("person:ines",), aliases=("Ines R",))
    to_run(w)
    model = ScriptedModel(respond=fold_everything)
    result = ok(compress(env_for(w, model)))
    (request,) = model.requests
    titles = [text.split("\n", 1)[0] for text in offered(request).values()]
    assert "title: Story" not in titles and "title: Ines" not in titles
    assert gone(w, result) == set(paths)
    assert refused(result) == {f"{OPS}story.html": "arc",
                               "resources/people/ines.html": "person-file"}
    marks = {str(m.get("path")): m for m in result.marks}
    assert marks[f"{OPS}story.html"] == PendingMark.of(
        "compress-refused", path=f"{OPS}story.html", rule="arc",
        detail="an arc: it tells what connects its members, and a canonical over it would "
               "lose the story")


def test_what_an_earlier_phase_made_or_decided_on_tonight_is_never_offered() -> None:
    w = blank_world()
    paths = community(w)
    to_run(w)
    base = w.main()
    # Tonight, before compress: one note relabelled (a decision about it), one
    # restamped by decay (a sweep), one memory made, and the last one archived, which
    # rewrites the hrefs of the notes linking it (the archive door's, not a decision).
    version: HeadVersion = ok(w.store.head())
    relabel, decay = version.get(NOTES[0]), version.get(NOTES[1])
    assert relabel is not None and decay is not None
    w.raw([PathChange(NOTES[0], add_meta(relabel.html, "memhtml-entity",
                                         "team:ops").encode()),
           PathChange(NOTES[1], set_meta(decay.html, "memhtml-confidence", "0.42").encode())])
    note(w, f"{OPS}made-tonight.html", "A note made tonight.", paths)
    ok(archive(w.store, NOTES[3]))
    result = night(w, base=base)
    assert refused(result) == {NOTES[0]: "decided-this-run",
                               f"{OPS}made-tonight.html": "made-this-run"}
    assert gone(w, result) == {NOTES[1], NOTES[2]}


def test_a_restamped_confidence_and_a_followed_href_are_not_decisions() -> None:
    w = blank_world()
    community(w)
    before: HeadVersion = ok(w.store.head())
    ok(archive(w.store, NOTES[0]))
    after: HeadVersion = ok(w.store.head())
    linking = after.get(NOTES[1])
    was = before.get(NOTES[1])
    assert linking is not None and was is not None and linking.links != was.links
    assert not decided(was, linking)
    restamped = after.get(NOTES[2])
    assert restamped is not None
    w.raw([PathChange(NOTES[2], set_meta(restamped.html, "memhtml-confidence",
                                         "0.3").encode())])
    later: HeadVersion = ok(w.store.head())
    held = later.get(NOTES[2])
    assert held is not None and not decided(restamped, held)
    w.raw([PathChange(NOTES[2], set_meta(held.html, "memhtml-type", "procedural").encode())])
    typed = ok(w.store.head()).get(NOTES[2])
    assert typed is not None and decided(held, typed)


def test_a_pair_a_person_is_asked_about_is_never_offered() -> None:
    w = blank_world()
    paths = community(w)
    finding = Finding("dedup-merge", f"{NOTES[0]} | {NOTES[1]} | numeric",
                      "Review a refused merge", "The veto refused it.",
                      Measurement("predicate", "numeric"))
    ok(write(w.store, task_input(finding)))
    # A task whose body was edited to name other files protects nothing: its finding
    # is no longer the one its name was made from.
    forged = Finding("dedup-merge", f"{NOTES[2]} | {NOTES[3]} | numeric", "Forged", "x",
                     Measurement("predicate", "numeric"))
    data = task_input(forged)
    ok(write(w.store, replace(data, path=task_input(replace(forged, finding="other")).path)))
    to_run(w)
    result = ok(compress(env_for(w, ScriptedModel(respond=fold_everything))))
    assert refused(result) == {NOTES[0]: "review-open", NOTES[1]: "review-open"}
    assert gone(w, result) == set(paths) - {NOTES[0], NOTES[1]}


def test_two_members_linked_contradicts_are_never_folded_together() -> None:
    w = blank_world()
    paths = community(w)
    note(w, f"{OPS}counter.html", "The freeze note is wrong about the freeze.", paths,
         (Link("contradicts", to_document_path(NOTES[1])),))
    to_run(w)
    result = ok(compress(env_for(w, ScriptedModel(respond=fold_everything))))
    assert gone(w, result) == set()
    assert result.counts["refused_protected"] == 1
    assert refused(result) == {NOTES[1]: "contradicts", f"{OPS}counter.html": "contradicts"}


def test_protection_reads_only_what_compress_asks_about() -> None:
    w = blank_world()
    community(w)
    version: HeadVersion = ok(w.store.head())
    protection = protect(version, version, ())
    assert protection.refusal(NOTES[0]) is None
    assert protection.refusal("areas/nowhere.html") is None
    assert NOTES[0] not in protection
