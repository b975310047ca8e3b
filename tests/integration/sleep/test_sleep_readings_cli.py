"""Two readings that are one reading, through the CLI a person runs, with a language
model on loopback: night one proposes an entity merge (a short name and its full
form) and a contradiction; the night is merged; night two, with nobody writing in
between, reads a main its own merge moved (decayed confidences, tasks, a report) and
must keep waiting: nothing promoted, no review task closed. Only after a person's
writes reach the pair (a plain ``git commit`` editing one side of the contradiction,
a ``memhtml write`` naming the short name) does night three promote both: the
contradiction is linked in both files, the names are one, the two person files
minted for them are one file under the full name with the short one as its alias,
and the ledger says which write made the second reading independent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pygit2
import pytest

from memhtml.adapters.clock import SystemClock
from memhtml.eval.planted_embedder import PLANTED_MODEL_ID
from memhtml.sleep.contract import ledger_path
from tests.fake_embedders import AnchoredEmbedder, Pull
from tests.integration.cli.cli_support import call_text
from tests.integration.sleep.model_server import Log, serving_model
from tests.integration.sleep.planted_support import serve_embeddings
from tests.integration.sleep.sleep_support import RUN_AT
from tests.integration.store.checkout_support import clean_environment, git

pytestmark = pytest.mark.slow

YEAR = RUN_AT.year
LIMIT = "areas/uploads/upload-limit.html"
LARGE = "areas/uploads/large-uploads.html"
GATEWAY = "service:upload-gateway"
PHASES = ("entity-resolution", "person-links", "relationship-mining", "edge-typing",
          "confidence-decay", "report")
FULL_FILE = "resources/people/laith-al-saadoon.html"
SHORT_FILE = "resources/people/laith.html"
_DETECTED = re.compile(r"areas/tasks/det-[0-9a-f]{12}-[^/]+\.html")
NOTES = (("Rota", "The weekend rota was swapped for the holidays.", "Laith Al-Saadoon"),
         ("Ledger", "The expense ledger was reconciled on Friday.", "Laith Al-Saadoon"),
         ("Standup", "Standup now starts at a quarter past nine.", "Laith"),
         ("Review", "Design reviews need two approvals.", "Laith"))
"""Notes about one person under two spellings, the name in their entity alone."""


UPLOAD_PULLS = (Pull(("ten megabytes",), "upload limit", 1.0),
                Pull(("fifty megabytes",), "upload limit", 0.83))
"""The upload pair at cosine 0.83 (above edge-typing's shared-entity floor, 0.80, under
mining's 0.85 and dedup's 0.86); every other text a seeded direction."""


def pair_embedder() -> AnchoredEmbedder:
    return AnchoredEmbedder(UPLOAD_PULLS, lean_salt="lean")


def respond(tool: str, offered: Mapping[str, str]) -> Mapping[str, object]:
    """The model: ``laith`` and ``laith al-saadoon`` are one person; two claims about
    upload sizes contradict each other; nothing else."""
    if tool == "cluster_entity_names":
        keys = {json.loads(text)["name"]: key for key, text in offered.items()}
        if {"laith", "laith al-saadoon"} <= keys.keys():
            return {"clusters": [{"members": [keys["laith"], keys["laith al-saadoon"]],
                                  "canonical": keys["laith"], "confidence": 0.9}]}
        return {"clusters": []}
    if tool == "type_edges":
        return {"verdicts": [
            {"key": key, "rel": "contradicts" if text.count("megabytes") == 2 else "none",
             "subject": "a", "confidence": 0.9} for key, text in offered.items()]}
    return {}


def filler(n: int = 40) -> list[tuple[str, str]]:
    """Memories on subjects of their own, so that the merge gate's probes are many and
    a new review task ranking near one of them is one probe in many, as in any store
    (in a store of nine memories one such rank is the gate's whole margin)."""
    colours = ("amber", "cobalt", "crimson", "ivory", "jade", "ochre", "slate", "teal")
    creatures = ("heron", "otter", "lynx", "marten", "plover")
    places = ("north pier", "old mill", "salt marsh", "quarry", "orchard")
    return [(f"{colour.title()} {creature}",
             f"The {colour} {creature} was last seen by the {places[k % len(places)]}.")
            for k, (colour, creature) in enumerate(
                (c, a) for c in colours for a in creatures)][:n]


@dataclass
class Clock:
    at: datetime = RUN_AT


@dataclass
class Store:
    root: Path
    env: dict[str, str]
    clock: Clock
    model: Log


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    clock = Clock(RUN_AT - timedelta(days=2))
    monkeypatch.setattr(SystemClock, "now", lambda self: clock.at)
    env = clean_environment(monkeypatch, tmp_path / "home")
    with serve_embeddings(pair_embedder()) as embed_url, serving_model(respond) as (url, log):
        for name, value in {"MEMHTML_EMBEDDER": "openai", "MEMHTML_EMBED_MODEL": PLANTED_MODEL_ID,
                            "MEMHTML_EMBED_URL": embed_url, "MEMHTML_LLM": "openai",
                            "MEMHTML_LLM_URL": url, "MEMHTML_LLM_MODEL": "loopback"}.items():
            monkeypatch.setenv(name, value)
            env[name] = value
        root = tmp_path / "store"
        yield Store(root, env, clock, log)


def cli(capsys: pytest.CaptureFixture[str], s: Store, *tokens: str) -> tuple[int, Any]:
    code, out, err = call_text(capsys, *tokens, "--store", str(s.root), "--json")
    assert "Traceback" not in out + err, out + err
    return code, json.loads(out) if out.strip() else None


def write(capsys: pytest.CaptureFixture[str], s: Store, title: str, claim: str,
          *more: str) -> str:
    code, done = cli(capsys, s, "write", "--title", title, "--claim", claim, *more)
    assert code == 0, done
    path: str = done["path"]
    return path


def night(capsys: pytest.CaptureFixture[str], s: Store, days: int) -> dict[str, Any]:
    s.clock.at = RUN_AT + timedelta(days=days)
    tokens = [token for phase in PHASES for token in ("--phase", phase)]
    code, report = cli(capsys, s, "sleep", "run", *tokens)
    assert isinstance(report, dict), report
    bad = [(p["phase"], p["status"], p.get("reason")) for p in report["phases"]
           if p["status"] not in ("done", "not-selected")]
    assert code == 0 and not bad, bad
    return report


def merge(capsys: pytest.CaptureFixture[str], s: Store) -> None:
    code, merged = cli(capsys, s, "sleep", "merge")
    assert code == 0 and merged["merged"], json.dumps(merged, indent=1)[:3000]


def counts(report: dict[str, Any], phase: str) -> dict[str, Any]:
    found: dict[str, Any] = next(p for p in report["phases"] if p["phase"] == phase)["counts"]
    return found


def blob(s: Store, rev: str, path: str) -> str | None:
    repo = pygit2.Repository(str(s.root))
    try:
        found = repo.revparse_single(f"{rev}:{path}")
    except KeyError:
        return None
    assert isinstance(found, pygit2.Blob)
    return found.data.decode("utf-8")


def paths(s: Store, rev: str) -> list[str]:
    repo = pygit2.Repository(str(s.root))
    out: list[str] = []

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            if entry.type_str == "tree":
                walk(repo[entry.id].peel(pygit2.Tree), f"{prefix}{entry.name}/")
            else:
                out.append(f"{prefix}{entry.name}")

    walk(repo.revparse_single(rev).peel(pygit2.Tree), "")
    return sorted(out)


def metas(html: str, name: str) -> list[str]:
    return re.findall(rf'<meta name="{name}" content="([^"]*)">', html)


def links(html: str, rel: str) -> list[str]:
    token = rel.replace("_", "-")
    return re.findall(rf'<link rel="memhtml-{token}" href="([^"]*)">', html)


def ledger(s: Store, report: dict[str, Any]) -> list[dict[str, Any]]:
    text = blob(s, report["head_sha"], ledger_path(report["run_id"])) or ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_a_promotion_waits_for_a_write_that_is_not_the_runs_own(
        capsys: pytest.CaptureFixture[str], store: Store) -> None:
    s = store
    code, _ = cli(capsys, s, "init")
    assert code == 0
    limit = write(capsys, s, "Upload limit", "The upload limit is ten megabytes.",
                  "--entity", GATEWAY, "--confidence", "0.9", "--path", LIMIT)
    large = write(capsys, s, "Large uploads", "Uploads of fifty megabytes go through.",
                  "--entity", GATEWAY, "--confidence", "0.9", "--path", LARGE)
    for title, claim, name in NOTES:
        write(capsys, s, title, claim, "--entity", f"person:{name}", "--confidence", "0.9")
    write(capsys, s, "Canteen", "The canteen closes at three.", "--confidence", "0.9")
    for title, claim in filler():
        write(capsys, s, title, claim)

    # Night one: each is a first reading; both wait as review tasks.
    first = night(capsys, s, 0)
    assert counts(first, "entity-resolution")["model_merges_waiting"] == 1
    assert counts(first, "edge-typing")["contradicts_detected"] == 1
    assert counts(first, "edge-typing")["contradicts_promoted"] == 0
    assert counts(first, "person-links")["files_minted"] == 2
    tasks = [p for p in paths(s, first["head_sha"]) if _DETECTED.fullmatch(p)]
    assert len(tasks) == 2
    merge(capsys, s)

    # Night two, nobody wrote: main moved by the run's own merge alone.
    second = night(capsys, s, 1)
    assert second["base_sha"] != first["base_sha"]
    entity, edges = counts(second, "entity-resolution"), counts(second, "edge-typing")
    assert (entity["model_merges_applied"], entity["model_merges_unchanged"]) == (0, 1)
    assert (edges["contradicts_promoted"], edges["readings_unchanged"]) == (0, 1)
    assert entity["tasks_closed"] == edges["tasks_closed"] == 0
    assert [p for p in paths(s, second["head_sha"]) if _DETECTED.fullmatch(p)] == tasks
    assert not links(blob(s, second["head_sha"], LIMIT) or "", "contradicts")
    assert [m for m in ledger(s, second) if m["kind"].endswith("-promoted")] == []
    merge(capsys, s)

    # A person edits one side of the contradiction with plain git; an agent writes a
    # note naming the short name.
    edited = (s.root / large).read_text(encoding="utf-8").replace(
        "</mark>", "</mark> Checked again by hand on Tuesday.")
    (s.root / large).write_text(edited, encoding="utf-8")
    git(s.root, s.env, "add", "--", large)
    git(s.root, s.env, "commit", "-q", "-m", "large uploads: checked again")
    by_person = git(s.root, s.env, "rev-parse", "HEAD").stdout.strip()
    s.clock.at = RUN_AT + timedelta(days=1, hours=12)
    write(capsys, s, "Pager", "The pager rotation gained a fourth engineer.", "--entity",
          "person:Laith", "--confidence", "0.9")
    by_agent = git(s.root, s.env, "rev-parse", "HEAD").stdout.strip()

    third = night(capsys, s, 2)
    entity, edges = counts(third, "entity-resolution"), counts(third, "edge-typing")
    assert entity["model_merges_applied"] == 1
    assert (edges["contradicts_promoted"], edges["tasks_closed"]) == (1, 1)
    assert counts(third, "person-links")["files_folded"] == 1
    promoted = {m["kind"]: m for m in ledger(s, third) if m["kind"].endswith("-promoted")}
    assert promoted["edge-promoted"]["since"] == first["base_sha"]
    assert promoted["edge-promoted"]["by"] == by_person
    assert promoted["entity-promoted"]["since"] == first["base_sha"]
    assert promoted["entity-promoted"]["by"] == by_agent
    merge(capsys, s)

    tip = "main"
    assert links(blob(s, tip, limit) or "", "contradicts") == ["/" + large]
    assert links(blob(s, tip, large) or "", "contradicts") == ["/" + limit]
    people = [p for p in paths(s, tip) if p.startswith("resources/people/")
              and p.endswith(".html") and not p.endswith("/index.html")]
    assert people == [FULL_FILE]
    home = blob(s, tip, FULL_FILE) or ""
    assert metas(home, "memhtml-entity") == ["person:laith al-saadoon"]
    assert metas(home, "memhtml-alias") == ["laith"]
    assert blob(s, tip, f"archive/{YEAR}/{SHORT_FILE}") is not None
    for path in paths(s, tip):
        text = blob(s, tip, path) or ""
        if path.startswith("areas/inbox/") and "person:" in text:
            assert metas(text, "memhtml-entity") == ["person:laith al-saadoon"], path
            assert links(text, "about_person") == ["/" + FULL_FILE], path
