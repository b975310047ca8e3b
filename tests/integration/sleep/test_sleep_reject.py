"""A reviewer's no to single changes of a night: ``memhtml sleep reject``, then merge.

Through the real command line on a store built with ``memhtml write`` (the store of
``test_sleep_explained``: a stale episode retention archives, a copy dedup folds into
its keeper, a vetoed pair that becomes a review task). The law, over any choice of the
run's changes: the rejected files read at the new tip as the base held them, every
other file as the run left it but for links pointed back, and no link points at a
file the tip held and the new tip does not.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from returns.result import Success

from memhtml.compose.run import perform, value_of
from memhtml.contracts.paths import to_tree_path
from memhtml.head import record_from
from memhtml.sleep.contract import REJECT_OP, report_path
from memhtml.sleep.errors import describe_sleep_error
from memhtml.sleep.explain import is_run_record
from memhtml.sleep.reject import reject_changes
from tests.integration.cli.cli_support import call_text
from tests.integration.sleep import test_sleep_explained as explained
from tests.integration.sleep.sleep_support import deps_at
from tests.integration.sleep.test_sleep_explained import (
    COPY,
    KEEPER,
    NIGHT,
    STALE,
    Clock,
    cli,
    git,
    text_of,
)

clock, env, store = explained.clock, explained.env, explained.store
"""The explained store and its pinned clock, as fixtures here too."""


def night(store: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str, str]:
    """A finished run: its id, base and tip."""
    code, report, err = cli(capsys, "sleep", "run", "--store", str(store))
    assert code == 0 and report["branch"], (report, err)
    return report["run_id"], report["base_sha"], report["head_sha"]


def tree(root: Path, commit: str) -> dict[str, bytes]:
    names = git(root, "ls-tree", "-r", "--name-only", commit).splitlines()
    return {n: subprocess.run(["git", "show", f"{commit}:{n}"], cwd=root, check=True,
                              capture_output=True).stdout for n in names}


def targets(path: str, data: bytes) -> set[str]:
    record = record_from(data.decode("utf-8"), path).value_or(None)
    if record is None:
        return set()
    found = {to_tree_path(link.href) for link in record.links}
    if record.superseded_by:
        found.add(to_tree_path(record.superseded_by))
    return found


def test_reject_an_archive_then_merge_keeps_the_memory_where_it_was(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = ("--store", str(store))
    run_id, base, tip = night(store, capsys)
    code, done, err = cli(capsys, "sleep", "reject", run_id, STALE, *s)
    assert code == 0, (done, err)
    assert [(r["path"], r["change"]) for r in done["rejected"]] == [(STALE, "archived")]
    new_tip = git(store, "rev-parse", f"sleep/{run_id}").strip()
    assert done["commit"] == new_tip and git(store, "rev-parse", f"{new_tip}^").strip() == tip
    trailers = git(store, "log", "-1", "--format=%(trailers)", new_tip)
    assert f"Memhtml-Op: {REJECT_OP}" in trailers and f"Memhtml-Rejected: {STALE}" in trailers
    assert "Memhtml-Phase" not in trailers

    # The review lists it as rejected, no longer as a change; the rest stands.
    code, review, _ = cli(capsys, "sleep", "review", run_id, *s)
    listed = {f["path"] for f in review["files"]}
    assert STALE not in listed and COPY in listed
    assert review["rejected"] == [[STALE, new_tip]]
    assert f"rejected     {STALE} @ {new_tip[:10]}" in text_of(capsys, "sleep", "review",
                                                               run_id, *s)

    # Merge lands the rest; the memory stays at its path, with its base bytes.
    code, merged, err = cli(capsys, "sleep", "merge", run_id, *s)
    assert code == 0 and merged["merged"], (merged, err)
    main = tree(store, "main")
    assert main[STALE] == tree(store, base)[STALE]
    assert f"archive/2026/{STALE}" not in main
    assert f"archive/2026/{COPY}" in main and COPY not in main
    assert (store / STALE).read_bytes() == main[STALE]
    assert not (store / "archive" / "2026" / STALE).exists()


def test_reject_a_fold_points_the_keeper_back_and_names_what_the_decision_left(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = ("--store", str(store))
    run_id, base, tip = night(store, capsys)
    before = tree(store, tip)
    assert f"archive/2026/{COPY}" in targets(KEEPER, before[KEEPER])
    code, out, err = call_text(capsys, "sleep", "reject", run_id, COPY, *s)
    assert code == 0, (out, err)
    assert f"note: {KEEPER}: its links point back at the restored memory" in err
    assert f"note: {KEEPER} was changed by the same decision and still is" in err
    assert f"archived     {COPY} -> archive/2026/{COPY} put back" in out
    after = tree(store, git(store, "rev-parse", f"sleep/{run_id}").strip())
    assert after[COPY] == tree(store, base)[COPY]
    assert COPY in targets(KEEPER, after[KEEPER])
    assert f"archive/2026/{COPY}" not in targets(KEEPER, after[KEEPER])

    # Rejecting the keeper's change too undoes the whole fold: both as the base held them.
    code, done, err = cli(capsys, "sleep", "reject", run_id, KEEPER, *s)
    assert code == 0, (done, err)
    final, old = tree(store, done["commit"]), tree(store, base)
    assert (final[COPY], final[KEEPER]) == (old[COPY], old[KEEPER])


def test_refusals_move_nothing(store: Path, capsys: pytest.CaptureFixture[str],
                               clock: Clock) -> None:
    s = ("--store", str(store))
    run_id, _, tip = night(store, capsys)
    refusals = {
        "areas/inbox/never-written.html": "changed no such file",
        report_path(run_id): "the run's own record",
        "../outside.html": "changed no such file",
    }
    for path, words in refusals.items():
        code, out, _ = cli(capsys, "sleep", "reject", run_id, path, *s)
        assert code != 0 and words in out["error"], (path, out)
        assert git(store, "rev-parse", f"sleep/{run_id}").strip() == tip
    code, out, _ = cli(capsys, "sleep", "reject", "2001-01-01", STALE, *s)
    assert code != 0 and git(store, "rev-parse", f"sleep/{run_id}").strip() == tip

    # A merged run takes no rejection.
    code, merged, err = cli(capsys, "sleep", "merge", run_id, *s)
    assert code == 0 and merged["merged"], (merged, err)
    code, out, _ = cli(capsys, "sleep", "reject", run_id, STALE, *s)
    assert code != 0 and "merged" in out["error"], out


@pytest.fixture
def ran(store: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """One night, reviewed: built once for all the examples of a test."""
    run_id, base, tip = night(store, capsys)
    code, review, _ = cli(capsys, "sleep", "review", run_id, "--store", str(store))
    assert code == 0
    rows = [f for f in review["files"] if not is_run_record(f["path"])]
    return {"run_id": run_id, "tip": tip, "rows": rows, "base_tree": tree(store, base),
            "tip_tree": tree(store, tip)}


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_choice_of_changes_puts_exactly_those_back(
        store: Path, ran: dict[str, Any], data: st.DataObject) -> None:
    rows: list[dict[str, Any]] = ran["rows"]
    old, was, tip = ran["base_tree"], ran["tip_tree"], ran["tip"]
    chosen: Sequence[dict[str, Any]] = data.draw(
        st.lists(st.sampled_from(rows), min_size=1, unique_by=lambda r: str(r["path"])))
    deps = deps_at(store, NIGHT)
    ref = f"refs/heads/sleep/{ran['run_id']}"
    value_of(deps.git.move_ref(ref, git(store, "rev-parse", ref).strip(), tip))
    outcome = perform(reject_changes(deps, ran["run_id"], [r["path"] for r in chosen]))
    if not isinstance(outcome, Success):
        reason = describe_sleep_error(outcome.failure())
        assert "pointing at nothing" in reason, reason
        assert git(store, "rev-parse", ref).strip() == tip
        return
    done = outcome.unwrap()
    new = tree(store, done.commit)
    picked = {r["path"] for r in chosen}
    homes = {r["path"]: r["to"] for r in rows if r["to"] and r["path"] not in picked}
    for row in chosen:
        path = row["path"]
        if row["change"] == "created":
            assert path not in new
            continue
        followed = {homes[t] if t in homes and t not in new else t
                    for t in targets(path, old[path])}
        assert targets(path, new[path]) == followed, path
        if followed == targets(path, old[path]):
            assert new[path] == old[path], path
        if row["to"]:
            assert row["to"] not in new
    touched = picked | {r["to"] for r in chosen if r["to"]}
    for path, data_at_tip in was.items():
        if path not in touched:
            assert new.get(path) == data_at_tip or path in done.relinked, path
    for path, data_now in new.items():
        for target in targets(path, data_now):
            assert target in new or target not in was, (path, target)
