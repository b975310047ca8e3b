"""The kill test, with real processes: ``memhtml sleep run`` and ``merge`` ended by
``os._exit`` at every write point, then finished by the command an operator runs next.

A child process runs the real command line behind a fault-injecting wrapper (see
``kill_support``) and ends itself at the k-th write: every mutating call of
``PygitService`` and ``SqliteStatePlane``, every file-system write, and just after a
``commit`` or ``move_ref`` returns. For k = 1, 2, ... up to the number of writes the
uninterrupted command makes, on a fresh copy of one prepared store:

- **run**: the operator resumes (``sleep resume``) when the run's branch exists, and
  runs again (``sleep run``) when the kill came before it was cut. The branch must end
  at the uninterrupted run's tip, sha for sha (so tree for tree), with the same ledger
  blob, the same state-plane rows (a counter bumped once per run id, whichever
  invocation bumped it), main unmoved, one run branch, and every memory of the base
  active at the tip or under ``archive/<YYYY>/<path>``;
- **merge**: the operator merges again. main must end at the uninterrupted merge's
  commit, the marks applied exactly once (the same rows), the checkout clean and
  ``memhtml doctor`` without a checkout finding.

The prepared store is the demo (published), with a person's own commit that archives
one linked memory without rewriting its inbound links and deletes another (so
integrity rewrites and drops hrefs and regenerates pages), and one read (so
state-export has an access to write). Two variants: ``frame``, the phases as built,
and ``busy``, with stand-in bodies for three unbuilt phases that bump a counter,
commit in two parts, move a memory to the archive and earn ledger marks.

Each write point is shared out over ``SHARDS`` cases per variant, so xdist spreads
them; a point costs two commands (the kill, then the next command), each forked from
one warm server per module and worker (``write_faults``). The run is killed at every
write point of both variants. The merge is killed at every git and state-plane write
and at the first and last occurrence of each file-system write point (the checkout's
per-file writes repeat one line per file).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest

from memhtml.sleep.contract import branch_of, ledger_path
from memhtml.sleep.ledger import read_ledger
from tests.integration.sleep.kill_support import (
    BUSY_KEY,
    CRASHED,
    RUN_ID,
    SESSIONS,
    Child,
    PlaneRows,
    fresh,
    plane_rows,
    warm_child,
)
from tests.integration.sleep.sleep_support import LINKED, build_sleep_demo, dangle
from tests.integration.store.checkout_support import (
    LostWorkError,
    checkout_findings,
    clean_env,
    clean_environment,
    memhtml,
    porcelain,
)
from tests.integration.write_faults import WarmCli

pytestmark = [pytest.mark.slow, pytest.mark.first]

SHARDS = 4
VARIANTS = {"frame": False, "busy": True}
BRANCH = branch_of(RUN_ID)
READS = (LINKED, "areas/oncall/oncall-escalation.html")
"""Read before the run: state-export writes them (the busy variant archives the first,
which it then counts under ``unknown_paths``)."""
_STATUS = re.compile(rb'<meta name="memhtml-status" content="([a-z-]+)"')
_ARCHIVED = re.compile(r"archive/(\d{4})/(.+)")
# A file ``checkout._put_file`` writes before renaming it over a memory: a kill between
# the two leaves it, untracked (the crash suite tolerates it for the same reason).
_TEMPORARY = re.compile(r"\?\? (?:.*/)?\.[^/]+\.[0-9a-f]{8}\.tmp")


# -- reading a store --------------------------------------------------------------------


def _ref(root: Path, name: str) -> str | None:
    repo = pygit2.Repository(str(root / ".git"))
    ref = repo.references.get(name)
    return None if ref is None else str(ref.peel(pygit2.Commit).id)


def _main(root: Path) -> str:
    found = _ref(root, "refs/heads/main")
    assert found is not None
    return found


def _run_branches(root: Path) -> list[str]:
    repo = pygit2.Repository(str(root / ".git"))
    return sorted(name for name in repo.branches.local if name.startswith("sleep/"))


def _files(root: Path, commit: str) -> dict[str, bytes]:
    """Every blob of ``commit``'s tree, by path (symbolic links by their target)."""
    repo = pygit2.Repository(str(root / ".git"))
    found: dict[str, bytes] = {}

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            path = f"{prefix}{entry.name}"
            obj = repo[entry.id]
            if isinstance(obj, pygit2.Tree):
                walk(obj, path + "/")
            elif isinstance(obj, pygit2.Blob):
                found[path] = obj.data

    walk(repo[commit].peel(pygit2.Tree), "")
    return found


def _tree_listing(root: Path, commit: str) -> list[tuple[str, int, str]]:
    repo = pygit2.Repository(str(root / ".git"))
    listing: list[tuple[str, int, str]] = []

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            if entry.type_str == "tree":
                walk(repo[entry.id].peel(pygit2.Tree), f"{prefix}{entry.name}/")
            else:
                listing.append((f"{prefix}{entry.name}", entry.filemode, str(entry.id)))

    walk(repo[commit].peel(pygit2.Tree), "")
    return sorted(listing)


def _statuses(files: dict[str, bytes]) -> dict[str, str]:
    """The memories of a tree (files carrying ``memhtml-status``) and their status."""
    found: dict[str, str] = {}
    for path, data in files.items():
        if path.endswith(".html") and not path.startswith("memhtml-site/"):
            status = _STATUS.search(data)
            if status is not None:
                found[path] = status.group(1).decode()
    return found


def lost_at(root: Path, base: str, tip: str) -> list[str]:
    """Base memories the tip holds neither active at their path nor anywhere under
    ``archive/<YYYY>/<path>`` (an archived one of the base: held at all)."""
    before = _statuses(_files(root, base))
    after = _statuses(_files(root, tip))
    archived = {m.group(2) for path in after if (m := _ARCHIVED.fullmatch(path))}
    lost = []
    for path, status in sorted(before.items()):
        if after.get(path) == "active" or path in archived:
            continue
        if status != "active" and path in after:
            continue
        lost.append(path)
    return lost


def _ledger(root: Path, tip: str) -> bytes | None:
    return _files(root, tip).get(ledger_path(RUN_ID))


def _json(done: Child) -> Any:
    try:
        return json.loads(done.stdout)
    except ValueError as exc:
        raise AssertionError(f"no JSON from the child (exit {done.code}):\n{done.output}") \
            from exc


# -- the prepared store and the uninterrupted commands ---------------------------------------


@dataclass(frozen=True)
class Golden:
    """The uninterrupted run and merge of one variant."""

    run_store: Path
    """The store just after the run (copied before every merge kill)."""
    base: str
    tip: str
    tree: list[tuple[str, int, str]]
    ledger: bytes | None
    rows: PlaneRows
    run_events: tuple[str, ...]
    merged_main: str
    merged_rows: PlaneRows
    merge_events: tuple[str, ...]
    merge_reply: Any


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory, home: Path) -> Iterator[WarmCli]:
    """One warm server for the module's commands (see ``write_faults``)."""
    with WarmCli(clean_env(home), tmp_path_factory.mktemp("warm"), "sleep") as server:
        yield server


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory, home: Path) -> Path:
    root = tmp_path_factory.mktemp("prepared") / "store"
    build_sleep_demo(root)
    dangle(root)
    for path in READS:
        done = memhtml(clean_env(home), "read", path, "--store", str(root))
        assert done.returncode == 0, done.stderr
    return root


@pytest.fixture(scope="module")
def goldens(prepared: Path, home: Path, tmp_path_factory: pytest.TempPathFactory,
            warm: WarmCli) -> Callable[[str], Golden]:
    made: dict[str, Golden] = {}
    env = clean_env(home)

    def golden(variant: str) -> Golden:
        if variant in made:
            return made[variant]
        busy = VARIANTS[variant]
        work = tmp_path_factory.mktemp(f"golden-{variant}")
        root = fresh(prepared, work / "run")
        base = _main(root)
        ran = warm_child(warm, root, 0, "sleep", "run", "--json", busy=busy)
        assert ran.code == 0, ran.output
        tip = _ref(root, f"refs/heads/{BRANCH}")
        assert tip is not None and _json(ran)["head_sha"] == tip
        assert _main(root) == base
        merged = fresh(root, work / "merged")
        merge = warm_child(warm, merged, 0, "sleep", "merge", "--json", busy=busy)
        assert merge.code == 0, merge.output
        reply = _json(merge)
        assert reply["merged"] and reply["fast_forwarded"], reply
        assert _main(merged) == tip
        assert porcelain(merged, env) == []
        made[variant] = Golden(
            run_store=root, base=base, tip=tip, tree=_tree_listing(root, tip),
            ledger=_ledger(root, tip), rows=plane_rows(root), run_events=ran.events,
            merged_main=_main(merged), merged_rows=plane_rows(merged),
            merge_events=merge.events, merge_reply=reply)
        return made[variant]

    return golden


def test_the_uninterrupted_commands_write_what_the_kill_test_needs(
        goldens: Callable[[str], Golden], prepared: Path) -> None:
    frame, busy = goldens("frame"), goldens("busy")
    assert lost_at(frame.run_store, frame.base, frame.tip) == []
    assert lost_at(busy.run_store, busy.base, busy.tip) == []
    for golden in (frame, busy):
        assert any(e.startswith("PygitService.create_branch") for e in golden.run_events)
        assert sum(e.startswith("PygitService.commit returned") for e in golden.run_events) >= 3
        assert any(e.startswith("PygitService.move_ref returned") for e in golden.merge_events)
        assert any("[in PygitService.update_index]" in e for e in golden.merge_events)
        # The read before the run is in the export, and no sleep command logs one.
        assert len(golden.rows.accesses) == len(READS) and golden.merged_rows.accesses == \
            golden.rows.accesses
    # The frame earns no pending mark; its ledger, when retention archived anything,
    # holds only the decision records of why, which a merge neither applies nor counts.
    assert frame.ledger is None or read_ledger(frame.ledger).marks == ()
    assert frame.merge_reply["marks_pending"] == 0
    assert any(e.startswith("SqliteStatePlane.bump") for e in busy.run_events)
    assert any(e.startswith("SqliteStatePlane.mark_consolidated") for e in busy.merge_events)
    assert busy.ledger is not None
    assert (busy.merge_reply["marks_pending"], busy.merge_reply["marks_applied"]) == (4, 4)
    assert [row[:3] for row in busy.rows.corroboration] == [("edge", BUSY_KEY, 1)]
    assert busy.rows.consolidations == ()
    assert [row[:2] for row in busy.merged_rows.consolidations] == [
        (session, RUN_ID) for session in SESSIONS]
    assert busy.merged_rows.corroboration == busy.rows.corroboration


# -- the run, killed and resumed --------------------------------------------------------


def _finish_run(root: Path, golden: Golden, crash: Child, warm: WarmCli, busy: bool
                ) -> list[str]:
    """What the operator does next, and every way the result differs from the
    uninterrupted run."""
    problems: list[str] = []
    if _main(root) != golden.base:
        problems.append("the killed run moved main")
    cut = _ref(root, f"refs/heads/{BRANCH}") is not None
    saw_cut = any(e.startswith("PygitService.create_branch") for e in crash.events[:-1])
    if cut != saw_cut:
        problems.append(f"the branch {'exists' if cut else 'does not exist'}, but the wrapper "
                        f"saw create_branch {'return' if saw_cut else 'not return'}")
    command = ("sleep", "resume") if cut else ("sleep", "run")
    done = warm_child(warm, root, 0, *command, "--json", busy=busy)
    if done.code != 0:
        return [*problems, f"{' '.join(command)} exited {done.code}:\n{done.output}"]
    report = _json(done)
    if len(report["phases"]) != 17:
        problems.append(f"the report lists {len(report['phases'])} phases")
    if report["resumed"] != cut:
        problems.append(f"the report says resumed={report['resumed']}")
    branches = _run_branches(root)
    if branches != [BRANCH]:
        problems.append(f"run branches after finishing: {branches}")
    tip = _ref(root, f"refs/heads/{BRANCH}")
    if tip is None:
        return [*problems, "no run branch after finishing"]
    if report["head_sha"] != tip:
        problems.append(f"the report's head {report['head_sha']} is not the branch's {tip}")
    if _tree_listing(root, tip) != golden.tree:
        ours = set(_tree_listing(root, tip))
        theirs = set(golden.tree)
        problems.append(f"the tip tree differs: only here {sorted(ours - theirs)[:5]}, only "
                        f"in the uninterrupted run {sorted(theirs - ours)[:5]}")
    elif tip != golden.tip:
        problems.append(f"the tip tree is the same but the tip is {tip}, not {golden.tip}")
    if _ledger(root, tip) != golden.ledger:
        problems.append(f"the ledger differs: {_ledger(root, tip)!r} != {golden.ledger!r}")
    rows = plane_rows(root)
    if rows != golden.rows:
        problems.append(f"the state plane differs: {rows} != {golden.rows}")
    if _main(root) != golden.base:
        problems.append("finishing the run moved main")
    lost = lost_at(root, golden.base, tip)
    if lost:
        problems.append(f"base memories neither active at the tip nor archived: {lost}")
    return problems


@pytest.mark.parametrize("shard", range(SHARDS))
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_run_killed_at_any_write_resumes_to_the_uninterrupted_branch(
        variant: str, shard: int, goldens: Callable[[str], Golden], prepared: Path,
        tmp_path: Path, warm: WarmCli) -> None:
    golden = goldens(variant)
    busy = VARIANTS[variant]
    points = len(golden.run_events)
    failures: list[str] = []
    for k in range(shard + 1, points + 1, SHARDS):
        root = fresh(prepared, tmp_path / f"run-{k}")
        crash = warm_child(warm, root, k, "sleep", "run", busy=busy)
        assert crash.code == CRASHED, (k, crash.code, crash.output)
        assert crash.point == golden.run_events[k - 1], "the writes are not deterministic"
        problems = _finish_run(root, golden, crash, warm, busy)
        if problems:
            failures.append(f"k={k} killed before {crash.point}:\n  " + "\n  ".join(problems))
        shutil.rmtree(root)
    if failures:
        raise LostWorkError("\n".join(failures))


# -- the merge, killed and merged again ------------------------------------------------------


def _finish_merge(root: Path, golden: Golden, crash: Child, warm: WarmCli, busy: bool
                  ) -> list[str]:
    problems: list[str] = []
    moved = _main(root)
    swapped = any(e.startswith("PygitService.move_ref returned") for e in crash.events)
    if moved not in (golden.base, golden.tip) or (moved == golden.tip) != swapped:
        problems.append(f"main is at {moved} after the kill; the wrapper saw move_ref "
                        f"{'return' if swapped else 'not return'}")
    applied = any(e.startswith("SqliteStatePlane.mark_consolidated") for e in crash.events[:-1])
    if not applied and plane_rows(root) != golden.rows:
        problems.append("the state plane changed before any mark was applied")
    done = warm_child(warm, root, 0, "sleep", "merge", "--json", busy=busy)
    if done.code != 0:
        return [*problems, f"sleep merge again exited {done.code}:\n{done.output}"]
    reply = _json(done)
    if not reply["merged"] or reply["fast_forwarded"] == swapped:
        problems.append(f"the second merge: merged={reply['merged']}, "
                        f"fast_forwarded={reply['fast_forwarded']}")
    wanted = (golden.merge_reply["marks_pending"], golden.merge_reply["marks_applied"])
    if (reply["marks_pending"], reply["marks_applied"]) != wanted:
        problems.append(f"the second merge applied {reply['marks_applied']} of "
                        f"{reply['marks_pending']} marks, not {wanted[1]} of {wanted[0]}")
    if reply["marks_failed"]:
        problems.append(f"marks failed: {reply['marks_failed']}")
    if _main(root) != golden.merged_main:
        problems.append(f"main is at {_main(root)}, not {golden.merged_main}")
    rows = plane_rows(root)
    if rows != golden.merged_rows:
        problems.append(f"the state plane differs: {rows} != {golden.merged_rows}")
    unexpected = [line for line in porcelain(root, warm.env)
                  if not _TEMPORARY.fullmatch(line)]
    if unexpected:
        problems.append(f"git status --porcelain: {unexpected}")
    findings = checkout_findings(root)
    if findings:
        problems.append(f"memhtml doctor: {findings}")
    return problems


def _merge_points(golden: Golden) -> list[int]:
    """Every git and state-plane write of the merge, and the first and the last
    occurrence of each file-system write point. The checkout's per-file writes repeat
    the same few lines once per file the run changed (about 300 points for the demo's
    night), and each point costs two commands; killing at the first and the last file of
    each line covers every code path the others would."""
    points: set[int] = set()
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for k, event in enumerate(golden.merge_events, start=1):
        if event.startswith(("PygitService.", "SqliteStatePlane.")):
            points.add(k)
        first.setdefault(event, k)
        last[event] = k
    return sorted(points | set(first.values()) | set(last.values()))


@pytest.mark.parametrize("shard", range(SHARDS))
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_merge_killed_at_any_write_is_finished_by_merging_again(
        variant: str, shard: int, goldens: Callable[[str], Golden], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, home: Path, warm: WarmCli) -> None:
    golden = goldens(variant)
    clean_environment(monkeypatch, home)  # for the in-process doctor
    busy = VARIANTS[variant]
    points = _merge_points(golden)
    failures: list[str] = []
    for k in points[shard::SHARDS]:
        root = fresh(golden.run_store, tmp_path / f"merge-{k}")
        crash = warm_child(warm, root, k, "sleep", "merge", busy=busy)
        assert crash.code == CRASHED, (k, crash.code, crash.output)
        assert crash.point == golden.merge_events[k - 1], "the writes are not deterministic"
        problems = _finish_merge(root, golden, crash, warm, busy)
        if problems:
            failures.append(f"k={k} killed before {crash.point}:\n  " + "\n  ".join(problems))
        shutil.rmtree(root)
    if failures:
        raise LostWorkError("\n".join(failures))


@pytest.mark.parametrize("point", ["PygitService.move_ref returned",
                                   "SqliteStatePlane.mark_consolidated"])
def test_a_merge_killed_between_the_fast_forward_and_the_ledger_applies_the_marks_once(
        point: str, goldens: Callable[[str], Golden], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, home: Path, warm: WarmCli) -> None:
    golden = goldens("busy")
    env = clean_environment(monkeypatch, home)
    k = next(n for n, e in enumerate(golden.merge_events, start=1) if e.startswith(point))
    root = fresh(golden.run_store, tmp_path / "store")
    crash = warm_child(warm, root, k, "sleep", "merge", busy=True)
    assert crash.code == CRASHED, crash.output
    assert _main(root) == golden.tip, "killed after the fast-forward"
    assert plane_rows(root) == golden.rows, "and before any mark"
    status = warm_child(warm, root, 0, "sleep", "status", RUN_ID, "--json",
                   busy=True)
    assert status.code == 0 and _json(status)["runs"][0]["state"] == "merged"
    for attempt in ("second", "third"):
        done = warm_child(warm, root, 0, "sleep", "merge", "--json", busy=True)
        assert done.code == 0, (attempt, done.output)
        reply = _json(done)
        assert reply["merged"] and not reply["fast_forwarded"], (attempt, reply)
        assert (reply["marks_pending"], reply["marks_applied"]) == (4, 4), (attempt, reply)
        assert plane_rows(root) == golden.merged_rows, attempt
        assert _main(root) == golden.merged_main
    assert [line for line in porcelain(root, env) if not _TEMPORARY.fullmatch(line)] == []
    assert checkout_findings(root) == []
    assert subprocess.run(["git", "diff", "--quiet", golden.tip], cwd=root, env=env,
                          check=False).returncode == 0
