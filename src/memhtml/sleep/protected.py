"""What compress must not fold, whatever its model answers.

Compress archives every member a canonical absorbs. Told to fold everything, a model
answered with canonicals over an arc written the same night, a person's file (the one
carrying the aliases), and both sides of a pair the merge veto had just refused (a
300 s and a 600 s TTL folded into one canonical): a deep night archived 59 memories
that other phases had made, decided on, or refused to fold. The answer is the model's;
which members may be folded is code's.

**Members compress never offers** (``protect``), each with its rule:

- ``arc``: an ``arc`` memory. It tells what connects its members; a canonical over it
  would keep its words and lose the story.
- ``person-file``: a file under ``resources/people/``. Links (``about_person``) and
  aliases name it; archiving it turns every link into one to an archive.
- ``task``: a task (retention never scores one either).
- ``made-this-run``: a file the run's base did not hold: an earlier phase made it
  tonight (an arc, a person's file, a detected task), or someone committed it on the
  run branch.
- ``decided-this-run``: a file an earlier phase changed tonight (its entities, links,
  text, status or type). Two changes are not decisions about the file: a confidence
  confidence-decay restamped (a sweep over every file), and an href that followed a
  memory another phase archived (the archive door rewrites every inbound link).
- ``review-open``: one side of a pair a person is asked about in an open detected task
  of dedup-merge (a fold the veto refused) or edge-typing (a contradiction seen once).
  The task is read from the tree, its finding from its body; the finding counts only
  when it is the one the task's file name was made from (``finding_digest``), so an
  edited body protects nothing new and loses nothing.
- ``veto``: one side of a near-duplicate pair the merge veto refuses: a derived edge
  (relationship-mining's) at or above ``DEDUP_RECALL_FLOOR``, the cosine dedup-merge
  asks about, whose two memories the veto's predicates (negation, numbers, variants)
  tell apart. This is the pair dedup-merge refused or would refuse tonight, read
  again here rather than from its task, which the night's ten-task cap may not have
  written.

**Canonicals compress refuses whole** (``refuse_canonical``), their members left as
they are: one absorbing two memories that are near duplicates (cosine at or above
``DEDUP_RECALL_FLOOR`` from the run's vectors, or one frame key) the veto refuses
(``veto-pair``: the two TTLs); one absorbing two memories linked ``contradicts``
(``contradicts``); and, as a second line, one naming any protected member (a key the
batch never offered cannot name one, so this holds even if selection changes).

Every refusal is a ``compress-refused`` record in the run's ledger (path, rule, and a
plain line saying why), so a person reading the run sees each member compress was
asked not to fold and why, not only a count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Final, Literal, TypeAlias

import numpy as np

from memhtml.contracts.paths import to_document_path, to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.domain.merge import MergeText, VetoCache
from memhtml.domain.thresholds import DEDUP_RECALL_FLOOR
from memhtml.head import IndexedView, VectorCache
from memhtml.sleep.findings import digest_of_path, finding_digest
from memhtml.sleep.ledger import PendingMark
from memhtml.sleep.phase import MinedEdge
from memhtml.sleep.tasks import open_tasks
from memhtml.store.layout import PEOPLE, original_of_archived

Rule: TypeAlias = Literal[
    "arc", "person-file", "task", "made-this-run", "decided-this-run", "review-open", "veto",
    "veto-pair", "contradicts",
]
MEMBER_RULES: Final[tuple[Rule, ...]] = (
    "arc", "person-file", "task", "made-this-run", "decided-this-run", "review-open", "veto",
)
"""The rules that keep a member out of every batch, in the order they are checked."""
REVIEW_DETECTORS: Final = ("dedup-merge", "edge-typing")
"""The detectors whose open tasks name a pair a person is asked about."""
ARC_TYPE: Final = "arc"


@dataclass(frozen=True, slots=True)
class Refusal:
    """One member compress would not fold: its path, the rule, and why in plain words."""

    path: str
    rule: Rule
    detail: str

    def mark(self) -> PendingMark:
        return PendingMark.of("compress-refused", path=self.path, rule=self.rule,
                              detail=self.detail)


class Protection:
    """The members compress never offers tonight, each with its first refusal (the
    rules of ``MEMBER_RULES``, in order). Judged per path when first asked and kept:
    compress asks about its candidates, not the corpus, so a night reads the texts and
    the base records of those alone."""

    def __init__(self, base: IndexedView, version: IndexedView,
                 reviews: Mapping[str, tuple[str, str]],
                 vetoed: Mapping[str, tuple[str, float, tuple[str, ...]]]) -> None:
        self._base = base
        self._version = version
        self._reviews = reviews
        self._vetoed = vetoed
        self._judged: dict[str, Refusal | None] = {}

    def refusal(self, path: str) -> Refusal | None:
        if path not in self._judged:
            record = self._version.get(path)
            self._judged[path] = None if record is None else _member_refusal(
                record, self._base.get(path), self._reviews, self._vetoed)
        return self._judged[path]

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.refusal(path) is not None


_SETTLED: Final = frozenset({"path", "blob_sha", "html", "confidence", "updated_at", "links",
                             "superseded_by", "warnings"})
"""Record fields a change of which is no decision about the file (or that are compared
apart, ``links`` and ``superseded_by``, with archive paths read as what they archived)."""
_COMPARED: Final = tuple(f.name for f in fields(MemoryRecord) if f.name not in _SETTLED)


def _followed(href: str | None) -> str | None:
    """An href read as the memory it names, an archive path as the path it archived."""
    if href is None:
        return None
    path = to_tree_path(href.strip())
    return original_of_archived(path) or path


def decided(before: MemoryRecord, after: MemoryRecord) -> bool:
    """Whether ``after`` differs from ``before`` by more than a restamped confidence and
    hrefs that followed a memory into the archive."""
    if any(getattr(before, name) != getattr(after, name) for name in _COMPARED):
        return True
    if _followed(before.superseded_by) != _followed(after.superseded_by):
        return True
    return (sorted((link.rel, _followed(link.href)) for link in before.links)
            != sorted((link.rel, _followed(link.href)) for link in after.links))


def review_pairs(view: IndexedView) -> Mapping[str, tuple[str, str]]:
    """Path -> (the other side, the task asking about the pair), for every pair an open
    detected task of ``REVIEW_DETECTORS`` names, read from the task's body and kept only
    when the finding is the one its file name was made from."""
    out: dict[str, tuple[str, str]] = {}
    for detector in REVIEW_DETECTORS:
        marker = f"Finding ({detector}): "
        for task in open_tasks(view, detector):
            digest = digest_of_path(task.path)
            for line in task.body_text.splitlines():
                at = line.find(marker)
                if at < 0:
                    continue
                finding = line[at + len(marker):].strip()
                if finding_digest(detector, finding) != digest:
                    continue
                pair = _pair_of(detector, finding)
                if pair is None:
                    continue
                left, right = pair
                out.setdefault(left, (right, task.path))
                out.setdefault(right, (left, task.path))
    return MappingProxyType(out)


def _pair_of(detector: str, finding: str) -> tuple[str, str] | None:
    """The two paths a finding names: dedup-merge's ``a | b | predicates``,
    edge-typing's ``a|b``."""
    if detector == "dedup-merge":
        parts = [part.strip() for part in finding.split(" | ")]
        return (parts[0], parts[1]) if len(parts) == 3 and parts[0] and parts[1] else None
    left, bar, right = finding.partition("|")
    return (left, right) if bar and left and right and "|" not in right else None


def merge_text(record: MemoryRecord) -> MergeText:
    """What the veto reads of a memory, as dedup-merge hands it."""
    return MergeText(record.claim, record.body_text)


def _named(path: str) -> str:
    return to_document_path(path)


def protect(base: IndexedView, version: IndexedView, mined: Iterable[MinedEdge] | None,
            veto: VetoCache | None = None) -> Protection:
    """The protection of ``version`` (the run's tip as compress starts): ``base`` is the
    version the run was cut at, ``mined`` the run's derived edges (the veto's pairs)."""
    cache = veto or VetoCache()
    vetoed: dict[str, tuple[str, float, tuple[str, ...]]] = {}
    for edge in sorted(mined or (), key=lambda e: (-e.similarity, e.source, e.target)):
        if edge.similarity < DEDUP_RECALL_FLOOR:
            continue
        a, b = version.get(edge.source), version.get(edge.target)
        if a is None or b is None:
            continue
        fired = cache.veto(merge_text(a), merge_text(b))
        if fired:
            vetoed.setdefault(a.path, (b.path, edge.similarity, fired))
            vetoed.setdefault(b.path, (a.path, edge.similarity, fired))
    return Protection(base, version, review_pairs(version), MappingProxyType(vetoed))



def _member_refusal(record: MemoryRecord, before: MemoryRecord | None,
                    reviews: Mapping[str, tuple[str, str]],
                    vetoed: Mapping[str, tuple[str, float, tuple[str, ...]]]
                    ) -> Refusal | None:
    path = record.path
    if record.memory_type == ARC_TYPE:
        return Refusal(path, "arc", "an arc: it tells what connects its members, and a "
                                    "canonical over it would lose the story")
    if path.startswith(PEOPLE):
        return Refusal(path, "person-file", "a person's file: links and aliases name it")
    if record.memory_type == "task":
        return Refusal(path, "task", "a task")
    if before is None:
        return Refusal(path, "made-this-run", "made tonight by an earlier phase of this run "
                                              "(or committed on the run branch)")
    if decided(before, record):
        return Refusal(path, "decided-this-run",
                       "changed tonight by an earlier phase of this run (beyond a decayed "
                       "confidence or a link following an archived memory)")
    review = reviews.get(path)
    if review is not None:
        other, task = review
        return Refusal(path, "review-open", f"one side of a pair a person is asked about, "
                                            f"with {_named(other)} (task {_named(task)})")
    pair = vetoed.get(path)
    if pair is not None:
        other, similarity, fired = pair
        return Refusal(path, "veto", f"one side of a near-duplicate pair the merge veto "
                                     f"refuses, with {_named(other)} (cosine "
                                     f"{similarity:.4f}; {', '.join(fired)})")
    return None


def _cosine(vectors: VectorCache | None, a: MemoryRecord, b: MemoryRecord) -> float | None:
    if vectors is None:
        return None
    left, right = vectors.get(a.content_hash), vectors.get(b.content_hash)
    if left is None or right is None:
        return None
    x, y = np.asarray(left, dtype=np.float64), np.asarray(right, dtype=np.float64)
    norms = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(np.dot(x, y)) / norms if norms else None


def _contradicting(a: MemoryRecord, b: MemoryRecord) -> bool:
    return any(link.rel == "contradicts" and _followed(link.href) == other.path
               for one, other in ((a, b), (b, a)) for link in one.links)


def refuse_canonical(members: Sequence[MemoryRecord], protection: Protection,
                     vectors: VectorCache | None, veto: VetoCache | None = None
                     ) -> tuple[Refusal, ...]:
    """Why a canonical absorbing ``members`` (the ones it would archive, in batch
    order) must not be written: a protected member, two near duplicates the veto
    refuses, two memories linked ``contradicts``; empty when it may be."""
    cache = veto or VetoCache()
    out: list[Refusal] = [r for m in members if (r := protection.refusal(m.path)) is not None]
    for n, a in enumerate(members):
        for b in members[n + 1:]:
            if _contradicting(a, b):
                out += [Refusal(x.path, "contradicts",
                                f"absorbed with {_named(y.path)} in one canonical, and the "
                                "two are linked contradicts") for x, y in ((a, b), (b, a))]
                continue
            similarity = _cosine(vectors, a, b)
            near = (bool(a.frame_key) and a.frame_key == b.frame_key) or (
                similarity is not None and similarity >= DEDUP_RECALL_FLOOR)
            if not near:
                continue
            fired = cache.veto(merge_text(a), merge_text(b))
            if fired:
                shown = "one frame key" if similarity is None else f"cosine {similarity:.4f}"
                out += [Refusal(x.path, "veto-pair",
                                f"absorbed with {_named(y.path)} in one canonical: near "
                                f"duplicates ({shown}) the merge veto refuses "
                                f"({', '.join(fired)})") for x, y in ((a, b), (b, a))]
    return tuple(out)


def distinct(refusals: Iterable[Refusal]) -> tuple[Refusal, ...]:
    """Each refusal once (by path, rule and detail), in the order first given."""
    return tuple(dict.fromkeys(refusals))
