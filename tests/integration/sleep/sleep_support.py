"""The sleep run on a real repository: the demo store, a clock fixed at the run, and a
store with something for integrity to do."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from datetime import UTC, datetime
from pathlib import Path

from memhtml.adapters.clock import FixedClock
from memhtml.adapters.git import PygitService
from memhtml.compose import Services, Settings, open_services, value_of
from memhtml.compose.sleep import head_gate, sleep_deps
from memhtml.contracts.services import PathChange, Signature
from memhtml.sleep.deps import SleepDeps

RUN_AT = datetime(2026, 11, 30, 4, 0, 0, tzinfo=UTC)
RUN_ID = "2026-11-30"
LINKED = "areas/checkout/sakura-auth-timeout-8s.html"
PERSON = Signature("A Person", "person@example.org")


SHARE_FOR_THE_DEMO = "0.5"
"""The archive share the demo's first night needs (about a third of its live memories)."""


def build_sleep_demo(root: Path) -> None:
    """The demo store with ``sleep_archive_share`` raised to ``SHARE_FOR_THE_DEMO`` in a
    person's committed ``.memhtml/config.toml``.

    The demo dates its examples weeks back and records no reads, so its first night
    archives about a third of them, past the default share, and merge refuses. Tests
    whose subject is the run's frame, its kills or its merges (not how much retention
    picks) use this copy; test_sleep_demo asserts the default's refusal on the plain
    demo. The commit carries the demo's last date, so no history read sees it as new."""
    from memhtml.cli.demo import build_demo

    build_demo(root)
    config = root / ".memhtml" / "config.toml"
    config.write_text(f'sleep_archive_share = "{SHARE_FOR_THE_DEMO}"\n', encoding="utf-8")
    when = git_cli(root, "log", "-1", "--format=%cI").strip()
    git_cli(root, "add", "--", ".memhtml/config.toml")
    subprocess.run(["git", "-c", "user.name=A Person", "-c", "user.email=person@example.org",
                    "commit", "-q", "-m", "store: forget up to half in one night", "--",
                    ".memhtml/config.toml"],
                   cwd=root, check=True, capture_output=True, text=True,
                   env={**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})


def services_at(root: Path, at: datetime = RUN_AT) -> Services:
    share = Settings(store=root).sleep_archive_share
    config = root / ".memhtml" / "config.toml"
    if config.is_file():  # the settings a command would read, for build_sleep_demo's
        share = str(tomllib.loads(config.read_text("utf-8")).get("sleep_archive_share", share))
    return value_of(open_services(Settings(store=root, sleep_archive_share=share),
                                  clock=FixedClock(at)))


def deps_at(root: Path, at: datetime = RUN_AT) -> SleepDeps:
    return sleep_deps(services_at(root, at), head_gate).unwrap()


def git_cli(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def dangle(root: Path) -> tuple[str, str]:
    """A person's own commit on main that deletes one memory others link to and moves
    another under archive/ without rewriting its inbound links: integrity's two kinds
    of dangling href. Returns (deleted, archived)."""
    git = value_of(PygitService.open(root / ".git"))
    tip = value_of(git.resolve("main"))
    entries = {e.path: e.blob_id for e in value_of(git.list_tree(tip))}
    inbound = sorted(p for p in entries if p.endswith(".html") and p.startswith("areas/")
                     and b'href="/' in value_of(git.read_blobs([entries[p]]))[entries[p]])
    targets: list[str] = []
    for path in inbound:
        text = value_of(git.read_blobs([entries[path]]))[entries[path]].decode()
        for chunk in text.split('href="/')[1:]:
            target = chunk.split('"', 1)[0]
            if target in entries and target.startswith("areas/") and target not in targets:
                targets.append(target)
    deleted, archived = targets[0], targets[1]
    data = value_of(git.read_blobs([entries[archived]]))[entries[archived]]
    sha = value_of(git.commit("refs/heads/main", tip, [
        PathChange(deleted, None), PathChange(archived, None),
        PathChange(f"archive/2025/{archived}", data)], "a person's own clean-up\n", PERSON,
        RUN_AT))
    git_cli(root, "reset", "--hard", sha)
    return deleted, archived


def run_in_subprocess(root: Path, seed: str) -> str:
    """``sleep run`` in a fresh interpreter with ``PYTHONHASHSEED=seed``; its tip sha."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from memhtml.compose import value_of\n"
        "from memhtml.sleep.runner import run_sleep\n"
        "from tests.integration.sleep.sleep_support import deps_at\n"
        "report = value_of(run_sleep(deps_at(Path(sys.argv[1]))))\n"
        "assert report.ok, report\n"
        "print(report.head_sha)\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run([sys.executable, "-c", script, str(root)], check=True,
                          capture_output=True, text=True, env=env,
                          cwd=Path(__file__).resolve().parents[3])
    return done.stdout.strip().splitlines()[-1]
