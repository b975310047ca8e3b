"""bench/team: a team's memory on one remote over smart HTTP, under a steady load.

    python -m bench.team                          # 8 clones for 120 s
    python -m bench.team --clones 4 --seconds 30  # the CI form (test_team_bench)

One bare repository is served by git's ``git-http-backend`` behind lighttpd on
loopback, with basic auth (``tests/integration/sync/http_git_server.py``); every
clone's git reads the credential from git's own ``store`` helper, none from a URL.
``--clones`` clones of one store each run a ``memhtml mcp`` server over stdio with
``sync_remote`` set (``MEMHTML_SYNC_REMOTE=origin``, ``MEMHTML_SYNC_SECONDS``), driven
by the official MCP client, and write one memory every ``1 / --rate`` seconds for
``--seconds``. One more clone runs ``memhtml sleep run``, ``memhtml sleep merge`` and
``memhtml sync`` in a loop meanwhile, as a nightly curator that never stops.

A watcher reads every clone's branch every ``POLL_SECONDS``; a write has arrived on
another clone when its marker is first seen in that clone's branch, so an arrival
time is exact to within one poll. At the end every clone syncs twice, in turn, and
the run checks what a team needs: every clone and the server hold one tree, each
acknowledged write is held exactly once, and the server's reflog (``core.
logAllRefUpdates``) shows only fast-forwards. Printed: writes acknowledged and their
throughput, the MCP calls that failed, sync notes the servers gave, the sleep runs,
and the p50/p95/max time from a write's acknowledgement to its arrival on each other
clone. A timing printed here is one run on a shared machine: a figure, never a bound.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client
from tests.integration.sync.http_git_server import (
    WRITER,
    HttpGitServer,
    git_config_for,
    missing,
)
from tests.integration.sync.sync_support import (
    forced_updates,
    main_tree,
    memory_claims,
)

from bench.common import ROOT, percentile

CLONES = 8
SECONDS = 120.0
RATE = 0.5
"""Writes per second per clone."""
SYNC_SECONDS = 2.0
"""Each server's ``sync_seconds``: how stale a pull may be, how long a write waits
to be pushed with those after it."""
POLL_SECONDS = 0.25
SLEEP_PAUSE_SECONDS = 2.0
SEED = 20261207
FINAL_SYNC_TRIES = 4
MARKER = re.compile(r"\bteam-c(\d+)-w(\d+)\b")
WORDS = ("amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor",
         "indigo", "juniper", "kelp", "lichen", "marble", "nectar", "onyx", "pollen",
         "quartz", "river", "saffron", "tundra", "umber", "violet", "willow", "xenon",
         "yarrow", "zephyr", "copper", "meadow", "glacier", "orchid")
"""Claims are drawn from these, so no two are near-duplicates a curation phase would
fold, and each carries its own marker."""


@dataclass(frozen=True)
class Ack:
    """An acknowledged write: which clone, its marker, when the reply came."""

    clone: int
    marker: str
    at: float


@dataclass
class TeamRun:
    """What one run measured and found."""

    clones: int
    seconds: float
    acks: list[Ack] = field(default_factory=list)
    failed_calls: list[str] = field(default_factory=list)
    sync_notes: list[str] = field(default_factory=list)
    sleep_steps: dict[str, int] = field(default_factory=dict)
    arrivals: list[float] = field(default_factory=list)
    """Seconds from a write's acknowledgement to its arrival on another clone, for
    each (write, other clone) pair that arrived while the load ran."""
    after_load: int = 0
    """Pairs that arrived only with the final syncs (a write near the end)."""
    not_arrived: int = 0
    final_sync_failures: list[str] = field(default_factory=list)
    trees: dict[str, str] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)
    doubled: dict[str, list[str]] = field(default_factory=dict)
    forced: list[str] = field(default_factory=list)
    pushes: int = 0

    @property
    def converged(self) -> bool:
        return len(set(self.trees.values())) == 1

    @property
    def sound(self) -> bool:
        return (self.converged and not self.lost and not self.doubled and not self.forced
                and not self.final_sync_failures)


def _environment(config: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """What every memhtml and git process of the run sees: the member's git config
    (its credential helper), no system config, lexical search, this source tree."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1",
           "MEMHTML_EMBEDDER": "none",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    return {**env, **(extra or {})}


def _cold_command(env: Mapping[str, str], tokens: Sequence[str], timeout: float
                  ) -> tuple[int, str]:
    ran = subprocess.run([sys.executable, "-m", "memhtml", *tokens], env=dict(env),
                         capture_output=True, text=True, timeout=timeout, check=False,
                         stdin=subprocess.DEVNULL)
    return ran.returncode, ran.stdout


def _cold_server(env: Mapping[str, str], store: Path) -> tuple[str, list[str]]:
    return sys.executable, ["-m", "memhtml.mcp", "--store", str(store)]


@dataclass(frozen=True)
class Processes:
    """How the run starts memhtml: ``command`` runs one command line to its end (its
    exit code and stdout), ``server`` gives the command line of an MCP server. By
    default each is a fresh interpreter, as people run them; the test's short form
    forks them from a warm interpreter (``tests/integration/warm_cli.py``), which runs
    the same program without paying each process's imports."""

    command: Callable[[Mapping[str, str], Sequence[str], float], tuple[int, str]] = \
        _cold_command
    server: Callable[[Mapping[str, str], Path], tuple[str, list[str]]] = _cold_server


def _memhtml(processes: Processes, env: dict[str, str], *tokens: str,
             timeout: float = 300.0) -> tuple[int, dict[str, Any]]:
    code, out = processes.command(env, [*tokens, "--json"], timeout)
    try:
        answer = json.loads(out) if out.strip() else {}
    except json.JSONDecodeError:
        answer = {"error": out[-2000:]}
    return code, answer


def _git(env: dict[str, str], root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], env=env, check=True,
                          capture_output=True, text=True).stdout


def _claim(rng: random.Random, clone: int, serial: int) -> tuple[str, str]:
    marker = f"team-c{clone}-w{serial}"
    words = " ".join(rng.sample(WORDS, 6))
    return marker, f"{marker} notes {words}."


class Watcher:
    """Every clone's branch read every ``POLL_SECONDS`` in a thread: when a marker is
    first seen in a clone, and the tips it went through."""

    def __init__(self, stores: list[Path]) -> None:
        self._stores = stores
        self.first_seen: dict[tuple[str, int], float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._tips: list[pygit2.Oid | None] = [None] * len(stores)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._poll()  # what the final syncs brought

    def _run(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            self._poll()

    def _poll(self) -> None:
        now = time.monotonic()
        for index, store in enumerate(self._stores):
            try:
                repo = pygit2.Repository(str(store))
                ref = repo.references.get("refs/heads/main")
                if ref is None:
                    continue
                tip = ref.peel(pygit2.Commit)
            except (pygit2.GitError, KeyError, ValueError):
                continue
            before = self._tips[index]
            if before == tip.id:
                continue
            old = repo[before].peel(pygit2.Tree) if before is not None else None
            diff = (old.diff_to_tree(tip.tree) if old is not None
                    else tip.tree.diff_to_tree(swap=True))
            for delta in diff.deltas:
                if delta.status_char() not in ("A", "M", "R", "C"):
                    continue
                blob = repo.get(delta.new_file.id)
                if not isinstance(blob, pygit2.Blob):
                    continue
                for found in MARKER.finditer(blob.data.decode("utf-8", "replace")):
                    self.first_seen.setdefault((found.group(0), index), now)
            self._tips[index] = tip.id


@dataclass
class _Start:
    """The load starts when every server has answered ``initialize`` (a server's
    start-up is not load), and ends ``seconds`` later."""

    waiting: int
    seconds: float
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    at: float = 0.0
    until: float = 0.0

    async def arrived(self) -> None:
        self.waiting -= 1
        if self.waiting == 0:
            self.at = time.monotonic()
            self.until = self.at + self.seconds
            self.ready.set()
        await self.ready.wait()


async def _writer(index: int, store: Path, env: dict[str, str], start: _Start,
                  rate: float, seed: int, run: TeamRun, processes: Processes) -> None:
    """One clone's MCP server, writing one memory every ``1 / rate`` seconds."""
    rng = random.Random(seed * 1000 + index)
    command, args = processes.server(env, store)
    params = StdioServerParameters(command=command, args=args, cwd=str(store.parent),
                                   env=env)
    interval = 1.0 / rate
    serial = 0
    with (store.parent / f"server-{index}.log").open("w", encoding="utf-8") as log:
        async with stdio_client(params, errlog=log) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            await start.arrived()
            until = start.until
            # Clones start their steady beat at different offsets, as people do.
            await asyncio.sleep(rng.uniform(0.0, interval))
            next_at = time.monotonic()
            while time.monotonic() < until:
                marker, claim = _claim(rng, index, serial)
                serial += 1
                result = await session.call_tool("memory_write", {
                    "title": f"Team note {serial % 7}", "claim": claim, "type": "semantic"})
                text = "".join(getattr(block, "text", "") for block in result.content)
                if result.is_error:
                    run.failed_calls.append(f"clone {index}: {text[:300]}")
                else:
                    run.acks.append(Ack(index, marker, time.monotonic()))
                if "sync with" in text:
                    run.sync_notes.append(f"clone {index}: {_note_of(text)[:300]}")
                next_at += interval
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))


def _note_of(text: str) -> str:
    start = text.find("sync with")
    return text[start:] if start >= 0 else text


def _sleeper(store: Path, env: dict[str, str], until: float, run: TeamRun,
             processes: Processes) -> None:
    """The curator clone: sleep run, sleep merge, sync, again, until ``until``."""
    while time.monotonic() < until:
        for step in ("sleep run", "sleep merge", "sync"):
            code, answer = _memhtml(processes, env, *step.split(), "--store", str(store))
            key = f"{step} {'ok' if code == 0 else 'failed'}"
            run.sleep_steps[key] = run.sleep_steps.get(key, 0) + 1
            if code != 0 and step == "sync":
                run.sync_notes.append(f"curator: {str(answer.get('error'))[:300]}")
            if code != 0 and step == "sleep run":
                break
        time.sleep(SLEEP_PAUSE_SECONDS)


def _final_syncs(stores: list[Path], env: dict[str, str], run: TeamRun,
                 processes: Processes) -> None:
    """Every clone syncs twice, in turn: after the first pass the last one holds
    everything, after the second every clone does."""
    for _ in range(2):
        for store in stores:
            for attempt in range(FINAL_SYNC_TRIES):
                code, answer = _memhtml(processes, env, "sync", "--store", str(store))
                if code == 0:
                    break
                if attempt == FINAL_SYNC_TRIES - 1:
                    run.final_sync_failures.append(f"{store.name}: {answer.get('error')}")


def _check(bare: Path, stores: list[Path], run: TeamRun) -> None:
    run.trees = {store.name: main_tree(store) for store in stores}
    run.trees["server"] = main_tree(bare)
    run.forced = forced_updates(bare)
    run.pushes = len(_git(dict(os.environ), bare, "reflog", "show", "--format=%H",
                          "refs/heads/main").split())
    claims = memory_claims(stores[0])
    held: dict[str, list[str]] = {}
    for path, claim in claims.items():
        for found in MARKER.finditer(claim):
            held.setdefault(found.group(0), []).append(path)
    for ack in run.acks:
        paths = held.get(ack.marker, [])
        if not paths:
            run.lost.append(ack.marker)
        elif len(paths) > 1:
            run.doubled[ack.marker] = sorted(paths)


def _arrivals(watcher: Watcher, clones: int, load_end: float, run: TeamRun) -> None:
    for ack in run.acks:
        for other in range(clones):
            if other == ack.clone:
                continue
            seen = watcher.first_seen.get((ack.marker, other))
            if seen is None:
                run.not_arrived += 1
            elif seen > load_end:
                run.after_load += 1
            else:
                run.arrivals.append(max(0.0, seen - ack.at))


def run_team(root: Path, clones: int = CLONES, seconds: float = SECONDS, rate: float = RATE,
             sync_seconds: float = SYNC_SECONDS, seed: int = SEED,
             say: Callable[[str], None] = print, processes: Processes | None = None
             ) -> TeamRun:
    """Serve one store over HTTP from ``root``, load it as the module says, check it
    (``processes``: how memhtml is started, fresh interpreters unless given)."""
    reason = missing()
    if reason is not None:
        raise SystemExit(f"bench.team needs the HTTP server: {reason}")
    server = HttpGitServer.start(root / "http")
    try:
        return _run(server, root, clones, seconds, rate, sync_seconds, seed, say,
                    processes or Processes())
    finally:
        server.stop()


def _run(server: HttpGitServer, root: Path, clones: int, seconds: float, rate: float,
         sync_seconds: float, seed: int, say: Callable[[str], None], processes: Processes
         ) -> TeamRun:
    bare = server.create("team.git")
    config = git_config_for(server, WRITER, root / "home")
    env = _environment(config)
    url = server.url("team.git")
    stores = [root / f"clone{i}" for i in range(clones)]
    curator = root / "curator"
    _memhtml(processes, env, "init", str(stores[0]))
    _git(env, stores[0], "remote", "add", "origin", url)
    code, answer = _memhtml(processes, env, "sync", "--store", str(stores[0]))
    if code != 0:
        raise SystemExit(f"the first push failed: {answer}")
    for store in [*stores[1:], curator]:
        code, answer = _memhtml(processes, env, "clone", url, str(store))
        if code != 0:
            raise SystemExit(f"clone {store.name} failed: {answer}")
    say(f"{clones} clones and a curator of {url} ready")

    run = TeamRun(clones, seconds)
    server_env = {**get_default_environment(), **_environment(config, {
        "MEMHTML_SYNC_REMOTE": "origin", "MEMHTML_SYNC_SECONDS": f"{sync_seconds:g}"})}
    everyone = [*stores, curator]
    watcher = Watcher(everyone)
    watcher.start()
    sleepers: list[threading.Thread] = []

    async def load() -> float:
        start = _Start(len(stores), seconds)

        async def curate() -> None:
            await start.ready.wait()
            sleeper = threading.Thread(target=_sleeper, daemon=True,
                                       args=(curator, env, start.until, run, processes))
            sleepers.append(sleeper)
            sleeper.start()

        await asyncio.gather(curate(), *(
            _writer(i, store, server_env, start, rate, seed, run, processes)
            for i, store in enumerate(stores)))
        return time.monotonic() - start.at

    elapsed = asyncio.run(load())
    load_end = time.monotonic()
    for sleeper in sleepers:
        sleeper.join()
    say(f"load done: {len(run.acks)} writes acknowledged in {elapsed:.1f} s; final syncs")
    _final_syncs(everyone, env, run, processes)
    watcher.stop()
    _check(bare, everyone, run)
    _arrivals(watcher, clones, load_end, run)
    run.seconds = elapsed
    return run


def report(run: TeamRun) -> str:
    lines = [
        f"clones {run.clones} (+1 curator), load {run.seconds:.1f} s",
        f"writes acknowledged: {len(run.acks)} ({len(run.acks) / run.seconds:.2f}/s); "
        f"failed calls: {len(run.failed_calls)}; server branch updates: {run.pushes}",
        f"sync notes from the servers and the curator: {len(run.sync_notes)}",
        f"curator steps: {dict(sorted(run.sleep_steps.items()))}",
    ]
    if run.arrivals:
        lines.append(
            f"write -> arrival on another clone during the load ({len(run.arrivals)} "
            f"pairs; {run.after_load} more arrived with the final syncs, "
            f"{run.not_arrived} never): p50 "
            f"{percentile(run.arrivals, 0.5):.2f} s, p95 {percentile(run.arrivals, 0.95):.2f} s,"
            f" max {max(run.arrivals):.2f} s (polled every {POLL_SECONDS:g} s)")
    lines += [
        f"converged: {run.converged} ({len(set(run.trees.values()))} distinct trees)",
        f"lost: {len(run.lost)} {run.lost[:10]}",
        f"held more than once: {len(run.doubled)} {dict(list(run.doubled.items())[:5])}",
        f"server updates that were not fast-forwards: {run.forced}",
        f"final syncs that failed: {run.final_sync_failures}",
    ]
    for note in run.sync_notes[:5]:
        lines.append(f"  note: {note}")
    for failed in run.failed_calls[:5]:
        lines.append(f"  failed: {failed}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.team", description=__doc__.split(
        "\n")[0])
    parser.add_argument("--clones", type=int, default=CLONES)
    parser.add_argument("--seconds", type=float, default=SECONDS)
    parser.add_argument("--rate", type=float, default=RATE,
                        help="writes per second per clone")
    parser.add_argument("--sync-seconds", type=float, default=SYNC_SECONDS)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--keep", type=Path, default=None,
                        help="run in this directory and keep it (for reading the logs)")
    args = parser.parse_args(argv)
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        run = run_team(args.keep, args.clones, args.seconds, args.rate, args.sync_seconds,
                       args.seed)
    else:
        with tempfile.TemporaryDirectory(prefix="memhtml-team-") as tmp:
            run = run_team(Path(tmp), args.clones, args.seconds, args.rate,
                           args.sync_seconds, args.seed)
    print(report(run))
    return 0 if run.sound else 1


if __name__ == "__main__":
    sys.exit(main())
