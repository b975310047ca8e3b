"""A planted-defect corpus: memory files whose every defect is known in advance.

The curation run's deterministic phases are judged by what they find in a corpus
where the answer is written down beforehand: exact duplicates and frame-key twins
that must fold, near-duplicates above the merge cosine that must fold, paraphrases
below it that must not, polarity, number and variant flips that the veto must
refuse, entity spellings that must merge and versioned names that must not, authored
contradictions, and tasks nobody touched for months. ``plant_corpus`` builds the
files from any list of base documents (SciFact for the benchmark, ``synthetic_docs``
for tests) and a manifest naming every planted pair, group and task.

Cosine is what the merge phase mines, so the corpus comes with its own embedder
(``eval.planted_embedder``): ``ScriptedEmbedder`` gives every text a seeded, nearly
orthogonal unit vector and puts the second member of each scripted pair at exactly
the planted cosine to the first. No model and no network: a test can say which pairs
sit above 0.92, and the answer does not depend on what some embedder happens to think
of two sentences.

Only documents whose text carries no polarity marker, no variant qualifier and no
word beside its prefixed or antonym form are given a planted role. A base text that
already said "not" or held "active" beside "inactive" would make a fold pair look
like a flip (or a flip look like agreement) for reasons the plan did not put there,
and the manifest would lie. The markers are the veto's own (``domain.veto_text``),
widened here on purpose: a document is passed over when in doubt, never mislabelled.

This module assigns the roles and writes the files. The config, the manifest and the
corpus value are ``eval.planted_manifest``; the words a clean text must not hold are
``eval.planted_words``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Final

from returns.result import Failure, Result, Success

from memhtml.contracts.record import Link
from memhtml.contracts.vocabulary import MemoryType, TaskStatus
from memhtml.eval.beir import BeirDoc, memory_path, split_claim
from memhtml.eval.planted_manifest import (
    DEFAULT_CONFIG,
    PLANT_SEED,
    AliasGroup,
    DefectKind,
    Expectation,
    FlipPredicate,
    PlantConfig,
    PlantedCorpus,
    PlantedPair,
    PlantManifest,
    PlantRefused,
    ReviewPair,
)
from memhtml.eval.planted_words import _PREFIXES, polar_clean, veto_tokens
from memhtml.format import NewMemoryInput, new_memory_doc, serialize_memory
from memhtml.head import frame_key_of, record_from, vector_text_of

DEFAULT_SYNTHETIC_DOCS: Final = 240
"""Enough synthetic documents for every default role (about 200 are taken) and a few
left over untouched."""
PLANT_TAG: Final = "planted"

_STAMP = "%Y-%m-%dT%H:%M:%SZ"


# --------------------------------------------------------------------------- synthetic texts

_PLACES: Final = (
    "coral reef", "glacier", "river delta", "pine forest", "salt marsh", "desert basin",
    "alpine lake", "kelp bed", "peat bog", "tidal flat", "savanna", "mangrove stand",
    "chalk stream", "heath", "fjord", "dune field",
)  # fmt: skip
_MEASURES: Final = (
    "nitrogen levels", "water temperature", "bird counts", "pollen density",
    "soil moisture", "algae cover", "seed yield", "shoreline erosion", "insect counts",
    "leaf litter", "snow depth", "salinity",
)  # fmt: skip
_SEASONS: Final = ("spring", "summer", "autumn", "winter", "the wet season", "the dry season")
_LANDMARKS: Final = (
    "northern pier", "old weir", "ridge path", "east gauge", "ferry landing", "lookout tower",
    "research hut", "south culvert",
)  # fmt: skip


def synthetic_docs(count: int = DEFAULT_SYNTHETIC_DOCS, seed: int = PLANT_SEED
                   ) -> tuple[BeirDoc, ...]:
    """``count`` small field-survey abstracts, each claim unique by its survey number.

    The vocabulary holds no marker, qualifier, prefixed form or opposite, so every
    document can take any role.
    """
    out: list[BeirDoc] = []
    for i in range(count):
        pick = _digest_int(f"{seed}:synthetic:{i}")
        place = _PLACES[pick % len(_PLACES)]
        measure = _MEASURES[(pick >> 8) % len(_MEASURES)]
        season = _SEASONS[(pick >> 16) % len(_SEASONS)]
        landmark = _LANDMARKS[(pick >> 24) % len(_LANDMARKS)]
        plots = 4 + (pick >> 32) % 40
        year = 2001 + (pick >> 40) % 20
        number = i + 1
        text = (
            f"Survey {number} of the {place} tracked {measure} through {season}. "
            f"Field teams sampled {plots} plots near the {landmark} and logged each "
            f"reading by hand. The {measure} series for survey {number} was compared with "
            f"the {year} baseline."
        )
        out.append(BeirDoc(f"s{number:05d}", f"{place.title()} survey {number}: {measure}",
                           text))
    return tuple(out)


# --------------------------------------------------------------------------- rendering


@dataclass(frozen=True, slots=True)
class _Spec:
    """One file to render."""

    path: str
    title: str
    claim: str
    body: tuple[str, ...]
    created: datetime
    updated: datetime
    memory_type: MemoryType = "semantic"
    entities: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    task_status: TaskStatus | None = None


def _render(spec: _Spec) -> str:
    doc = new_memory_doc(NewMemoryInput(
        title=spec.title, claim=spec.claim, memory_type=spec.memory_type,
        at=spec.updated.strftime(_STAMP), body=spec.body, entities=spec.entities,
        tags=(PLANT_TAG,), aliases=spec.aliases, links=spec.links,
        task_status=spec.task_status,
    ))  # fmt: skip
    return serialize_memory(replace(doc, metas=replace(
        doc.metas, created_at=spec.created.strftime(_STAMP))))


def _digest_int(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def _slug(text: str, limit: int = 48) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit].strip("-") or "doc"


def _sibling(path: str, suffix: str) -> str:
    """The path of a planted copy: next to its original, named after it."""
    return f"{path.removesuffix('.html')}-{suffix}.html"


def _lower_first(text: str) -> str:
    """The sentence as the tail of another: its first letter lowered unless the first
    word is an acronym ("DNA", "M1")."""
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        return text[0].lower() + text[1:]
    return text


# --------------------------------------------------------------------------- base documents


@dataclass(frozen=True, slots=True)
class _Base:
    index: int
    doc: BeirDoc
    path: str
    title: str
    claim: str
    rest: str
    tokens: frozenset[str]
    clean: bool
    order: int
    """Place in the seeded role order (a digest of the id), so roles spread over the
    corpus instead of taking its first documents."""

    @property
    def whole(self) -> str:
        return f"{self.claim} {self.rest}".strip()


def _bases(docs: Iterable[BeirDoc], seed: int, limit: int | None = None
           ) -> tuple[list[_Base], int]:
    kept: list[_Base] = []
    paths: set[str] = set()
    keys: set[str] = set()
    dropped = 0
    for doc in docs:
        if limit is not None and len(kept) >= limit:
            break
        claim, rest = split_claim(doc.text)
        title = " ".join(doc.title.split()) or claim[:80] or doc.doc_id
        claim = claim or title
        path = memory_path(doc)
        key = frame_key_of(claim)
        if path in paths or key in keys:
            dropped += 1
            continue
        paths.add(path)
        keys.add(key)
        tokens = veto_tokens(f"{claim} {rest}")
        kept.append(_Base(len(kept), doc, path, title, claim, rest, tokens,
                          polar_clean(tokens), _digest_int(f"{seed}:role:{doc.doc_id}")))
    return kept, dropped


# --------------------------------------------------------------------------- the plan

_NEAR_LEADS: Final = ("In short,", "Put simply,", "To summarize,", "Briefly,", "In brief,")
_PARAPHRASE_LEADS: Final = ("Reportedly,", "By this account,", "It appears that",
                            "As one study puts it,")
_TWIN_NOTE: Final = "Recorded again from the same source."
_SUBJECT_ADJ: Final = ("amber", "cobalt", "crimson", "golden", "ivory", "jade", "scarlet",
                       "silver")
_SUBJECT_NOUN: Final = ("ledger", "beacon", "harbor", "lantern", "meadow", "orchard", "quarry",
                        "summit")
_SUBJECT_PART: Final = ("sync job", "export", "feature flag", "report builder", "cache warmer",
                        "mirror", "webhook", "search index")
_NEGATABLE: Final = ("enabled", "allowed", "supported", "available", "required", "visible",
                     "cached", "encrypted", "scheduled", "indexed")
_ANTONYMS: Final = (
    ("enabled", "disabled"), ("allowed", "denied"), ("accepted", "rejected"),
    ("available", "unavailable"), ("supported", "unsupported"), ("active", "inactive"),
    ("compliant", "noncompliant"), ("connected", "disconnected"), ("valid", "invalid"),
    ("safe", "unsafe"),
)  # fmt: skip
_VARIANTS: Final = (("M1", "Pro"), ("M2", "Max"), ("M3", "Pro"), ("M4", "Max"))

_PREDICATE: Final[Mapping[DefectKind, FlipPredicate]] = MappingProxyType(
    {"negation": "negation", "antonym": "negation", "number": "numeric", "variant": "variant"}
)


def _subject(i: int) -> str:
    adj = _SUBJECT_ADJ[i % len(_SUBJECT_ADJ)]
    noun = _SUBJECT_NOUN[(i // len(_SUBJECT_ADJ)) % len(_SUBJECT_NOUN)]
    part = _SUBJECT_PART[(i // (len(_SUBJECT_ADJ) * len(_SUBJECT_NOUN))) % len(_SUBJECT_PART)]
    return f"The {adj} {noun} {part}"


def _forms(word: str) -> frozenset[str]:
    """A flip word with every prefixed form, none of which the base text may hold."""
    return frozenset({word, *(p + word for p in _PREFIXES)})


@dataclass(frozen=True, slots=True)
class _AliasPlan:
    entity_type: str
    spellings: tuple[tuple[str, int], ...]
    """Raw spelling and how many base files name it."""
    merge: bool
    canonical: str | None
    evidence: str
    apart_from: tuple[str, ...] = ()
    """Names of a merging group these must stay apart from."""


_PERSON_PATH: Final = "resources/people/laith-al-saadoon.html"
_ALIAS_PLAN: Final = (
    _AliasPlan("service", (("checkout-api", 5), ("Checkout API", 2), ("CHECKOUT API", 1),
                           ("checkout_api", 1)), True, "checkout-api", "casing and separator"),
    _AliasPlan("team", (("payments-platform", 3), ("Payments Platform", 1),
                        ("payments_platform", 1)), True, "payments-platform",
               "casing and separator"),
    _AliasPlan("person", (("laith-al-saadoon", 3), ("Laith Al-Saadoon", 1), ("laith", 2)),
               True, "laith-al-saadoon", "declared alias"),
    _AliasPlan("service", (("payments-api", 2),), False, None,
               "another service of the same domain", ("checkout-api",)),
    _AliasPlan("service", (("postgres-14", 2), ("postgres-15", 2)), False, None, "version"),
    _AliasPlan("region", (("us-east-1", 2), ("us-east-2", 2)), False, None, "version"),
    _AliasPlan("service", (("service-a", 1), ("service-b", 1)), False, None,
               "one-character token"),
    _AliasPlan("service", (("notify-hub", 2), ("notifier-hub", 1)), False, None,
               "review band"),
)  # fmt: skip
_REVIEW: Final = (
    ReviewPair("region", "us-east-1", "us-east-2", "guard"),
    ReviewPair("service", "notifier-hub", "notify-hub", "band"),
    ReviewPair("service", "postgres-14", "postgres-15", "guard"),
    ReviewPair("service", "service-a", "service-b", "guard"),
)
_PERSON_ALIASES: Final = ("Laith", "Laith Al-Saadoon")
_TASK_ENTITIES: Final = ("person:laith", "service:Checkout API")
_TASK_THINGS: Final = (
    "quarterly export", "sampling rota", "gauge calibration", "archive index",
    "field manual", "plot register", "weir survey", "data dictionary", "site map",
    "equipment log",
)  # fmt: skip


def extra_files(config: PlantConfig = DEFAULT_CONFIG) -> int:
    """Files the plan adds beyond one per base document: each planted second member
    (contradictions pair two base files and add none), the tasks, the person file.
    A caller aiming at N memories passes N minus this many base documents."""
    counts = config.pair_counts()
    members = sum(n for kind, n in counts.items() if kind != "contradiction")
    return members + config.stale_tasks + (1 if config.alias_sets else 0)


class _Builder:
    """The plan's state while it assigns roles: which bases are taken, what to render."""

    def __init__(self, bases: list[_Base], config: PlantConfig) -> None:
        self.config = config
        self.bases = bases
        self.pool = sorted((b for b in bases if b.clean), key=lambda b: (b.order, b.index))
        self.rest_pool = sorted((b for b in bases if not b.clean),
                                key=lambda b: (b.order, b.index))
        self.used: set[int] = set()
        self.overrides: dict[int, _Spec] = {}
        self.entities: dict[int, tuple[str, ...]] = {}
        self.extras: list[_Spec] = []
        self.pairs: list[PlantedPair] = []
        self.planted = 0

    def take(self, fits: Callable[[_Base], bool], clean: bool = True) -> _Base | None:
        """The first free base that fits; a role that needs no clean text takes an
        unclean one first and leaves the clean ones to the pairs."""
        pools = (self.pool,) if clean else (self.rest_pool, self.pool)
        for pool in pools:
            for base in pool:
                if base.index not in self.used and fits(base):
                    self.used.add(base.index)
                    return base
        return None

    def base_at(self, base: _Base) -> datetime:
        return self.config.base_at + timedelta(minutes=base.index)

    def next_at(self) -> datetime:
        self.planted += 1
        return self.config.planted_at + timedelta(minutes=self.planted)

    def original(self, base: _Base, claim: str | None = None,
                 body: tuple[str, ...] | None = None) -> _Spec:
        at = self.base_at(base)
        spec = _Spec(base.path, base.title, claim or base.claim,
                     body if body is not None else ((base.rest,) if base.rest else ()), at, at)
        if claim is not None or body is not None:
            self.overrides[base.index] = spec
        return spec

    def copy(self, of: _Spec, suffix: str, claim: str, body: tuple[str, ...]) -> _Spec:
        at = self.next_at()
        spec = _Spec(_sibling(of.path, suffix), of.title, claim, body, at, at)
        self.extras.append(spec)
        return spec


def _fold_fits(make: Callable[[_Base], tuple[str, ...]]) -> Callable[[_Base], bool]:
    """A base whose planted copy adds no word that flips against the original."""
    return lambda base: polar_clean(base.tokens | veto_tokens(" ".join(make(base))))


def _lead_fits(lead: str) -> Callable[[_Base], bool]:
    """A base the lead phrase can go in front of without flipping anything."""
    words = veto_tokens(lead)
    return lambda base: polar_clean(base.tokens | words)


def _flip_fits(claim: str, avoid: frozenset[str]) -> Callable[[_Base], bool]:
    """A base that holds none of the flip's words, and that the made-up claim leaves
    clean: the planted word is then the only one that differs."""
    words = veto_tokens(claim)
    return lambda base: avoid.isdisjoint(base.tokens) and polar_clean(base.tokens | words)


def _plant_pairs(b: _Builder) -> Result[None, PlantRefused]:
    config = b.config

    def refuse(kind: str) -> Result[None, PlantRefused]:
        return Failure(PlantRefused(
            f"too few base documents fit the {kind} pairs ({len(b.pool)} clean of "
            f"{len(b.bases)}); pass more documents"))

    def body_of(base: _Base) -> tuple[str, ...]:
        return (base.rest,) if base.rest else ()

    # exact: same article, so one content hash and one vector text.
    for _ in range(config.exact):
        base = b.take(lambda _base: True)
        if base is None:
            return refuse("exact")
        first = b.original(base)
        second = b.copy(first, "copy", first.claim, first.body)
        b.pairs.append(PlantedPair("exact", first.path, second.path, "fold", 1.0))
    # frame_key: the claim in other case and punctuation, a sentence added to the body.
    def twin_claim(base: _Base) -> str:
        return base.claim.lower().rstrip(" .")

    def twin_body(base: _Base) -> tuple[str, ...]:
        return (f"{base.rest} {_TWIN_NOTE}".strip(),)

    for _ in range(config.frame_key):
        base = b.take(_fold_fits(lambda x: (twin_claim(x), *twin_body(x))))
        if base is None:
            return refuse("frame-key")
        first = b.original(base)
        second = b.copy(first, "twin", twin_claim(base), twin_body(base))
        b.pairs.append(PlantedPair("frame_key", first.path, second.path, "fold"))
    # near and paraphrase: one lead phrase before the claim, the body unchanged.
    reworded: tuple[tuple[DefectKind, int, tuple[str, ...], float, Expectation], ...] = (
        ("near", config.near, _NEAR_LEADS, config.near_cosine, "fold"),
        ("paraphrase", config.paraphrase, _PARAPHRASE_LEADS, config.paraphrase_cosine, "keep"),
    )
    for kind, count, leads, cosine, expect in reworded:
        for n in range(count):
            lead = leads[n % len(leads)]
            base = b.take(_lead_fits(lead))
            if base is None:
                return refuse(kind)
            first = b.original(base)
            second = b.copy(first, kind, f"{lead} {_lower_first(base.claim)}", body_of(base))
            b.pairs.append(PlantedPair(kind, first.path, second.path, expect, cosine))
    return _plant_flips(b, refuse)


def _plant_flips(b: _Builder, refuse: Callable[[str], Result[None, PlantRefused]]
                 ) -> Result[None, PlantRefused]:
    """Flips carry a made-up claim over a base text kept whole as the body, so the one
    word that differs is the planted one and sits in the claim, where every predicate
    reads."""
    config = b.config
    plans: list[tuple[DefectKind, str, str, frozenset[str]]] = []
    for n in range(config.negation):
        word = _NEGATABLE[n % len(_NEGATABLE)]
        plans.append(("negation", f"is {word}.", f"is not {word}.", _forms(word)))
    for n in range(config.antonym):
        word, opposite = _ANTONYMS[n % len(_ANTONYMS)]
        plans.append(("antonym", f"is {word}.", f"is {opposite}.",
                      _forms(word) | _forms(opposite)))
    for n in range(config.number):
        # The first is the acceptance's own "3.5" against "35".
        whole, tenth = 1 + (n * 7 + 2) % 9, 1 + (n * 5 + 4 + n // 9) % 9
        plans.append(("number", f"times out after {whole}.{tenth} seconds.",
                      f"times out after {whole}{tenth} seconds.", frozenset()))
    for n in range(config.variant):
        chip, qualifier = _VARIANTS[n % len(_VARIANTS)]
        plans.append(("variant", f"ships with the {chip} chip.",
                      f"ships with the {chip} {qualifier} chip.", frozenset()))
    for subject, (kind, tail, flipped, avoid) in enumerate(plans):
        name = _subject(subject)
        base = b.take(_flip_fits(f"{name} {tail}", avoid))
        if base is None:
            return refuse(kind)
        first = b.original(base, f"{name} {tail}", (base.whole,))
        second = b.copy(first, kind, f"{name} {flipped}", first.body)
        b.pairs.append(PlantedPair(kind, first.path, second.path, "veto", config.flip_cosine,
                                   _PREDICATE[kind]))
    # contradictions: two unrelated bases, the later one authoring the link.
    for _ in range(config.contradictions):
        one = b.take(lambda _x: True, clean=False)
        two = b.take(lambda _x: True, clean=False)
        if one is None or two is None:
            return refuse("contradiction")
        older, newer = (one, two) if one.index < two.index else (two, one)
        b.original(older)
        b.overrides[newer.index] = _Spec(
            newer.path, newer.title, newer.claim, (newer.rest,) if newer.rest else (),
            b.base_at(newer), b.next_at(), links=(Link("contradicts", "/" + older.path),))
        b.pairs.append(PlantedPair("contradiction", older.path, newer.path, "keep"))
    return Success(None)


def _plant_aliases(b: _Builder) -> Result[tuple[AliasGroup, ...], PlantRefused]:
    if not b.config.alias_sets:
        return Success(())
    groups: list[AliasGroup] = []
    for plan in _ALIAS_PLAN:
        for spelling, files in plan.spellings:
            for _ in range(files):
                base = b.take(lambda _x: True, clean=False)
                if base is None:
                    return Failure(PlantRefused("too few base documents to hold the entities"))
                b.entities[base.index] = (f"{plan.entity_type}:{spelling}",)
        names = (*plan.apart_from, *(s for s, _ in plan.spellings))
        groups.append(AliasGroup(plan.entity_type, names, plan.merge, plan.canonical,
                                 plan.evidence))
    at = b.config.base_at - timedelta(days=1)
    b.extras.append(_Spec(
        _PERSON_PATH, "Laith Al-Saadoon", "Laith Al-Saadoon runs the payments platform rota.",
        ("Ask him about settlement retries and the ledger reconciliation jobs.",), at, at,
        entities=("person:laith-al-saadoon",), aliases=_PERSON_ALIASES))
    return Success(tuple(groups))


def _plant_tasks(b: _Builder) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    config = b.config
    paths: list[str] = []
    with_entities: list[str] = []
    statuses: tuple[TaskStatus, ...] = ("todo", "doing", "blocked")
    for j in range(config.stale_tasks):
        twin = j < 2
        thing = _TASK_THINGS[0 if twin else j % len(_TASK_THINGS)]
        claim = (f"Follow up on the {thing} with the field team." if twin
                 else f"Follow up on the {thing} with the field team (item {j + 1}).")
        title = f"Task {j + 1}: follow up on the {thing}"
        updated = config.now - timedelta(days=config.task_idle_days, hours=j + 1)
        entities = (_TASK_ENTITIES[j - 2],) if config.alias_sets and 2 <= j < 4 else ()
        spec = _Spec(
            f"areas/tasks/{_slug(title)}.html", title, claim,
            ("Raised at the weekly review and still waiting for an owner.",),
            updated - timedelta(days=7), updated, memory_type="task",
            entities=entities, task_status="todo" if twin else statuses[j % len(statuses)])
        b.extras.append(spec)
        paths.append(spec.path)
        if entities:
            with_entities.append(spec.path)
    return tuple(paths), tuple(paths[:2]) if len(paths) >= 2 else (), tuple(with_entities)


def plant_corpus(docs: Iterable[BeirDoc], config: PlantConfig = DEFAULT_CONFIG,
                 base_count: int | None = None) -> Result[PlantedCorpus, PlantRefused]:
    """Every base document as a memory file, plus the planted defects and their manifest.

    ``base_count`` keeps that many base documents (after dropping repeats) and reads
    no further: ``base_count = N - extra_files(config)`` gives a corpus of exactly N
    files. Roles are given in a fixed order (exact, frame-key, near, paraphrase, the
    four flips, contradictions, entities) to documents taken in a seeded digest order,
    so the same documents and config give the same bytes in any process.
    """
    bases, dropped = _bases(docs, config.seed, base_count)
    if not bases:
        return Failure(PlantRefused("no base documents"))
    if base_count is not None and len(bases) < base_count:
        return Failure(PlantRefused(
            f"{base_count} base documents wanted, {len(bases)} distinct ones given"))
    builder = _Builder(bases, config)
    return _plant_pairs(builder).bind(lambda _: _plant_aliases(builder)).bind(
        lambda groups: _assemble(builder, groups, dropped))


def _assemble(b: _Builder, groups: tuple[AliasGroup, ...], dropped: int
              ) -> Result[PlantedCorpus, PlantRefused]:
    tasks, twins, task_entities = _plant_tasks(b)
    specs: list[_Spec] = []
    for base in b.bases:
        spec = b.overrides.get(base.index) or b.original(base)
        entities = b.entities.get(base.index)
        specs.append(replace(spec, entities=entities) if entities else spec)
    specs += b.extras
    files: dict[str, bytes] = {}
    holders: dict[str, list[str]] = {}
    for spec in specs:
        if spec.path in files:
            return Failure(PlantRefused(f"two planted files at {spec.path}"))
        files[spec.path] = _render(spec).encode("utf-8")
        if spec.memory_type != "task":
            for entity in spec.entities:
                holders.setdefault(entity, []).append(spec.path)
    texts: dict[str, str] = {}
    for pair in b.pairs:
        if pair.cosine is None:
            continue
        for path in (pair.older, pair.newer):
            match record_from(files[path].decode("utf-8"), path):
                case Success(record):
                    texts[path] = vector_text_of(record)
                case Failure(error):
                    return Failure(PlantRefused(f"{path} does not parse: {error.reason}"))
    manifest = PlantManifest(
        pairs=tuple(b.pairs), alias_groups=groups,
        review_pairs=_REVIEW if b.config.alias_sets else (), tasks=tasks, twin_tasks=twins,
        tasks_with_entities=task_entities, base_paths=tuple(base.path for base in b.bases),
        person_files=(_PERSON_PATH,) if b.config.alias_sets else (),
        entity_holders=MappingProxyType({k: tuple(sorted(v)) for k, v in sorted(holders.items())}),
        dropped_base=dropped,
    )  # fmt: skip
    return Success(PlantedCorpus(
        MappingProxyType({path: files[path] for path in sorted(files)}), manifest,
        MappingProxyType({path: texts[path] for path in sorted(texts)}), b.config.seed))
