"""An oracle for the planted corpus: a ``ScriptedModel`` responder that answers every
model phase's tool from what the manifest says is true.

The batching kernel frames each member under an opaque key with its rendered text,
so the oracle reads a member back to its planted file by the one thing every phase
shows and every planted file holds uniquely: its claim (whitespace collapsed). A claim
two files share (an exact copy and its original) names neither, so the oracle can
never answer about a file it cannot tell apart from another. What it answers is then
stated in paths, the manifest's own terms:

- dedup-merge (``group_duplicate_memories``): every configured group whose members
  the batch offered, keys in batch order;
- entity-resolution (``cluster_entity_names``): every configured cluster whose names
  one batch of one type offered, at its configured confidence;
- edge-typing (``type_edges``): ``contradicts`` for a configured contradiction pair,
  ``none`` for every other pair, so each batch is judged whole;
- arc-synthesis (``choose_arcs``): no community deserves an arc;
- compress (``write_canonicals``): every configured canonical whose members the batch
  offered, absorbing exactly those members;
- task-detection (``report_open_commitments``): nothing, or (``detect_first``) one
  finding for each batch's first member, quoting that member's first sentence.

``stranger`` poisons every answer with a key no batch offered (``m99``, a path): it
replaces the second member of each dedup group, joins each compress canonical's
``absorbs``, and adds a verdict of its own to each edge-typing batch.

The oracle is a frozen value and a plain function of the request, so two runs over
one corpus get the same answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from returns.result import Success

from memhtml.contracts.errors import ModelError, ModelMalformed
from memhtml.contracts.services import ModelRequest
from memhtml.eval.planted_manifest import DefectKind, PlantedCorpus
from memhtml.head import record_from
from tests.unit.sleep.fake_model import Answer, offered

ORACLE_NAME = "planted-oracle"
CONFIDENT = 0.9
"""The confidence of every verdict, cluster and finding the oracle states (above each
phase's floor)."""


def collapsed(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class Canon:
    """One canonical the oracle writes when a compress batch offers all its members."""

    title: str
    claim: str
    body: tuple[str, ...]
    absorbs: tuple[str, ...]
    """Paths of the members it absorbs."""


@dataclass(frozen=True)
class EntityCluster:
    """Names of one entity type the oracle calls one thing."""

    entity_type: str
    names: tuple[str, ...]
    confidence: float = CONFIDENT


@dataclass(frozen=True)
class Oracle:
    """The responder (see the module docstring). Build it with ``oracle_for``."""

    path_of: Mapping[str, str]
    """Collapsed claim -> the one file holding it (claims two files share are absent)."""
    groups: tuple[tuple[str, ...], ...] = ()
    """Paths that are one memory, each group in corpus order (oldest first)."""
    contradictions: frozenset[frozenset[str]] = frozenset()
    """Unordered path pairs that contradict each other."""
    clusters: tuple[EntityCluster, ...] = ()
    canonicals: tuple[Canon, ...] = ()
    detect_first: bool = False
    stranger: str | None = None

    def __call__(self, request: ModelRequest) -> Answer | ModelError:
        members = offered(request)
        match request.tool_name:
            case "group_duplicate_memories":
                return self._dedup(members)
            case "cluster_entity_names":
                return self._entities(members)
            case "type_edges":
                return self._edges(members)
            case "choose_arcs":
                return {"communities": []}
            case "write_canonicals":
                return self._compress(members)
            case "report_open_commitments":
                return self._commitments(members)
            case other:
                return ModelMalformed(ORACLE_NAME, f"no oracle for the tool {other}")

    # -- reading members back ------------------------------------------------------------

    def _keys_by_path(self, members: Mapping[str, str], claim_line: int,
                      prefix: str) -> dict[str, str]:
        """Planted path -> key, for members whose claim sits on line ``claim_line`` of
        their text after ``prefix``."""
        out: dict[str, str] = {}
        for key, text in members.items():
            lines = text.split("\n")
            if len(lines) <= claim_line or not lines[claim_line].startswith(prefix):
                continue
            path = self.path_of.get(collapsed(lines[claim_line].removeprefix(prefix)))
            if path is not None:
                out[path] = key
        return out

    # -- the phases ----------------------------------------------------------------------

    def _dedup(self, members: Mapping[str, str]) -> Answer:
        # "set N: title", "claim: ...", then the article.
        keys = self._keys_by_path(members, 1, "claim: ")
        groups: list[dict[str, object]] = []
        for group in self.groups:
            if not all(path in keys for path in group):
                continue
            named = [keys[path] for path in group]
            if self.stranger is not None:
                named[1] = self.stranger
            groups.append({"members": named})
        return {"groups": groups}

    def _entities(self, members: Mapping[str, str]) -> Answer:
        keys: dict[tuple[str, str], str] = {}
        for key, text in members.items():
            row = json.loads(text)
            keys[(str(row["type"]), str(row["name"]))] = key
        clusters: list[dict[str, object]] = []
        for cluster in self.clusters:
            named = [keys.get((cluster.entity_type, name)) for name in cluster.names]
            if any(key is None for key in named):
                continue
            clusters.append({"members": named, "canonical": named[0],
                             "confidence": cluster.confidence})
        return {"clusters": clusters}

    def _edges(self, members: Mapping[str, str]) -> Answer:
        verdicts: list[dict[str, object]] = []
        for key, text in members.items():
            line_a, _, line_b = text.partition("\n")
            pair = frozenset((self.path_of.get(collapsed(line_a.removeprefix("a: ")), ""),
                              self.path_of.get(collapsed(line_b.removeprefix("b: ")), "")))
            if pair in self.contradictions:
                verdicts.append({"key": key, "rel": "contradicts", "subject": "b",
                                 "confidence": CONFIDENT})
            else:
                verdicts.append({"key": key, "rel": "none", "subject": "a",
                                 "confidence": CONFIDENT})
        if self.stranger is not None:
            verdicts.append({"key": self.stranger, "rel": "none", "subject": "a",
                             "confidence": CONFIDENT})
        return {"verdicts": verdicts}

    def _compress(self, members: Mapping[str, str]) -> Answer:
        # "title: ...", "type: ...", an optional "day: ...", "claim: ...", "text: ...".
        keys: dict[str, str] = {}
        for key, text in members.items():
            claim = next((line.removeprefix("claim: ") for line in text.split("\n")
                          if line.startswith("claim: ")), None)
            path = None if claim is None else self.path_of.get(collapsed(claim))
            if path is not None:
                keys[path] = key
        canonicals: list[dict[str, object]] = []
        for canon in self.canonicals:
            if not all(path in keys for path in canon.absorbs):
                continue
            absorbs = [keys[path] for path in canon.absorbs]
            if self.stranger is not None:
                absorbs.append(self.stranger)
            canonicals.append({"title": canon.title, "claim": canon.claim,
                               "body": list(canon.body), "absorbs": absorbs})
        return {"canonicals": canonicals}

    def _commitments(self, members: Mapping[str, str]) -> Answer:
        if not self.detect_first or not members:
            return {"findings": []}
        key, text = next(iter(members.items()))
        # "title", then the article: its first sentence is quoted verbatim.
        article = text.split("\n", 1)[1] if "\n" in text else text
        sentence = first_sentence(article)
        return {"findings": [{"key": key, "owed": "a follow-up on this survey",
                              "sentence": sentence, "confidence": CONFIDENT}]}


def first_sentence(text: str) -> str:
    """The text up to and including its first full stop followed by a space (or all)."""
    head, dot, _ = text.partition(". ")
    return head + "." if dot else text


def claim_paths(files: Mapping[str, bytes]) -> Mapping[str, str]:
    """Collapsed claim -> path, over every file that parses; a claim two files hold is
    left out (it names neither)."""
    seen: dict[str, list[str]] = {}
    for path, data in files.items():
        match record_from(data.decode("utf-8"), path):
            case Success(record):
                seen.setdefault(collapsed(record.claim), []).append(path)
            case _:
                continue
    return MappingProxyType({claim: paths[0] for claim, paths in sorted(seen.items())
                             if len(paths) == 1 and claim})


def oracle_for(corpus: PlantedCorpus, *, extra: Mapping[str, bytes] | None = None,
               fold: Iterable[DefectKind] = ("paraphrase",),
               contradictions: Sequence[tuple[str, str]] = (),
               clusters: Sequence[EntityCluster] = (),
               canonicals: Sequence[Canon] = (), detect_first: bool = False,
               stranger: str | None = None) -> Oracle:
    """The oracle of ``corpus`` (plus the files in ``extra``): dedup groups every
    planted pair of the kinds in ``fold`` (paraphrases by default; a flip kind makes
    it propose what the veto must refuse), and the rest as given."""
    files = {**corpus.files, **(extra or {})}
    path_of = claim_paths(files)
    kinds = frozenset(fold)
    groups = tuple((pair.older, pair.newer) for pair in corpus.manifest.pairs
                   if pair.kind in kinds)
    known = frozenset(path_of.values())
    missing = [path for group in groups for path in group if path not in known]
    for canon in canonicals:
        missing += [path for path in canon.absorbs if path not in known]
    for pair in contradictions:
        missing += [path for path in pair if path not in known]
    if missing:
        raise ValueError(f"the oracle cannot tell these files by their claim: {missing}")
    return Oracle(path_of, groups, frozenset(frozenset(pair) for pair in contradictions),
                  tuple(clusters), tuple(canonicals), detect_first, stranger)
