"""A deep night through the CLI with an over-eager model on loopback: every phase that
can fold or group is told to take everything (dedup groups every set, arc-synthesis
writes an arc for every community, compress folds every member it is shown). The
store holds what compress must leave whatever it is told: a person's file, notes that
person-links links to it tonight, an arc written tonight and the notes it covers, the
review tasks the night opens, and a cache TTL noted twice (300 s, then 600 s), the
pair the merge veto refuses. None of them is archived by compress, the model is never
shown one, and each one compress was asked not to fold is a ``compress-refused``
record in the run's ledger with its rule and why; the plain notes around them fold.
"""

from __future__ import annotations

import json
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
from tests.integration.store.checkout_support import clean_environment

pytestmark = pytest.mark.slow

OPS = "areas/ops/"
NOTES = (
    ("Deploy window", "Deploys go out in the morning window."),
    ("Freeze policy", "Holiday weeks are frozen for releases."),
    ("Rollback drill", "A rollback is rehearsed before each quarter ends."),
    ("Pager handoff", "The pager moves on Monday mornings."),
    ("Canary hosts", "Canaries run on the smallest hosts first."),
    ("Release notes", "Release notes are written before the deploy."),
    ("Change board", "The change board meets on Thursdays."),
    ("Hotfix path", "Hotfixes skip the change board with a lead's approval."),
)
"""A community of plain notes: every note links every earlier one."""
INES_NOTES = ("Pager handoff", "Change board")
"""Notes that name Ines: person-links links them to her file tonight."""
TTL_A = f"{OPS}cache-ttl.html"
TTL_B = f"{OPS}cache-ttl-raised.html"
PERSON = "resources/people/ines-okafor.html"
PHASES = ("dedup-merge", "entity-resolution", "person-links", "relationship-mining",
          "edge-typing", "confidence-decay", "arc-synthesis", "compress", "task-detection",
          "placement-triage", "integrity", "report")
"""Every phase but retention-triage and reprieve, which archive by score: what leaves
the corpus here leaves by a fold."""


ARC_TITLE = "Deploy window story"
"""The arc's title: the oldest note's words, so it is drawn from what the arc covers
(the three oldest notes), and no note's own title."""


def path_of(title: str) -> str:
    return f"{OPS}{title.lower().replace(' ', '-')}.html"


TTL_PULL = Pull(("cache ttl",), "cache ttl", 0.975)
"""The two cache TTL notes at cosine about 0.95 (a near duplicate, above dedup's 0.92);
every other text a direction of its own."""


def ttl_embedder() -> AnchoredEmbedder:
    return AnchoredEmbedder((TTL_PULL,), lean_salt="lean")


def fold_everything(tool: str, offered: Mapping[str, str]) -> Mapping[str, object]:
    """The over-eager model."""
    keys = list(offered)
    if tool == "group_duplicate_memories":
        sets: dict[str, list[str]] = {}
        for key, text in offered.items():
            sets.setdefault(text.split(":", 1)[0], []).append(key)
        return {"groups": [{"members": members} for members in sets.values()
                           if len(members) > 1]}
    # Its text is always the members' own (``sleep.grounded``): only what compress
    # protects may stop a fold here, never the words.
    if tool == "choose_arcs":
        return {"communities": [{"key": key, "arc": True, "title": ARC_TITLE}
                                for key in keys]}
    if tool == "write_arc":
        claims = [claim_of(offered[key]) for key in keys[:3]]
        return {"claim": " ".join(claims), "body": claims, "covers": keys[:3]}
    if tool == "write_canonicals":
        claims = [claim_of(text) for text in offered.values()]
        return {"canonicals": [{"title": title_of(next(iter(offered.values()))),
                                "claim": " ".join(claims), "body": claims,
                                "absorbs": keys}]}
    return {}


def claim_of(text: str) -> str:
    """A rendered member's claim."""
    return next(line.removeprefix("claim: ") for line in text.split("\n")
                if line.startswith("claim: "))


def title_of(text: str) -> str:
    """A rendered member's title."""
    return text.split("\n", 1)[0].removeprefix("title: ")


@dataclass
class Clock:
    at: datetime


@dataclass
class Store:
    root: Path
    clock: Clock
    model: Log


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    clock = Clock(RUN_AT - timedelta(days=2))
    monkeypatch.setattr(SystemClock, "now", lambda self: clock.at)
    clean_environment(monkeypatch, tmp_path / "home")
    with (serve_embeddings(ttl_embedder()) as embed_url,
          serving_model(fold_everything) as (url, log)):
        for name, value in {"MEMHTML_EMBEDDER": "openai", "MEMHTML_EMBED_MODEL": PLANTED_MODEL_ID,
                            "MEMHTML_EMBED_URL": embed_url, "MEMHTML_LLM": "openai",
                            "MEMHTML_LLM_URL": url, "MEMHTML_LLM_MODEL": "loopback"}.items():
            monkeypatch.setenv(name, value)
        yield Store(tmp_path / "store", clock, log)


def cli(capsys: pytest.CaptureFixture[str], s: Store, *tokens: str) -> tuple[int, Any]:
    code, out, err = call_text(capsys, *tokens, "--store", str(s.root), "--json")
    assert "Traceback" not in out + err, out + err
    return code, json.loads(out) if out.strip() else None


def write(capsys: pytest.CaptureFixture[str], s: Store, *tokens: str) -> None:
    s.clock.at += timedelta(minutes=5)
    code, done = cli(capsys, s, "write", *tokens)
    assert code == 0, done


def build(capsys: pytest.CaptureFixture[str], s: Store) -> None:
    """The store, written two days before the night with ``memhtml write``: recent
    enough that decay leaves every note in the compress band (which compress reads by
    score alone, whatever their age)."""
    code, _ = cli(capsys, s, "init")
    assert code == 0
    written: list[str] = []
    for title, claim in NOTES:
        links = [token for p in written for token in ("--link", f"relates_to=/{p}")]
        names = (["--entity", "person:Ines Okafor"] if title in INES_NOTES else [])
        write(capsys, s, "--title", title, "--claim", claim, "--path", path_of(title),
              "--confidence", "0.6", *links, *names)
        written.append(path_of(title))
    for path, claim in ((TTL_A, "The cache TTL is 300 s."),
                        (TTL_B, "The cache TTL is 600 s.")):
        write(capsys, s, "--title", "Cache TTL", "--claim", claim, "--path", path,
              "--confidence", "0.6", "--link", f"relates_to=/{written[0]}")
    # Written last, so an arc over the notes is filed beside its oldest note, not here.
    write(capsys, s, "--title", "Ines Okafor", "--claim", "Ines Okafor leads the ops rota.",
          "--entity", "person:Ines Okafor", "--alias", "Ines", "--path", PERSON)


def tree(repo: pygit2.Repository, rev: str) -> dict[str, str]:
    found: dict[str, str] = {}

    def walk(node: pygit2.Tree, prefix: str) -> None:
        for entry in node:
            if entry.type_str == "tree":
                walk(repo[entry.id].peel(pygit2.Tree), f"{prefix}{entry.name}/")
            else:
                found[f"{prefix}{entry.name}"] = str(entry.id)

    walk(repo.revparse_single(rev).peel(pygit2.Tree), "")
    return found


def removed_by(repo: pygit2.Repository, shas: list[str]) -> set[str]:
    """Paths the commits removed (an archive moves a memory away from its path)."""
    out: set[str] = set()
    for sha in shas:
        commit = repo.revparse_single(sha).peel(pygit2.Commit)
        before, after = tree(repo, str(commit.parents[0].id)), tree(repo, sha)
        out |= set(before) - set(after)
    return out


def test_a_deep_night_told_to_fold_everything_folds_nothing_another_phase_protects(
        capsys: pytest.CaptureFixture[str], store: Store) -> None:
    s = store
    build(capsys, s)
    s.clock.at = RUN_AT
    tokens = [token for phase in PHASES for token in ("--phase", phase)]
    code, report = cli(capsys, s, "sleep", "run", "--deep", *tokens)
    assert isinstance(report, dict), report
    bad = [(p["phase"], p["status"], p.get("reason")) for p in report["phases"]
           if p["status"] not in ("done", "not-selected")]
    assert code == 0 and not bad, bad
    phases = {p["phase"]: p for p in report["phases"]}
    repo = pygit2.Repository(str(s.root))
    base = tree(repo, report["base_sha"])

    # The night made an arc, opened a review task and linked Ines's notes.
    before_compress = phases["arc-synthesis"]["commits"][-1]

    def text(rev: str, path: str) -> str:
        return repo.revparse_single(f"{rev}:{path}").peel(pygit2.Blob).data.decode()

    made = {p for p in tree(repo, before_compress) if p not in base and p.endswith(".html")}
    (arc,) = [p for p in made
              if 'name="memhtml-type" content="arc"' in text(before_compress, p)]
    assert arc.startswith(OPS)
    assert phases["dedup-merge"]["counts"]["vetoed"] == 1
    assert phases["arc-synthesis"]["counts"]["arcs"] == 1
    assert phases["person-links"]["counts"]["links_added"] == len(INES_NOTES)

    # compress folded the plain notes it was shown...
    compress = phases["compress"]
    folded = removed_by(repo, compress["commits"])
    assert compress["counts"]["archived"] == len(folded) >= 2
    # ...and none of what it must leave.
    covered = {p for p in base if p.startswith(OPS)
               and f'href="/{arc}"' in text(before_compress, p)}
    protected = {PERSON, TTL_A, TTL_B, *(path_of(t) for t in INES_NOTES), *made, *covered}
    assert not folded & protected, folded & protected
    assert len(covered) == 3

    # The model was never shown any of them.
    shown = "\n".join(s.model.prompts("write_canonicals"))
    for path in protected:
        assert f"/{path}" not in shown
    for title in ("Cache TTL", "Ines Okafor", ARC_TITLE, *INES_NOTES):
        assert f"title: {title}\\n" not in shown, title

    # Each member compress was asked not to fold is in the run's ledger, with why.
    ledger = text(report["head_sha"], ledger_path(report["run_id"]))
    records = [json.loads(line) for line in ledger.splitlines()
               if json.loads(line)["kind"] == "compress-refused"]
    rules = {r["path"]: r["rule"] for r in records}
    assert rules[TTL_A] in ("review-open", "veto") and rules[TTL_B] in ("review-open", "veto")
    for title in INES_NOTES:
        assert rules[path_of(title)] == "decided-this-run", title
    for path in covered:
        assert rules[path] == "decided-this-run", path
    assert rules[arc] == "arc" and rules[PERSON] == "person-file"
    assert all(r["detail"] for r in records)
    assert compress["counts"]["protected"] == len(rules)
    assert set(rules) <= protected
