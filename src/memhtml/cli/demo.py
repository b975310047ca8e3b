"""``memhtml demo``: a store built from the shipped examples, searched and published.

Every example goes through the store's own doors in the order of its ``at`` stamp,
with a clock that reads that stamp, so the demo's commit ids are the same on every
run and every machine. Links name their targets by key; each resolves to the path
its target was written at (``/<directory><key>.html``, or a task's path from its
title, since the task door names the file).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memhtml.cli.common import Common, no_scope
from memhtml.cli.output import CliError, Reply, respond, store_value

if TYPE_CHECKING:
    from memhtml.head import SearchHit
    from memhtml.store import Landed, Store, TaskRow

_COMMON = Common()
DEMO_TODAY = "2026-11-29T09:00:00Z"
"""The demo's notional now for searching, the task list and publishing: after every
example, and past some tasks' due dates."""
DEMO_AUTHOR = ("memhtml demo", "demo@memhtml.invalid")
DEMO_SEARCHES = (
    "sakura payment timeout",
    "double charge idempotency",
    "disk alert flapping pager",
)

Entry = dict[str, Any]


class FollowingClock:
    """A clock the demo sets to each example's ``at`` before writing it."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        return self.at

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def instant(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def load_examples() -> list[Entry]:
    """The examples, in writing order: by ``at``, then key."""
    from importlib.resources import files

    text = files("memhtml.demo").joinpath("examples.json").read_text(encoding="utf-8")
    entries: list[Entry] = json.loads(text)
    return sorted(entries, key=lambda e: (e["at"], e["key"]))


@dataclass(frozen=True)
class DemoRun:
    store: Path
    memories: int
    commit: str
    searches: tuple[tuple[str, tuple[SearchHit, ...]], ...]
    tasks: tuple[TaskRow, ...]
    site: Path


def _write_example(store: Store, entry: Entry, written: dict[str, str]) -> Landed:
    from memhtml import store as doors
    from memhtml.contracts.record import Link
    from memhtml.store import WriteInput

    links = tuple(Link(link["rel"], "/" + written[link["to"]]) for link in entry.get("links", []))
    if entry["type"] == "task":
        return store_value(doors.task_add(
            store, entry["title"], entry["claim"], entry.get("due"), tuple(entry["entities"]),
            body=tuple(entry.get("body", ())), tags=tuple(entry["tags"]), links=links,
            directory=entry["directory"], importance=entry.get("importance"),
            task_status=entry.get("task_status"),
        ))
    data = WriteInput(
        title=entry["title"], claim=entry["claim"], memory_type=entry["type"],
        body=tuple(entry.get("body", ())), article_html=entry.get("article_html"),
        entities=tuple(entry["entities"]), tags=tuple(entry["tags"]),
        aliases=tuple(entry.get("aliases", ())), links=links,
        confidence=entry.get("confidence"), importance=entry.get("importance"),
        path=f"{entry['directory']}{entry['key']}.html",
    )
    corrected = entry.get("corrects")
    if corrected is not None:
        return store_value(doors.correct(store, written[corrected], data))
    return store_value(doors.write(store, data))


def build_demo(target: Path, on_example: Any = None) -> DemoRun:
    """Create the demo store at ``target`` (an empty or missing directory)."""
    from memhtml import store as doors
    from memhtml.cli.output import unwrap_io
    from memhtml.compose import Settings, init_repository, open_services
    from memhtml.store import init_store, publish

    if target.exists() and any(target.iterdir()):
        raise CliError(f"{target} is not empty; the demo needs a new directory")
    target.mkdir(parents=True, exist_ok=True)
    unwrap_io(init_repository(target), lambda e: e.reason)
    examples = load_examples()
    clock = FollowingClock(instant(examples[0]["at"]))
    # Built from defaults, not the environment: a demo is the same store everywhere.
    settings = Settings(store=target, author_name=DEMO_AUTHOR[0], author_email=DEMO_AUTHOR[1])
    store = unwrap_io(open_services(settings, clock=clock, require_store=False),
                      lambda e: e.reason).store()
    store_value(init_store(store.deps))
    written: dict[str, str] = {}
    for entry in examples:
        clock.at = instant(entry["at"])
        landed = _write_example(store, entry, written)
        assert landed.primary is not None
        written[entry["key"]] = landed.primary
        if on_example is not None:
            on_example(entry)
    clock.at = instant(DEMO_TODAY)
    searches = tuple(
        (query, tuple(store_value(doors.search(store, query, limit=3))))
        for query in DEMO_SEARCHES
    )
    tasks = tuple(store_value(doors.task_list(store)))
    landed = store_value(publish(store))
    return DemoRun(target, len(examples), landed.commit, searches, tasks,
                   target / "index.html")


def render_demo(run: DemoRun) -> str:
    from memhtml.cli.read_cmds import render_hits
    from memhtml.cli.task_cmds import render_tasks

    store = str(run.store)
    lines = [f"Built a store of {run.memories} memories at {store}", ""]
    for query, hits in run.searches:
        lines += [f"$ memhtml search {json.dumps(query)} --store {store}",
                  render_hits(list(hits), "lexical"), ""]
    lines += [f"$ memhtml task list --store {store}", render_tasks(list(run.tasks)), ""]
    lines += [
        f"Published the site (commit {run.commit[:10]}). Open it in a browser:",
        f"  {run.site.as_uri()}",
        "",
        "Try next:",
        f"  memhtml status --store {store}",
        f"  memhtml read areas/checkout/sakura-auth-timeout-8s.html --tier gist --store {store}",
        f"  memhtml related resources/people/ines-marechal.html --store {store}",
        f"  memhtml log areas/checkout/sakura-auth-timeout-8s.html --store {store}",
    ]
    return "\n".join(lines)


def demo(*, dir: Path | None = None, common: Common = _COMMON) -> int:
    """Build a demo store from the shipped examples (in a temporary directory unless
    --dir), run a few searches, list the tasks, publish the site, and say where to look.

    Parameters
    ----------
    dir
        An empty or new directory for the store (default: a new temporary directory).
    """
    import tempfile

    def body() -> Reply:
        no_scope(common)
        from memhtml.cli.progress import progress

        target = dir.expanduser().resolve() if dir is not None else \
            Path(tempfile.mkdtemp(prefix="memhtml-demo-"))
        with progress("writing the examples", len(load_examples()), common.json) as bar:
            run = build_demo(target, lambda _entry: bar.advance())
        payload = {
            "store": str(run.store), "memories": run.memories, "commit": run.commit,
            "site": run.site.as_uri(),
            "searches": [{"query": q, "hits": list(h)} for q, h in run.searches],
            "tasks": list(run.tasks),
        }
        return Reply(payload, render_demo(run))

    return respond(common.json, body)
