"""The planted corpus's shapes: what it is asked for (``PlantConfig``), what it records
(``PlantManifest``: the planted pairs, alias groups, review pairs and tasks), the
corpus itself (``PlantedCorpus``) and the refusal (``PlantRefused``).

These are what a test or a benchmark holds a night's result against, and what the
scripted embedder reads its pairs from; none of them needs to know how
``eval.planted`` assigns the roles, so they are a module of their own that depends
on nothing in the generator.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Final, Literal, TypeAlias, get_args

from memhtml.contracts.services import PathChange

PLANT_SEED: Final = 15
"""The default seed of the synthetic texts, the role order and every scripted vector."""

DefectKind: TypeAlias = Literal[
    "exact", "frame_key", "near", "paraphrase", "negation", "antonym", "number", "variant",
    "contradiction",
]  # fmt: skip
DEFECT_KINDS: Final[tuple[DefectKind, ...]] = get_args(DefectKind)
Expectation: TypeAlias = Literal["fold", "keep", "veto"]
"""What a correct night does with a pair: fold the newer into the older, leave both
alone, or refuse the fold by a veto predicate."""
FlipPredicate: TypeAlias = Literal["negation", "numeric", "variant"]
"""The veto predicate a flip must fire (the names ``domain.merge`` reports)."""
ReviewReason: TypeAlias = Literal["band", "guard"]
"""Why an entity pair goes to review: its character overlap sits in the review band,
or a guard (differing digits, a one-character token) keeps it from auto-merging."""


@dataclass(frozen=True, slots=True)
class PlantConfig:
    """How many of each defect, at which cosine, stamped when. Defaults are the
    acceptance corpus's."""

    exact: int = 20
    frame_key: int = 20
    near: int = 20
    paraphrase: int = 20
    negation: int = 20
    antonym: int = 10
    number: int = 20
    variant: int = 10
    contradictions: int = 10
    stale_tasks: int = 20
    """Tasks untouched for ``task_idle_days``; two of them share one body."""
    alias_sets: bool = True
    near_cosine: float = 0.95
    paraphrase_cosine: float = 0.88
    flip_cosine: float = 0.95
    seed: int = PLANT_SEED
    base_at: datetime = datetime(2026, 1, 1, tzinfo=UTC)
    """Base document ``i`` is created ``i`` minutes after this."""
    planted_at: datetime = datetime(2026, 6, 1, tzinfo=UTC)
    """Every planted second member is created after this, one minute apart, so it is
    newer than every original."""
    now: datetime = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)
    """The run the corpus is built for: tasks were last touched before it."""
    task_idle_days: int = 90

    def pair_counts(self) -> Mapping[DefectKind, int]:
        return MappingProxyType({
            "exact": self.exact, "frame_key": self.frame_key, "near": self.near,
            "paraphrase": self.paraphrase, "negation": self.negation,
            "antonym": self.antonym, "number": self.number, "variant": self.variant,
            "contradiction": self.contradictions,
        })  # fmt: skip


DEFAULT_CONFIG: Final = PlantConfig()


@dataclass(frozen=True, slots=True)
class PlantedPair:
    """One planted pair: ``older`` is the original (the keeper of any fold)."""

    kind: DefectKind
    older: str
    newer: str
    expect: Expectation
    cosine: float | None = None
    """The scripted cosine between the two vector texts; None where the pair is not
    scripted (frame-key twins and contradictions hold unrelated vectors)."""
    predicate: FlipPredicate | None = None
    """For a flip, the veto predicate that must refuse it (and the only one that fires)."""


@dataclass(frozen=True, slots=True)
class AliasGroup:
    """Entity spellings of one type, as planted, and whether they must become one."""

    entity_type: str
    names: tuple[str, ...]
    """The raw spellings (after the ``type:`` prefix)."""
    merge: bool
    canonical: str | None
    """The expected survivor (normalized) of a merging group: the name with the most
    files, tasks not counted; None for a group that must stay apart."""
    evidence: str


@dataclass(frozen=True, slots=True)
class ReviewPair:
    """Two normalized names of one type that must go to review, not merge."""

    entity_type: str
    left: str
    right: str
    reason: ReviewReason


@dataclass(frozen=True, slots=True)
class PlantManifest:
    """What was planted, by path, for a test to hold the night's result against."""

    pairs: tuple[PlantedPair, ...]
    alias_groups: tuple[AliasGroup, ...]
    review_pairs: tuple[ReviewPair, ...]
    tasks: tuple[str, ...]
    """Every task path (all open, all untouched for the idle days)."""
    twin_tasks: tuple[str, ...]
    """Two open tasks with one body, which must stay two (none with fewer than two
    tasks planted)."""
    tasks_with_entities: tuple[str, ...]
    """Tasks naming an entity, which no phase may rewrite or link."""
    base_paths: tuple[str, ...]
    """One file per kept base document, in base order."""
    person_files: tuple[str, ...]
    entity_holders: Mapping[str, tuple[str, ...]]
    """``type:name`` as written -> the non-task files naming it."""
    dropped_base: int
    """Base documents left out because their path or claim repeated an earlier one's
    (an unplanned duplicate would make the fold counts wrong)."""

    def of_kind(self, kind: DefectKind) -> tuple[PlantedPair, ...]:
        return tuple(p for p in self.pairs if p.kind == kind)

    def counts(self) -> Mapping[str, int]:
        """Pairs per kind, then tasks, alias groups and review pairs."""
        out: dict[str, int] = {kind: len(self.of_kind(kind)) for kind in DEFECT_KINDS}
        out["stale_tasks"] = len(self.tasks)
        out["alias_groups"] = len(self.alias_groups)
        out["review_pairs"] = len(self.review_pairs)
        return MappingProxyType(out)


@dataclass(frozen=True, slots=True)
class PlantedCorpus:
    files: Mapping[str, bytes]
    """Tree path -> file bytes, in path order."""
    manifest: PlantManifest
    vector_texts: Mapping[str, str]
    """Path -> the text the head embeds, for every member of a scripted pair."""
    seed: int

    def changes(self) -> list[PathChange]:
        """The files as one commit's changes, in path order."""
        return [PathChange(path, data) for path, data in self.files.items()]


@dataclass(frozen=True, slots=True)
class PlantRefused:
    """The base documents cannot carry the plan (too few, or too few clean ones)."""

    reason: str
