"""The head's golden corpus, queries and gate landings, and how their results are rendered.

Both ``regen.py`` (which writes ``expected.json``) and ``test_head_golden.py`` (which
compares against it) build everything through ``build_golden``, so the two can only
disagree when the package's behaviour changes.

The corpus is small enough to reason about by hand. Each group of files exists for
one rule of the ranking:

* ``areas/deploy/canary*.html``: byte-identical twins (same article, different write
  time) that the lexical arm cannot tell apart, so they share rank 1 and the next
  record gets rank 3; the newer twin wins the tie.
* ``areas/ci/*``: an older, clearly better match stays above a newer, weaker one.
* ``areas/events/freeze-*.html``: twins whose event times lie in the future, so ``now``
  clamps them to the same instant and the path decides.
* ``areas/finance/*`` and the ``reconciliation`` mentions elsewhere: ``admit`` narrows
  candidates while BM25's document frequencies stay those of every active record.
* archived records (under ``archive/`` and by status) that match strongly but never
  come back.
* a handful of hand-made vectors for the vector arm, including a record no query
  token reaches.

The gate's landings: a near-duplicate archived with nothing standing for it
(forgotten, not probed), decoys that bury titles, a superseded record rewritten to
outrank its superseder, the near-duplicate folded into its twin (its probes find the
keeper), and five titles and claims rewritten to one word (lost to their own queries).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
from tests.property.head_support import (
    AT,
    AUTHOR,
    archived,
    commit,
    memory_with,
    new_repo,
    run,
)

from memhtml.adapters.git import PygitService
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import PathChange
from memhtml.contracts.view import HeadView
from memhtml.format import set_meta
from memhtml.head import (
    HeadGateOptions,
    HeadGateReport,
    HeadVersion,
    SearchHeadInput,
    describe_head_gate_failure,
    gate_heads,
    load_head,
    search_head,
    version_from_records,
)

EXPECTED = Path(__file__).with_name("expected.json")
NOW = "2026-11-01T00:00:00Z"

OLD = "2025-06-01T00:00:00Z"
MID = "2026-03-01T00:00:00Z"
NEW = "2026-09-01T00:00:00Z"

_CANARY = ("Canary deploys",
           "Production deploys go through a canary that takes ten percent of traffic.",
           "The canary runs for thirty minutes before promotion.")
_FREEZE = ("Release freeze", "The release freeze blocks every merge to main.", "")


def _files() -> dict[str, str]:
    """Every file of the base commit, memory or not, by tree path."""
    files: dict[str, str] = {
        # Twins: the same article written at two times.
        "areas/deploy/canary.html": memory_with(*_CANARY, at=OLD),
        "areas/deploy/canary-copy.html": memory_with(*_CANARY, at=NEW),
        "areas/deploy/rollback.html": memory_with(
            "Rollback procedure",
            "Roll back a failed canary by pinning the previous release tag.",
            "Announce the rollout pause in the incident channel."),
        "areas/deploy/rollback-2024.html": memory_with(
            "Rollback steps 2024",
            "In 2024 a rollback meant rebuilding the image from the last green commit.",
            at=OLD),
        "areas/deploy/revert-playbook.html": memory_with(
            "Revert playbook",
            "Pin the prior tag and redeploy when production misbehaves."),
        # An older strong match against a newer weak one.
        "areas/ci/flaky-tests.html": memory_with(
            "Flaky integration tests",
            "Flaky integration tests are quarantined after three failures.", at=OLD),
        "areas/ci/test-budget.html": memory_with(
            "Test budget",
            "The unit suite must finish in five minutes; integration runs nightly.", at=NEW),
        # Twins whose event times are in the future (b later than a), and a past one.
        "areas/events/freeze-a.html": memory_with(*_FREEZE, event_at="2030-01-01T00:00:00Z"),
        "areas/events/freeze-b.html": memory_with(*_FREEZE, event_at="2031-01-01T00:00:00Z"),
        "areas/events/freeze-c.html": memory_with(*_FREEZE, event_at="2026-02-01T00:00:00Z"),
        # Same shape and length; ledger is rare in the corpus, reconciliation common.
        "areas/finance/ledger.html": memory_with("Ledger", "Ledger entries are immutable."),
        "areas/finance/reconciliation.html": memory_with(
            "Reconciliation", "Reconciliation entries are immutable."),
        "areas/ops/month-end.html": memory_with(
            "Month end",
            "Month end runs reconciliation jobs after the batch window closes overnight."),
        "areas/ops/audit-trail.html": memory_with(
            "Audit trail",
            "Auditors read the reconciliation report and the access log every quarter."),
        "areas/data/schema-migrations.html": memory_with(
            "Schema migrations",
            "Schema migrations run before the deploy and must be reversible."),
        "areas/data/backups.html": memory_with(
            "Nightly backups", "Backups run nightly and are restored monthly as a drill."),
        "areas/data/retention.html": memory_with(
            "Log retention", "Application logs are kept for ninety days."),
        "areas/people/oncall.html": memory_with(
            "On-call rotation", "The on-call rotation changes every Monday at noon.",
            entities=("team:sre",)),
        "areas/people/escalation.html": memory_with(
            "Escalation path",
            "Page the secondary after fifteen minutes without acknowledgement.",
            entities=("team:sre",)),
        "areas/infra/dns.html": memory_with(
            "DNS changes", "DNS changes need a second reviewer and a one hour TTL."),
        "areas/infra/certificates.html": memory_with(
            "Certificate renewal",
            "TLS certificates renew automatically thirty days before expiry."),
        "areas/infra/cache.html": memory_with(
            "Cache eviction", "The edge cache evicts least recently used entries.",
            "Eviction starts when the cache passes ninety percent."),
        "areas/infra/cache-policy.html": memory_with(
            "Cache eviction policy",
            "The edge cache evicts the least recently used entries first."),
        "areas/infra/queues.html": memory_with(
            "Queue backpressure",
            "Workers stop pulling from the queue when memory passes eighty percent."),
        "areas/people/cafe.html": memory_with(
            "Team lunch", "The team café on the third floor opens at eight."),
        "areas/infra/flags.html": memory_with(
            "Feature switches", "Every switch lives in the feature_flag table."),
        # Strong matches that are archived: never returned.
        "archive/2025/deploy/canary-old.html": archived(memory_with(
            "Canary deploys canary", "Canary canary canary deploys.", at=OLD)),
        "areas/deploy/blue-green.html": archived(memory_with(
            "Blue green canary", "Blue green replaced the canary for one quarter.")),
        # Candidates that do not parse, and paths that are not candidates at all.
        "areas/broken/no-claim.html":
            "<!doctype html><html><head><title>x</title></head><body></body></html>",
        "areas/index.html": "<p>generated</p>",
        ".memhtml/state.html": "<p>state</p>",
        "sitemap.xml": "<urlset/>",
    }
    return files


NOT_UTF8_PATH = "areas/broken/latin1.html"
NOT_UTF8 = "<p>caf\xe9</p>".encode("latin-1")

def _vec(*values: float) -> npt.NDArray[np.float32]:
    return np.array(values, dtype=np.float32)


VECTORS_BY_PATH: dict[str, npt.NDArray[np.float32]] = {
    "areas/deploy/revert-playbook.html": _vec(1.0, 0.0, 0.0, 0.0),
    "areas/deploy/rollback.html": _vec(0.8, 0.6, 0.0, 0.0),
    # The twins share a content hash and so one vector.
    "areas/deploy/canary.html": _vec(0.0, 1.0, 0.0, 0.0),
    "areas/ci/flaky-tests.html": _vec(0.0, 0.0, 1.0, 0.0),
    # Would be the vector arm's best match, but it is archived.
    "archive/2025/deploy/canary-old.html": _vec(1.0, 0.2, 0.0, 0.0),
}
QUERY_VECTOR = _vec(1.0, 0.2, 0.0, 0.0)


def _in_finance(record: MemoryRecord) -> bool:
    return record.path.startswith("areas/finance/")


@dataclass(frozen=True)
class Query:
    name: str
    query: str
    limit: int = 10
    now: str | None = None
    admit: Callable[[MemoryRecord], bool] | None = None
    vectors: bool = False
    only: tuple[str, ...] = field(default=())
    """When set, search a version built from just these paths (a contrast case)."""


QUERIES: tuple[Query, ...] = (
    Query("shared-rank-and-newer-twin", "canary"),
    Query("limit-one", "canary", limit=1),
    Query("percent-unlimited", "percent"),
    Query("percent-limit-two", "percent", limit=2),
    Query("older-better-match-stays-above", "flaky integration tests"),
    Query("future-events-unclamped", "release freeze"),
    Query("future-events-clamped-by-now", "release freeze", now=NOW),
    Query("stop-words-and-repeats-count-once", "the freeze freeze FREEZE of release"),
    Query("reconciliation-without-admit", "ledger reconciliation"),
    Query("reconciliation-admit-finance", "ledger reconciliation", admit=_in_finance),
    Query("reconciliation-finance-only-version", "ledger reconciliation",
          only=("areas/finance/ledger.html", "areas/finance/reconciliation.html")),
    Query("archived-never-returned", "blue green canary deploys"),
    Query("nothing-matches", "zebra quantum"),
    Query("only-stop-words", "the of and"),
    Query("vector-lexical-only", "undo broken rollout"),
    Query("vector-arm", "undo broken rollout", vectors=True),
    Query("vector-arm-admit", "undo broken rollout", vectors=True,
          admit=lambda r: r.path != "areas/deploy/revert-playbook.html"),
    Query("entity-words-not-indexed", "team sre"),
    Query("case-folded", "DNS TTL"),
    Query("unicode-letters-stay-one-token", "CAFÉ"),
    Query("underscore-joins-a-token", "feature_flag"),
    Query("underscore-half-is-another-token", "flag"),
)


def _hit_rows(view: HeadView, search: SearchHeadInput) -> list[dict[str, object]]:
    return [
        {"path": h.path, "score": round(h.score, 12), "arms": list(h.arms)}
        for h in search_head(view, search)
    ]


def _vectors(version: HeadVersion) -> dict[str, npt.NDArray[np.float32]]:
    out: dict[str, npt.NDArray[np.float32]] = {}
    for path, vector in VECTORS_BY_PATH.items():
        record = version.get(path)
        assert record is not None, path
        out[record.content_hash] = vector
    return out


def _search(version: HeadVersion, query: Query) -> list[dict[str, object]]:
    view: HeadView = version
    if query.only:
        records = [r for r in version.records() if r.path in query.only]
        view = version_from_records(records, "only")
    vectors = _vectors(version) if query.vectors else None
    return _hit_rows(view, SearchHeadInput(
        query.query, limit=query.limit, now=query.now, admit=query.admit,
        vectors=vectors, query_vector=QUERY_VECTOR if query.vectors else None))


def report_json(report: HeadGateReport) -> dict[str, object]:
    """A gate report as JSON, without the commit shas (a function of git, not of head)."""
    return {
        "probes": report.probes,
        "k": report.k,
        "seed": report.seed,
        "tolerance": report.tolerance,
        "mrr_before": report.mrr_before,
        "mrr": report.mrr,
        "floor": report.floor,
        "inversions_before": report.inversions_before,
        "inversions": [
            {"kind": i.kind, "path": i.path, "query": i.query, "by": i.by,
             "by_rank": i.by_rank, "rank": i.rank}
            for i in report.inversions
        ],
        "added": report.added,
        "removed": report.removed,
        "unfound": list(report.unfound),
        "followed": report.followed,
        "forgotten": report.forgotten,
        "passed": report.passed,
        "line": describe_head_gate_failure(report),
        "results": [
            {"path": r.path, "query": r.query, "before": r.rank_before, "after": r.rank_after,
             "found_as": r.found_as}
            for r in report.results
        ],
    }


def _decoys(files: Mapping[str, str]) -> dict[str, str]:
    """One sharper, shorter, newer record per title for eight records, and eleven for
    the log retention record so it falls out of the top ten."""
    targets = ["areas/data/backups.html", "areas/data/schema-migrations.html",
               "areas/infra/dns.html", "areas/infra/certificates.html",
               "areas/infra/queues.html", "areas/people/escalation.html",
               "areas/ops/month-end.html", "areas/ops/audit-trail.html"]
    titles = {
        "areas/data/backups.html": "Nightly backups",
        "areas/data/schema-migrations.html": "Schema migrations",
        "areas/infra/dns.html": "DNS changes",
        "areas/infra/certificates.html": "Certificate renewal",
        "areas/infra/queues.html": "Queue backpressure",
        "areas/people/escalation.html": "Escalation path",
        "areas/ops/month-end.html": "Month end",
        "areas/ops/audit-trail.html": "Audit trail",
    }
    assert all(path in files for path in targets)
    out: dict[str, str] = {}
    for i, path in enumerate(targets):
        title = titles[path]
        out[f"areas/decoys/d{i:02d}.html"] = memory_with(
            title, f"{title} {title} {title}.", at=NEW)
    for i in range(11):
        out[f"areas/decoys/retention-{i:02d}.html"] = memory_with(
            "Log retention", f"Log retention log retention note {i}.", at=NEW)
    return out


def _land(git: PygitService, branch: str, parent: str, changes: Mapping[str, str | None]) -> str:
    """Commit a landing on its own branch, so every landing starts from ``parent``."""
    run(git.create_branch(branch, parent))
    return run(git.commit(
        f"refs/heads/{branch}", parent,
        [PathChange(p, None if v is None else v.encode()) for p, v in sorted(changes.items())],
        branch, AUTHOR, AT))


def build_golden(tmp: Path) -> dict[str, object]:
    """Commit the corpus to a fresh repository under ``tmp`` and compute every result."""
    git = new_repo(tmp)
    files = _files()
    base_sha = commit(git, None, files)
    # A non-UTF-8 blob, committed by bytes rather than through the str helper.
    base_sha = run(git.commit("refs/heads/main", base_sha, [PathChange(NOT_UTF8_PATH, NOT_UTF8)],
                              "a latin-1 file", AUTHOR, AT))
    base = run(load_head(git, base_sha))
    out: dict[str, object] = {
        "records": sorted(base.paths()),
        "skipped": [{"path": s.path, "reason": s.reason} for s in base.skipped_files],
        "searches": {q.name: {"query": q.query, "hits": _search(base, q)} for q in QUERIES},
    }

    options = HeadGateOptions()
    # (a) archive the near-duplicate cache record: passes within the tolerance.
    near_dup = "areas/infra/cache-policy.html"
    fold_sha = _land(git, "fold", base_sha, {
        near_dup: None,
        "archive/2026/areas/infra/cache-policy.html": archived(files[near_dup]),
    })
    folded = run(load_head(git, fold_sha))
    # (b) decoys that bury many titles: fails on the MRR floor and on fell-out.
    decoy_sha = _land(git, "decoys", base_sha, _decoys(files))
    decoyed = run(load_head(git, decoy_sha))
    # (c) the superseded record is rewritten to match its superseder's title.
    old = "areas/deploy/rollback-2024.html"
    sup_sha = _land(git, "supersede", base_sha, {
        "areas/deploy/rollback.html": memory_with(
            "Rollback procedure",
            "Roll back a failed canary by pinning the previous release tag.",
            "Announce the rollout pause in the incident channel.",
            links=(("supersedes", "/" + old),)),
    })
    superseding = run(load_head(git, sup_sha))
    inverted_sha = _land(git, "invert", sup_sha, {
        old: memory_with("Rollback procedure 2024", "Rollback procedure: rollback procedure.",
                         at=OLD),
    })
    inverted = run(load_head(git, inverted_sha))
    # (d) the near-duplicate folded into its twin: the archived copy names its keeper,
    # and the probes of the folded record find the keeper instead.
    keeper = "areas/infra/cache.html"
    kept_sha = _land(git, "keeper", base_sha, {
        near_dup: None,
        "archive/2026/areas/infra/cache-policy.html": set_meta(
            archived(files[near_dup]), "memhtml-superseded-by", "/" + keeper),
    })
    kept = run(load_head(git, kept_sha))
    # (e) five titles and claims rewritten to one word: each is lost to its own
    # queries, whatever the rewritten records now answer.
    rewritten = sorted(p for p in files if p.startswith("areas/infra/"))[:5]
    qqq_sha = _land(git, "qqq", base_sha, {
        path: memory_with("qqq", "qqq.") for path in rewritten})
    qqq = run(load_head(git, qqq_sha))
    out["gates"] = {
        "archive-near-duplicate": report_json(gate_heads(base, folded, options)),
        "decoys-bury-titles": report_json(gate_heads(base, decoyed, options)),
        # A wider tolerance, so the line names the inversion growth alone.
        "superseded-outranks": report_json(
            gate_heads(superseding, inverted, HeadGateOptions(tolerance=0.05))),
        "fold-into-keeper": report_json(gate_heads(base, kept, options)),
        "rewritten-titles": report_json(gate_heads(base, qqq, options)),
    }
    return out


def dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False) + "\n"
