"""dedup-merge on real repositories: what folds (content-hash twins, frame-key twins,
pairs strictly above the merge cosine), what the veto refuses and hands to a person as
a task, what is never touched (tasks, unreadable files), a taken archive path counted,
a second night quiet, the same bytes under any hash seed, and the planted corpus folded
with no false merge."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.io import IOFailure, IOResult
from tests.unit.sleep.sleep_support import AUTHOR, ok

from memhtml.adapters.clock import ManualClock
from memhtml.adapters.git import PygitService
from memhtml.adapters.memory_git import InMemoryGit
from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.errors import GitError, GitFailure
from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import PathChange, VectorSpace
from memhtml.domain.merge import MergeOutcomes
from memhtml.eval.planted import plant_corpus, synthetic_docs
from memhtml.eval.planted_embedder import at_cosine, scripted_embedder, seeded_unit_vector
from memhtml.eval.planted_manifest import PlantConfig, PlantedCorpus
from memhtml.head import HeadVersion, VectorCache, cache_from, load_head, vector_text_of
from memhtml.sleep.findings import digest_of_path
from memhtml.sleep.neighbours import tied_paths
from memhtml.sleep.phase import PhaseEnv, PhaseResult, TaskBudget
from memhtml.sleep.phases.dedup_candidates import twin_pairs
from memhtml.sleep.phases.dedup_merge import (
    DETECTOR,
    dedup_merge,
    judged_everything,
)
from memhtml.sleep.tasks import DETECTED_TAG, NO_LONGER_DETECTED, SLEEP_AUTHOR
from memhtml.store import Store, StoreDeps, WriteInput, archive, init_store, write
from memhtml.store.layout import archive_path

WRITTEN = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
STAMP = datetime(2026, 11, 29, 3, 15, 7, tzinfo=UTC)
NEXT_NIGHT = STAMP + timedelta(days=1)
DIM = 64
SPACE = VectorSpace("test-scripted", DIM)
REPO_ROOT = Path(__file__).resolve().parents[3]
SMALL = PlantConfig(exact=3, frame_key=3, near=3, paraphrase=3, negation=3, antonym=2,
                    number=3, variant=2, contradictions=2, stale_tasks=4)
"""A small planted corpus whose flips (ten) fit one night's task budget."""


@dataclass
class Repo:
    git: PygitService
    clock: ManualClock
    store: Store

    def main(self) -> str:
        return ok(self.git.resolve("main"))

    def write(self, path: str, claim: str, *body: str, **more: object) -> str:
        """A memory written a minute after the last, so corpus order is write order."""
        self.clock.advance(60)
        data = WriteInput(title=f"About {path.rsplit('/', 1)[-1]}", claim=claim, body=body,
                          path=path, **more)  # type: ignore[arg-type]
        # The copies this phase folds are what a write refuses unless told.
        landed = ok(write(self.store, data, allow_duplicate=True))
        assert landed.primary == path
        return path

    def raw(self, changes: list[PathChange]) -> str:
        return ok(self.git.commit("refs/heads/main", self.main(), changes, "hand edit",
                                  AUTHOR, self.clock.now()))

    def version(self, sha: str | None = None) -> HeadVersion:
        return ok(load_head(self.git, sha or self.main()))

    def env(self, vectors: VectorCache | None = None, *, stamp: datetime = STAMP,
            budget: TaskBudget | None = None, embedder_name: str = "none") -> PhaseEnv:
        sha = self.main()
        version = self.version(sha)
        return PhaseEnv(phase="dedup-merge", run_id=stamp.date().isoformat(), stamp=stamp,
                        base=sha, base_version=version, version=version, git=self.git,
                        state=InMemoryState(), budget=budget or TaskBudget(), dry_run=False,
                        vectors=vectors, embedder_name=embedder_name)

    def run(self, vectors: VectorCache | None = None, **env: object) -> PhaseResult:
        return ok(dedup_merge(self.env(vectors, **env)))  # type: ignore[arg-type]

    def land(self, result: PhaseResult) -> str:
        (commit,) = result.commits
        return self.raw(list(commit.changes))


def repo(tmp_path: Path) -> Repo:
    git = ok(PygitService.init(tmp_path / "store", bare=True))
    clock = ManualClock(WRITTEN)
    store = Store(StoreDeps(git=git, clock=clock, author=AUTHOR))
    ok(init_store(store.deps))
    return Repo(git, clock, store)


def vectors(version: HeadVersion, pairs: dict[str, tuple[str, float]] | None = None
            ) -> VectorCache:
    """A seeded vector for every live memory by its path, except that each path named in
    ``pairs`` sits at the given cosine to its partner's vector."""
    def seeded(path: str, salt: str = "") -> npt.NDArray[np.float64]:
        return seeded_unit_vector(path, DIM, salt=salt)

    out: dict[str, npt.NDArray[np.float32]] = {}
    for record in sorted(version.records(), key=lambda r: r.path):
        partner = (pairs or {}).get(record.path)
        vector = (seeded(record.path) if partner is None
                  else at_cosine(seeded(partner[0]), partner[1], seeded(record.path, "lean")))
        out.setdefault(record.content_hash, vector.astype(np.float32))
    return cache_from(SPACE, out)


def changed(result: PhaseResult) -> dict[str, bytes | None]:
    return {c.path: c.data for c in result.commits[0].changes} if result.commits else {}


def assert_folded(version: HeadVersion, keeper: str, dropped: str) -> None:
    """``dropped`` lives only in the archive, superseded by ``keeper``, which links it."""
    moved = archive_path(dropped, STAMP.year)
    assert version.get(dropped) is None
    archived = version.get(moved)
    assert archived is not None and archived.status == "archived"
    assert archived.superseded_by == to_document_path(keeper)
    kept = version.get(keeper)
    assert kept is not None and kept.status == "active"
    assert ("supersedes", to_document_path(moved)) in {(lk.rel, lk.href) for lk in kept.links}


def detected_tasks(version: HeadVersion) -> dict[str, MemoryRecord]:
    return {r.path: r for r in version.records()
            if digest_of_path(r.path) is not None and not r.archived}


# --------------------------------------------------------------------------- folds


def test_exact_duplicates_fold_into_the_oldest(tmp_path: Path) -> None:
    r = repo(tmp_path)
    body = "Seen on every deploy since March."
    first = r.write("areas/notes/window.html", "The deploy window opens at nine.", body)
    other = r.write("areas/notes/unrelated.html", "The canteen closes at three.")
    second = r.write("areas/notes/window-again.html", "The deploy window opens at nine.", body)
    third = r.write("areas/notes/window-thrice.html", "The deploy window opens at nine.", body)
    result = r.run()
    counts = dict(result.counts)
    assert (counts["members"], counts["hash_twins"], counts["frame_twins"],
            counts["mined"], counts["folded"]) == (4, 2, 0, 0, 2)
    assert (counts["vetoed"], counts["role_guarded"], counts["refused"]) == (0, 0, 0)
    (commit,) = result.commits
    assert commit.subject == "2 duplicates folded, 0 folds vetoed"
    after = r.version(r.land(result))
    assert_folded(after, first, second)
    assert_folded(after, first, third)
    assert after.get(other) is not None


def test_a_tie_on_the_created_second_keeps_the_file_committed_first(tmp_path: Path) -> None:
    """Two copies written in one second: the later commit holds the smaller path, which
    used to keep. The keeper is the file that reached the branch first."""
    r = repo(tmp_path)
    r.clock.advance(60)
    claim, body = "The deploy window opens at nine.", ("Seen on every deploy.",)
    for path in ("areas/notes/zz-first.html", "areas/notes/aa-second.html"):
        landed = ok(write(r.store, WriteInput(title="Deploy window", claim=claim, body=body,
                                              path=path), allow_duplicate=True))
        assert landed.primary == path
    version = r.version()
    first, second = version.get("areas/notes/zz-first.html"), version.get(
        "areas/notes/aa-second.html")
    assert first is not None and second is not None
    assert first.created_at == second.created_at
    result = r.run()
    assert result.counts["folded"] == 1 and result.warnings == ()
    assert_folded(r.version(r.land(result)), first.path, second.path)


def test_ties_settled_by_history_are_looked_up_only_for_tied_paths(tmp_path: Path) -> None:
    """Stamps that do not tie never reach git; a tie inside one commit (an import)
    goes to the path."""
    r = repo(tmp_path)
    one = r.write("areas/notes/b-one.html", "The canteen closes at three.")
    r.write("areas/notes/c-two.html", "The canteen closes at three.")
    version = r.version()
    assert tied_paths(version) == ()
    record = version.get(one)
    assert record is not None
    copy = record.html.encode()
    r.raw([PathChange("areas/notes/z-import.html", copy),
           PathChange("areas/notes/a-import.html", copy)])
    assert tied_paths(r.version()) == ("areas/notes/a-import.html", one,
                                       "areas/notes/z-import.html")
    after = r.version(r.land(r.run()))
    # b-one, committed before both imports, keeps all three.
    for dropped in ("areas/notes/a-import.html", "areas/notes/z-import.html",
                    "areas/notes/c-two.html"):
        assert_folded(after, one, dropped)


class NoHistory(InMemoryGit):
    """A repository whose history walk fails (a damaged pack, say)."""

    def arrivals(self, ref: str, paths: Collection[str]
                 ) -> IOResult[Mapping[str, int], GitError]:
        return IOFailure(GitFailure("arrivals", "pack unreadable"))


def test_an_unreadable_history_leaves_ties_to_the_path_and_says_so() -> None:
    git = NoHistory(bare=True)
    clock = ManualClock(WRITTEN)
    store = Store(StoreDeps(git=git, clock=clock, author=AUTHOR))
    ok(init_store(store.deps))
    for path in ("areas/notes/zz-first.html", "areas/notes/aa-second.html"):
        ok(write(store, WriteInput(title="Deploy window", claim="The window opens at nine.",
                                   path=path), allow_duplicate=True))
    sha = ok(git.resolve("main"))
    version = ok(load_head(git, sha))
    env = PhaseEnv(phase="dedup-merge", run_id="2026-11-29", stamp=STAMP, base=sha,
                   base_version=version, version=version, git=git, state=InMemoryState(),
                   budget=TaskBudget(), dry_run=False)
    result = ok(dedup_merge(env))
    assert result.counts["folded"] == 1
    (warning,) = result.warnings
    assert "pack unreadable" in warning and "smaller path" in warning
    moved = {c.path for c in result.commits[0].changes if c.data is None}
    assert moved == {"areas/notes/zz-first.html"}


def test_frame_key_twins_fold_with_no_vector_plane(tmp_path: Path) -> None:
    r = repo(tmp_path)
    first = r.write("areas/notes/limit.html", "The upload limit is twenty megabytes.")
    twin = r.write("areas/notes/limit-twin.html", "the upload limit is Twenty megabytes",
                   "Checked against the proxy settings.")
    result = r.run()
    counts = dict(result.counts)
    assert (counts["hash_twins"], counts["frame_twins"], counts["folded"]) == (0, 1, 1)
    assert counts["with_vector"] == 0
    assert_folded(r.version(r.land(result)), first, twin)


def test_a_pair_above_the_merge_cosine_folds_and_one_below_does_not(tmp_path: Path) -> None:
    r = repo(tmp_path)
    near_a = r.write("areas/notes/retries.html", "Payment retries back off for a minute.")
    near_b = r.write("areas/notes/retries-b.html", "Payment retries back off for one minute.")
    para_a = r.write("areas/notes/queue.html", "The mail queue drains every hour.")
    para_b = r.write("areas/notes/queue-b.html", "Hourly, the mail queue is drained.")
    cache = vectors(r.version(), {near_b: (near_a, 0.95), para_b: (para_a, 0.88)})
    result = r.run(cache)
    counts = dict(result.counts)
    assert (counts["with_vector"], counts["mined"], counts["folded"]) == (4, 1, 1)
    after = r.version(r.land(result))
    assert_folded(after, near_a, near_b)
    assert after.get(para_a) is not None and after.get(para_b) is not None


def test_a_member_with_no_vector_is_still_folded_as_a_twin(tmp_path: Path) -> None:
    r = repo(tmp_path)
    first = r.write("areas/notes/port.html", "The admin port is 8443.")
    copy = r.write("areas/notes/port-copy.html", "The admin port is 8443.")
    result = r.run(cache_from(SPACE, {}))
    counts = dict(result.counts)
    assert (counts["with_vector"], counts["hash_twins"], counts["folded"]) == (0, 1, 1)
    assert_folded(r.version(r.land(result)), first, copy)


# --------------------------------------------------------------------------- the veto


def flips(r: Repo) -> tuple[VectorCache, tuple[str, str], tuple[str, str]]:
    """A negation flip and a number flip, each at cosine 0.95."""
    neg = (r.write("areas/notes/cache.html", "The edge cache is enabled."),
           r.write("areas/notes/cache-b.html", "The edge cache is not enabled."))
    num = (r.write("areas/notes/timeout.html", "The gateway times out after 3.5 seconds."),
           r.write("areas/notes/timeout-b.html", "The gateway times out after 35 seconds."))
    cache = vectors(r.version(), {neg[1]: (neg[0], 0.95), num[1]: (num[0], 0.95)})
    return cache, neg, num


def test_flips_are_vetoed_counted_by_predicate_and_minted_as_tasks(tmp_path: Path) -> None:
    r = repo(tmp_path)
    cache, neg, num = flips(r)
    result = r.run(cache)
    counts = dict(result.counts)
    assert (counts["mined"], counts["folded"], counts["vetoed"]) == (2, 0, 2)
    assert (counts["vetoed_negation"], counts["vetoed_numeric"],
            counts["vetoed_variant"]) == (1, 1, 0)
    assert (counts["tasks_minted"], counts["tasks_overflow"]) == (2, 0)
    (commit,) = result.commits
    assert "2 detected task(s) opened" in commit.body
    after = r.version(r.land(result))
    assert all(after.get(p) is not None for p in (*neg, *num))
    tasks = sorted(detected_tasks(after).values(), key=lambda t: t.claim)
    assert len(tasks) == 2
    for task, (keep, drop), predicate in zip(tasks, (neg, num), ("negation", "numeric"),
                                             strict=True):
        assert task.memory_type == "task" and task.task_status == "todo"
        assert task.author == SLEEP_AUTHOR
        assert set(task.tags) == {DETECTED_TAG, DETECTOR}
        assert task.claim.startswith(f"{to_document_path(keep)} and {to_document_path(drop)}")
        assert "cosine 0.9500" in task.claim
        assert f"Evidence, measured (predicate): {predicate}" in task.body_text
        first, second = sorted((keep, drop))
        assert f"Finding ({DETECTOR}): {first} | {second} | {predicate}" in task.body_text


def test_copies_of_a_correction_fold_together_but_not_into_what_they_correct(
        tmp_path: Path) -> None:
    r = repo(tmp_path)
    claim = "The nightly export runs at two."
    original = r.write("areas/notes/export.html", claim, "It is enabled on weekends.")
    correction = r.write("areas/notes/export-b.html", claim, "It is disabled on weekends.")
    copy = r.write("areas/notes/export-c.html", claim, "It is disabled on weekends.")
    result = r.run()
    counts = dict(result.counts)
    assert (counts["hash_twins"], counts["frame_twins"]) == (1, 2)
    assert (counts["folded"], counts["vetoed"], counts["vetoed_negation"]) == (1, 2, 2)
    # (original, copy) is vetoed too, but the copy folds away tonight: no task for it.
    assert (counts["vetoed_folded"], counts["tasks_minted"], counts["role_guarded"]) == (
        1, 1, 0)
    after = r.version(r.land(result))
    assert_folded(after, correction, copy)
    (task,) = detected_tasks(after).values()
    first, second = sorted((original, correction))
    assert f"{first} | {second} | negation" in task.body_text
    again = r.run(stamp=NEXT_NIGHT)
    assert (dict(again.counts)["folded"], dict(again.counts)["tasks_minted"]) == (0, 0)


def test_the_task_budget_caps_the_night_and_counts_the_overflow(tmp_path: Path) -> None:
    r = repo(tmp_path)
    cache, _, _ = flips(r)
    result = r.run(cache, budget=TaskBudget(1))
    counts = dict(result.counts)
    assert (counts["vetoed"], counts["tasks_minted"], counts["tasks_overflow"]) == (2, 1, 1)


# --------------------------------------------------------------------------- left alone


def test_tasks_are_never_folded(tmp_path: Path) -> None:
    r = repo(tmp_path)
    twins = [r.write(f"areas/tasks/renew-{n}.html", "Renew the TLS certificate.",
                     "Owner: whoever is on call.", memory_type="task") for n in range(2)]
    result = r.run()
    assert dict(result.counts)["members"] == 0
    assert result.commits == ()
    version = r.version()
    assert all(version.get(path) is not None for path in twins)


def test_unreadable_files_are_never_touched(tmp_path: Path) -> None:
    r = repo(tmp_path)
    junk = b"<!doctype html><p>not a memory</p>\n"
    broken = ["areas/notes/broken-1.html", "areas/notes/broken-2.html"]
    r.raw([PathChange(path, junk) for path in broken])
    kept = r.write("areas/notes/dns.html", "The resolver caches for an hour.")
    copy = r.write("areas/notes/dns-copy.html", "The resolver caches for an hour.")
    skipped = {s.path for s in r.version().skipped_files}
    assert set(broken) <= skipped
    result = r.run()
    assert dict(result.counts)["members"] == 2
    assert not set(changed(result)) & skipped
    after = r.version(r.land(result))
    assert set(broken) <= {s.path for s in after.skipped_files}
    assert_folded(after, kept, copy)


TAKEN_BY = b"<!doctype html><p>not a memory</p>\n"
"""What holds a fold's archive path in the refusal tests: a file that is not a memory
(an earlier archive of the same path only sends the next to ``archive/<YYYY>-2/``)."""


def test_a_taken_archive_path_is_a_counted_refusal(tmp_path: Path) -> None:
    r = repo(tmp_path)
    taken = "areas/notes/region-copy.html"
    r.raw([PathChange(f"archive/{STAMP.year}/{taken}", TAKEN_BY)])
    r.write("areas/notes/region.html", "The primary region is eu-west-1.")
    r.write(taken, "The primary region is eu-west-1.")
    result = r.run()
    counts = dict(result.counts)
    assert (counts["hash_twins"], counts["folded"], counts["refused"]) == (1, 0, 1)
    assert result.commits == ()
    assert any(taken in w and "is a file that is not a memory" in w for w in result.warnings)


def test_a_refused_archive_does_not_stop_the_other_folds(tmp_path: Path) -> None:
    r = repo(tmp_path)
    taken = "areas/notes/region-copy.html"
    r.raw([PathChange(f"archive/{STAMP.year}/{taken}", TAKEN_BY)])
    keeper = r.write("areas/notes/region.html", "The primary region is eu-west-1.")
    r.write(taken, "The primary region is eu-west-1.")
    first = r.write("areas/notes/zone.html", "The standby zone is b.")
    copy = r.write("areas/notes/zone-copy.html", "The standby zone is b.")
    result = r.run()
    counts = dict(result.counts)
    assert (counts["folded"], counts["refused"]) == (1, 1)
    assert taken not in changed(result)
    after = r.version(r.land(result))
    assert_folded(after, first, copy)
    held = after.get(keeper)
    assert held is not None and not any(lk.rel == "supersedes" for lk in held.links)
    assert after.get(taken) is not None


# --------------------------------------------------------------------------- nights


def test_a_second_night_folds_nothing_and_opens_no_task(tmp_path: Path) -> None:
    r = repo(tmp_path)
    cache, _, _ = flips(r)
    first = r.write("areas/notes/owner.html", "The billing service is owned by Ada.")
    r.write("areas/notes/owner-copy.html", "The billing service is owned by Ada.")
    night_one = r.run(cache)
    assert dict(night_one.counts)["folded"] == 1
    tasks_before = set(detected_tasks(r.version(r.land(night_one))))
    # The folds moved files, but every remaining member keeps its vector (by content hash).
    night_two = r.run(cache, stamp=NEXT_NIGHT)
    counts = dict(night_two.counts)
    assert (counts["folded"], counts["vetoed"], counts["tasks_minted"],
            counts["tasks_refreshed"], counts["tasks_unchanged"],
            counts["tasks_closed"]) == (0, 2, 0, 0, 2, 0)
    # The same findings stand as written: nothing to commit, no stamp moved.
    assert night_two.commits == ()
    after = r.version()
    assert set(detected_tasks(after)) == tasks_before
    assert all(t.updated_at != "2026-11-30T03:15:07Z" for t in detected_tasks(after).values())
    assert after.get(first) is not None


def test_a_finding_no_longer_produced_closes_its_task(tmp_path: Path) -> None:
    r = repo(tmp_path)
    cache, neg, _ = flips(r)
    r.land(r.run(cache))
    ok(archive(r.store, neg[1]))
    result = r.run(cache, stamp=NEXT_NIGHT)
    counts = dict(result.counts)
    assert (counts["vetoed"], counts["tasks_closed"], counts["tasks_unchanged"]) == (1, 1, 1)
    assert NO_LONGER_DETECTED in result.commits[0].body
    assert len(detected_tasks(r.version(r.land(result)))) == 1


def test_a_night_that_did_not_judge_everything_closes_nothing(tmp_path: Path) -> None:
    r = repo(tmp_path)
    cache, _, _ = flips(r)
    r.land(r.run(cache, embedder_name="scripted"))
    # The vector plane is missing tonight in a store that has one: the cosine pairs
    # went unread, so their tasks are not "no longer detected".
    result = r.run(None, stamp=NEXT_NIGHT, embedder_name="scripted")
    counts = dict(result.counts)
    assert (counts["vetoed"], counts["tasks_closed"]) == (0, 0)
    assert result.commits == ()
    assert len(detected_tasks(r.version())) == 2


def test_judged_everything_only_without_a_cap_and_with_the_pairs_read(tmp_path: Path
                                                                      ) -> None:
    env = repo(tmp_path).env()
    whole = MergeOutcomes((), (), (), 0, 0)
    cut = MergeOutcomes((), (), (), 0, 3)
    # A store with no embedder has no cosine pairs to leave unread.
    assert judged_everything(env, whole)
    assert not judged_everything(env, cut)
    configured = replace(env, embedder_name="openai")
    assert not judged_everything(configured, whole)
    assert judged_everything(replace(configured, vectors=cache_from(SPACE, {})), whole)
    assert not judged_everything(replace(configured, vectors=cache_from(SPACE, {})), cut)


# --------------------------------------------------------------------------- twin groups


def member(n: int, content: int, frame: int, claim: str = "a claim") -> MemoryRecord:
    return MemoryRecord(
        path=f"areas/m{n:03d}.html", blob_sha=f"{n:040x}", content_hash=f"sha256:{content}",
        frame_key=f"fk:{frame}", archived=False, html="", title=f"M{n}", claim=claim,
        body_text=claim, memory_type="semantic", status="active",
        created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z")


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=30))
def test_every_twin_folds_into_its_groups_oldest_member(keys: list[tuple[int, int]]) -> None:
    records = [member(n, c, f) for n, (c, f) in enumerate(keys)]
    pairs = twin_pairs(records)
    copies = [copy for _, copy, _ in pairs]
    keepers = {keeper for keeper, _, _ in pairs}
    assert len(copies) == len(set(copies))
    assert keepers.isdisjoint(copies)
    assert all(keeper < copy for keeper, copy, _ in pairs)
    kinds = [kind for _, _, kind in pairs]
    assert kinds == sorted(kinds, key=lambda k: k != "hash")
    for keeper, copy, kind in pairs:
        same_hash = keys[keeper][0] == keys[copy][0]
        assert (kind == "hash") == same_hash
    # A member is left out only when nothing older shares a key with it, through any chain.
    for n in set(range(len(keys))) - set(copies):
        assert all(keys[m][0] != keys[n][0] and keys[m][1] != keys[n][1] for m in range(n))


def test_empty_claims_and_articles_are_not_twins_by_their_empty_keys() -> None:
    records = [member(0, 1, 9, claim=""), member(1, 2, 9, claim=""),
               member(2, 3, 7, claim=""), member(3, 3, 7, claim="")]
    # Claimless files share a frame key and empty articles a hash: neither proves a
    # duplicate; the title decides between the empty articles (M2 and M3 differ).
    assert twin_pairs(records) == ()
    same_title = [records[2], replace(records[3], title="M2")]
    assert twin_pairs(same_title) == ((0, 1, "hash"),)


# --------------------------------------------------------------------------- planted


def planted(tmp_path: Path) -> tuple[Repo, PlantedCorpus]:
    r = repo(tmp_path)
    corpus = plant_corpus(synthetic_docs(), SMALL).unwrap()
    r.raw(corpus.changes())
    return r, corpus


def planted_vectors(version: HeadVersion, corpus: PlantedCorpus) -> VectorCache:
    embedder = scripted_embedder(corpus)
    return cache_from(embedder.space, {
        r.content_hash: embedder.vector_of(vector_text_of(r))
        for r in sorted(version.records(), key=lambda r: r.path) if vector_text_of(r)})


def test_the_planted_corpus_folds_every_duplicate_and_nothing_else(tmp_path: Path) -> None:
    r, corpus = planted(tmp_path)
    manifest = corpus.manifest
    cache = planted_vectors(r.version(), corpus)
    result = r.run(cache, stamp=NEXT_NIGHT, embedder_name="scripted")
    counts = dict(result.counts)
    folds = [p for p in manifest.pairs if p.expect == "fold"]
    flipped = [p for p in manifest.pairs if p.expect == "veto"]
    assert counts["folded"] == len(folds) == 9
    assert (counts["hash_twins"], counts["frame_twins"]) == (SMALL.exact, SMALL.frame_key)
    assert counts["vetoed"] == len(flipped) == 10
    assert (counts["vetoed_negation"], counts["vetoed_numeric"], counts["vetoed_variant"]) == (
        SMALL.negation + SMALL.antonym, SMALL.number, SMALL.variant)
    assert (counts["role_guarded"], counts["refused"], counts["missing_text"]) == (0, 0, 0)
    assert (counts["tasks_minted"], counts["tasks_overflow"]) == (10, 0)
    after = r.version(r.land(result))
    for pair in folds:
        assert_folded(after, pair.older, pair.newer)
    # Zero false merges: the only files that left their paths are the planted copies,
    # and every base memory is live or in the archive.
    archived = {r.path for r in after.records() if r.archived}
    assert archived == {archive_path(p.newer, STAMP.year) for p in folds}
    for path in manifest.base_paths:
        assert after.get(path) is not None or after.get(archive_path(path, STAMP.year))
    for pair in (*flipped, *manifest.of_kind("paraphrase"), *manifest.of_kind("contradiction")):
        assert after.get(pair.older) is not None and after.get(pair.newer) is not None
    # Every flip is a task naming its predicate; planted tasks are untouched.
    findings = "\n".join(t.body_text for t in detected_tasks(after).values())
    for pair in flipped:
        first, second = sorted((pair.older, pair.newer))
        assert f"{first} | {second} | {pair.predicate}" in findings
    for task in manifest.tasks:
        assert task not in changed(result)
    # The second night finds nothing new.
    again = r.run(planted_vectors(after, corpus), stamp=NEXT_NIGHT + timedelta(days=1),
                  embedder_name="scripted")
    counts = dict(again.counts)
    assert (counts["folded"], counts["tasks_minted"], counts["tasks_closed"]) == (0, 0, 0)
    assert (counts["tasks_refreshed"], counts["tasks_unchanged"]) == (0, 10)


# --------------------------------------------------------------------------- determinism


def planted_digest(root: str) -> str:
    """The phase over the planted store at ``root``: a digest of its commit's bytes."""
    git = ok(PygitService.open(Path(root)))
    version = ok(load_head(git, ok(git.resolve("main"))))
    corpus = plant_corpus(synthetic_docs(), SMALL).unwrap()
    env = PhaseEnv(phase="dedup-merge", run_id="2026-11-30", stamp=NEXT_NIGHT,
                   base=version.sha or "", base_version=version, version=version, git=git,
                   state=InMemoryState(), budget=TaskBudget(), dry_run=False,
                   vectors=planted_vectors(version, corpus), embedder_name="scripted")
    result = ok(dedup_merge(env))
    (commit,) = result.commits
    digest = hashlib.sha256(f"{commit.subject}\n{commit.body}\n".encode())
    for change in commit.changes:
        digest.update(change.path.encode() + b"\x00" + (change.data or b"-") + b"\x00")
    return digest.hexdigest()


@pytest.mark.slow
def test_the_same_commit_under_any_hash_seed(tmp_path: Path) -> None:
    planted(tmp_path)
    root = str(tmp_path / "store")
    script = ("import sys\nfrom tests.unit.sleep.test_dedup_merge import planted_digest\n"
              "print(planted_digest(sys.argv[1]))\n")
    digests = set()
    for seed in ("1", "4242"):
        done = subprocess.run([sys.executable, "-c", script, root], check=True,
                              capture_output=True, text=True, cwd=REPO_ROOT,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        digests.add(done.stdout.strip())
    assert digests == {planted_digest(root)}
