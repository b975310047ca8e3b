"""A crash at any write point of any door leaves nothing a person's git can revert.

The doors are the writes, publish, a markdown import, and ``sync`` both ways the branch
moves there: a merge commit and a fast-forward to the remote's commit.

A child process runs the real CLI with a fault-injecting wrapper around every call that
writes (the file system's writes and ``PygitService``'s mutating methods: see
``write_faults``, which forks each command from a warm interpreter) and ends itself with
``os._exit`` just before the k-th such call, or just after the commit returns (the
branch moved, the checkout not yet). For every git write and the first and last
occurrence of each file-system write point of the uninterrupted door (``_points``),
on a fresh copy of one prepared checkout, the next command must succeed and leave the
checkout as the branch has it: nothing staged, no memory file changed, a person's
``git commit -a`` reverting nothing, ``doctor`` finding nothing.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.store.checkout_support import (
    PERSON,
    LostWorkError,
    checkout_findings,
    clean_env,
    clean_environment,
    git,
    hand_commit,
    memhtml,
    porcelain,
    rev,
    tree,
)
from tests.integration.write_faults import CRASHED, Ran, WarmCli

pytestmark = [pytest.mark.slow, pytest.mark.first]

PERSONS_FILE = "notes/mine.txt"
KETTLE = "areas/inbox/kettle.html"

MARKDOWN = "{markdown}"
DOORS: dict[str, tuple[str, ...]] = {
    "write": ("write", "--title", "Crash note", "--claim", "A crash at any point loses nothing."),
    "correct": ("correct", KETTLE, "--title", "Kettle, corrected",
                "--claim", "The kettle is descaled on Fridays."),
    # The deploy memory links to the kettle: archive and move rewrite that link too.
    "archive": ("archive", KETTLE),
    "move": ("move", KETTLE, "areas/kitchen/"),
    "publish": ("publish",),
    "import-markdown": ("import", "markdown", MARKDOWN),
    # The remote "origin" and the store both moved since they parted: a merge commit.
    "sync-merge": ("sync", "origin"),
    # The remote "ahead" holds the store's tip and one more commit: a fast-forward.
    "sync-forward": ("sync", "ahead"),
}
REMOTES = {"sync-merge": "origin", "sync-forward": "ahead"}
MOVES = {"sync-merge": "PygitService.commit_merge returned",
         "sync-forward": "PygitService.move_ref returned"}
"""How each sync door moves the branch (every other door: a commit)."""
"""The remote each sync door pushes to; every run gets its own copy of it."""
LANDED = ("PygitService.commit returned", "PygitService.commit_merge returned",
          "PygitService.move_ref returned")
"""The events after which the branch has moved."""

IN_INDEX_LOCK = "[in PygitService.update_index]"
"""The points inside ``update_index``: every one of them is after git's index lock is
taken (the lock itself is created with ``os.open``, not a wrapped call)."""

# A file ``Checkout.put_file`` writes before renaming it over the memory: a crash
# between the two leaves it, untracked, for good. Litter a careless ``git add -A`` would
# commit, but nothing a person's ``git commit`` reverts, so it is tolerated here.
_TEMPORARY = re.compile(r"\?\? (?:.*/)?\.[^/]+\.[0-9a-f]{8}\.tmp")


@dataclass(frozen=True)
class Prepared:
    root: Path
    markdown: Path
    tip: str
    remotes: dict[str, Path]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Prepared:
    """A checkout made by ``memhtml init``, with a person's committed file and a few
    memories, one linking to another; and a markdown directory to import."""
    base = tmp_path_factory.mktemp("prepared")
    env = clean_env(base / "home")
    root = base / "store"
    done = memhtml(env, "init", str(root))
    assert done.returncode == 0, done.stderr
    hand_commit(root, env, PERSONS_FILE, "the person's own notes\n", "my notes")
    writes = (
        ("--title", "Kettle", "--claim", "The kettle is descaled on Mondays."),
        ("--title", "Deploy", "--claim", "Deploys happen on Tuesdays.",
         "--link", f"relates_to=/{KETTLE}"),
        ("--title", "Ladder", "--claim", "The ladder lives in the shed."),
    )
    for fields in writes:
        done = memhtml(env, "write", *fields, "--store", str(root))
        assert done.returncode == 0, done.stderr
    assert porcelain(root, env) == []
    remotes = _diverge(base, root, env)
    markdown = base / "markdown"
    (markdown / "sub").mkdir(parents=True)
    (markdown / "deploy.md").write_text(
        "---\nname: deploy-window\ndescription: Deploys to checkout-api happen on "
        "Tuesdays.\ntype: project\n---\n\nNever deploy on a Friday.\n", encoding="utf-8")
    (markdown / "sub" / "oncall.md").write_text(
        "# On-call rotation\n\nPriya runs the on-call rotation.\n", encoding="utf-8")
    assert porcelain(root, env) == []
    return Prepared(root, markdown, rev(root, env), remotes)


def _diverge(base: Path, root: Path, env: dict[str, str]) -> dict[str, Path]:
    """Two remotes for the sync doors: "origin", which another clone moved after the
    store's last push while the store wrote too (a merge); and "ahead", which holds the
    store's tip and one more commit (a fast-forward)."""

    def moved_by_another_clone(remote: Path, name: str, claim: str) -> None:
        other = base / f"{name}-clone"
        for tokens in (("clone", str(remote), str(other)),
                       ("write", "--title", name.title(), "--claim", claim,
                        "--store", str(other)),
                       ("sync", "--store", str(other))):
            done = memhtml(env, *tokens)
            assert done.returncode == 0, done.stderr

    origin, ahead = base / "origin.git", base / "ahead.git"
    git(base, env, "clone", "-q", "--bare", str(root), str(origin))
    git(root, env, "remote", "add", "origin", str(origin))
    moved_by_another_clone(origin, "window", "The window sticks in winter.")
    done = memhtml(env, "write", "--title", "Shed key", "--claim",
                   "The shed key hangs by the door.", "--store", str(root))
    assert done.returncode == 0, done.stderr
    git(base, env, "clone", "-q", "--bare", str(root), str(ahead))
    git(root, env, "remote", "add", "ahead", str(ahead))
    moved_by_another_clone(ahead, "gate", "The gate latch was oiled in May.")
    return {"origin": origin, "ahead": ahead}


def _crash(prepared: Prepared, door: str, k: int, work: Path, warm: WarmCli
           ) -> tuple[Path, Ran]:
    """Run ``door`` on a fresh copy of the prepared store, dying at write point ``k``
    (0: never)."""
    root = work / f"{door}-{k}"
    shutil.copytree(prepared.root, root, symlinks=True)
    if door in REMOTES:
        name = REMOTES[door]
        remote = work / f"{door}-{k}.git"
        shutil.copytree(prepared.remotes[name], remote, symlinks=True)
        git(root, dict(warm.env), "remote", "set-url", name, str(remote))
    tokens = [str(prepared.markdown) if t == MARKDOWN else t for t in DOORS[door]]
    return root, warm.run(*tokens, "--store", str(root), at=k)


def _discard(root: Path) -> None:
    """A run's checkout and its copy of a remote, if it had one."""
    shutil.rmtree(root)
    shutil.rmtree(root.with_name(root.name + ".git"), ignore_errors=True)


def _after(prepared: Prepared, root: Path, crash: Ran, warm: WarmCli
           ) -> tuple[str, ...]:
    """What a person sees next: every way the checkout fails them."""
    env = dict(warm.env)
    problems: list[str] = []
    moved = rev(root, env, "refs/heads/main")
    committed = any(e.startswith(LANDED) for e in crash.events)
    if crash.code == CRASHED and (moved != prepared.tip) != committed:
        problems.append(f"the branch {'moved' if moved != prepared.tip else 'did not move'}, "
                        "but the wrapper saw the commit "
                        f"{'return' if committed else 'not return'}")

    status = warm.run("status", "--store", str(root))
    if status.code != 0:
        problems.append(f"memhtml status exited {status.code}: {_first(status.stderr)}")
    lines = porcelain(root, env)
    unexpected = [line for line in lines if not _TEMPORARY.fullmatch(line)]
    if unexpected:
        problems.append(f"git status --porcelain after memhtml status: {unexpected}")

    before = tree(root, env, "refs/heads/main")
    target = root / PERSONS_FILE
    target.write_text(target.read_text(encoding="utf-8") + "one more line\n",
                      encoding="utf-8")
    commit = git(root, env, *PERSON, "commit", "-q", "-a", "-m", "the person's edit",
                 check=False)
    if commit.returncode != 0:
        problems.append(f"the person's git commit -a failed: {_first(commit.stderr)}")
        lock = root / ".git" / "index.lock"
        if lock.exists():
            # What git's own message tells the person to do about a lock no process
            # holds; the revert check below then says what that costs.
            lock.unlink()
            commit = git(root, env, *PERSON, "commit", "-q", "-a", "-m",
                         "the person's edit, after removing .git/index.lock", check=False)
            if commit.returncode != 0:
                problems.append("git commit -a failed again after removing index.lock: "
                                f"{_first(commit.stderr)}")
    after = tree(root, env, "refs/heads/main")
    if after.get(PERSONS_FILE) == before.get(PERSONS_FILE):
        problems.append("the person's edit was not committed")
    reverted = sorted(p for p, entry in before.items()
                      if p != PERSONS_FILE and after.get(p) != entry)
    if reverted:
        problems.append(f"the person's git commit -a reverted {reverted}")
    smuggled = sorted(p for p in after if p not in before)
    if smuggled:
        problems.append(f"the person's git commit -a added {smuggled}, which they never "
                        "staged")
    findings = checkout_findings(root)
    if findings:
        problems.append(f"memhtml doctor: {findings}")
    return tuple(problems)


def _first(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else ""


def _report(door: str, failures: list[tuple[Ran, tuple[str, ...]]]) -> str:
    return "\n".join(
        f"{door} k={crash.k} crashed before {crash.point}:\n  " + "\n  ".join(problems)
        for crash, problems in failures)


def _points(events: tuple[str, ...]) -> list[int]:
    """Every git write of the door (and just after each branch move), and the first and
    the last occurrence of each file-system write point. A checkout's per-file writes
    repeat the same few lines once per file (publish writes one page per memory):
    killing at the first and the last file of each line covers every code path the
    others would, as the sleep kill test does for a merge."""
    chosen: set[int] = set()
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for k, event in enumerate(events, start=1):
        if event.startswith("PygitService."):
            chosen.add(k)
        first.setdefault(event, k)
        last[event] = k
    return sorted(chosen | set(first.values()) | set(last.values()))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One clean home for the module's tests (nothing writes there)."""
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def warm(home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WarmCli]:
    """One warm server per module and worker: each command is a fork of it, begun with
    nothing of memhtml run (``write_faults``), so the tests can share it."""
    with WarmCli(clean_env(home), tmp_path_factory.mktemp("warm"), "checkout") as server:
        yield server


@pytest.mark.parametrize("door", sorted(DOORS))
def test_a_crash_at_any_write_point_is_finished_by_the_next_command(
        door: str, prepared: Prepared, warm: WarmCli, home: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    clean_environment(monkeypatch, home)
    failures: list[tuple[Ran, tuple[str, ...]]] = []
    root, whole = _crash(prepared, door, 0, tmp_path, warm)
    assert whole.code == 0, whole.output
    problems = _after(prepared, root, whole, warm)
    if problems:
        failures.append((whole, problems))
    _discard(root)
    assert len(whole.events) > 5, f"the wrapper saw only {whole.events}"
    assert any(e.startswith(MOVES.get(door, LANDED)) for e in whole.events), whole.events
    for k in _points(whole.events):
        root, crash = _crash(prepared, door, k, tmp_path, warm)
        assert crash.code == CRASHED, (k, crash.code, crash.output)
        assert crash.point == whole.events[k - 1], "the writes are not deterministic"
        # The points holding git's index lock are the test's below.
        if IN_INDEX_LOCK not in crash.point:
            problems = _after(prepared, root, crash, warm)
            if problems:
                failures.append((crash, problems))
        _discard(root)
    if failures:
        raise LostWorkError(_report(door, failures))


@pytest.mark.parametrize("door", sorted(DOORS))
def test_a_crash_holding_gits_index_lock_is_finished_by_the_next_command(
        door: str, prepared: Prepared, warm: WarmCli, home: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    clean_environment(monkeypatch, home)
    failures: list[tuple[Ran, tuple[str, ...]]] = []
    root, whole = _crash(prepared, door, 0, tmp_path, warm)
    assert whole.code == 0, whole.output
    _discard(root)
    points = [k for k, event in enumerate(whole.events, start=1) if IN_INDEX_LOCK in event]
    assert points, whole.events
    for k in points:
        root, crash = _crash(prepared, door, k, tmp_path, warm)
        assert crash.code == CRASHED, (k, crash.code, crash.output)
        problems = _after(prepared, root, crash, warm)
        if problems:
            failures.append((crash, problems))
        _discard(root)
    if failures:
        raise LostWorkError(_report(door, failures))
