"""compress on a real store with a scripted model: a canonical made of exactly the
members the answer names (archived superseded by it, inbound links rewritten), an
unnamed member untouched, a dated episode summarised and kept, an unknown key or an
off-schema answer changing nothing, one malformed batch skipped while the next lands,
the budget counted, and no model or a dry run writing nothing."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

import pytest
from returns.pipeline import is_successful
from tests.unit.sleep.fake_model import ScriptedModel, offered
from tests.unit.sleep.sleep_support import RUN_DAY, WRITTEN, World, blank_world, ok

from memhtml.contracts.paths import to_document_path
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.services import ModelRequest, PathChange
from memhtml.domain.thresholds import COMPRESS_BATCH
from memhtml.head import HeadVersion, is_dated_episode
from memhtml.llm.schema import validate_schema
from memhtml.sleep.budget import CallBudget
from memhtml.sleep.phase import NO_MODEL, PhaseEnv, PhaseResult, TaskBudget
from memhtml.sleep.phases.compress import compress
from memhtml.sleep.phases.compress_prompt import SCHEMA, TOOL_NAME
from memhtml.sleep.tasks import SLEEP_AUTHOR
from memhtml.store import WriteInput, write
from memhtml.store.layout import archive_path

STAMP = datetime(2026, 11, 29, 3, 15, 7, tzinfo=UTC)
OPS = tuple(f"areas/ops/deploy-{n}.html" for n in range(1, 5))
"""One community: each links ``relates_to`` every earlier one, so the oldest only
receives links."""
OUTSIDER = "areas/notes/pointer.html"
"""Links the third deploy note: its link must follow the note into the archive."""
DB = tuple(f"areas/db/backup-{n}.html" for n in range(1, 4))
DIARY = "areas/diary/2026-03-04.html"
DIARY_NOTES = tuple(f"areas/diary/freeze-{n}.html" for n in range(1, 3))
DAY = "2026-03-04"


def title_of(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".html").replace("-", " ").title()


def put(w: World, path: str, earlier: Sequence[str] = (), **more: object) -> None:
    links = tuple(Link("relates_to", "/" + p) for p in earlier)
    data = WriteInput(title=title_of(path), claim=f"The fact recorded in {path}.",
                      body=(f"Detail of {title_of(path)}.",), path=path, links=links,
                      **more)  # type: ignore[arg-type]
    ok(write(w.store, data))


def put_episode(w: World, path: str, earlier: Sequence[str] = ()) -> None:
    claim = "The deploy froze at noon."
    article = (f"<p><mark>{claim}</mark></p>"
               f'<dl><dt>day</dt><dd><time datetime="{DAY}">4 March</time></dd></dl>')
    put(w, path, earlier, memory_type="episodic", article_html=article)


def clique(w: World, paths: Sequence[str]) -> None:
    for n, path in enumerate(paths):
        put(w, path, paths[:n])


def corpus(*, db: bool = False, diary: bool = False) -> World:
    """The deploy community and its outsider; the backup community; the diary community
    (a dated episode and two notes about its day)."""
    w = blank_world()
    clique(w, OPS)
    put(w, OUTSIDER, (OPS[2],))
    if db:
        clique(w, DB)
    if diary:
        put_episode(w, DIARY)
        for n, path in enumerate(DIARY_NOTES):
            put(w, path, (DIARY, *DIARY_NOTES[:n]))
    w.clock.advance((STAMP - WRITTEN).total_seconds())
    return w


def env_for(w: World, model: ScriptedModel | None, *, dry_run: bool = False,
            calls: CallBudget | None = None) -> PhaseEnv:
    version = ok(w.store.head())
    return PhaseEnv(phase="compress", run_id=RUN_DAY, stamp=STAMP, base=w.main(),
                    base_version=version, version=version, git=w.git, state=w.state,
                    budget=TaskBudget(), dry_run=dry_run, model=model,
                    calls=calls or CallBudget())


def run(w: World, model: ScriptedModel | None, **env: object) -> PhaseResult:
    return ok(compress(env_for(w, model, **env)))  # type: ignore[arg-type]


def land(w: World, result: PhaseResult) -> HeadVersion:
    """Every commit of the phase on main, in order (each lands on the one before)."""
    for commit in result.commits:
        w.raw(list(commit.changes), commit.subject)
    return ok(w.store.head())


# --------------------------------------------------------------------------- answers


def keys_by_path(request: ModelRequest) -> dict[str, str]:
    """Each offered member's path (from its title), to the key the batch gave it."""
    out: dict[str, str] = {}
    for key, text in offered(request).items():
        title = text.split("\n", 1)[0].removeprefix("title: ")
        out[title] = key
    return out


def claims_of(request: ModelRequest) -> list[str]:
    """Each offered member's claim, in offer order."""
    return [line.removeprefix("claim: ") for text in offered(request).values()
            for line in text.split("\n") if line.startswith("claim: ")]


Canon = tuple[str, str, tuple[str, ...], tuple[str, ...]]
"""(title, claim, body, absorbed paths) of one canonical a responder writes."""


def answering(*canonicals: Canon, extra_keys: Sequence[str] = ()
              ) -> Callable[[ModelRequest], Mapping[str, object]]:
    """A responder writing each canonical whose members this batch offered (the others
    are left out, so one responder serves every batch)."""
    def respond(request: ModelRequest) -> Mapping[str, object]:
        keys = keys_by_path(request)
        out: list[dict[str, object]] = []
        for title, claim, body, paths in canonicals:
            if not all(title_of(p) in keys for p in paths):
                continue
            out.append({"title": title, "claim": claim, "body": list(body),
                        "absorbs": [keys[title_of(p)] for p in paths] + list(extra_keys)})
        return {"canonicals": out}

    return respond


def facts(paths: Sequence[str]) -> str:
    """A claim carrying each member's claim, in the members' words (``put``)."""
    return f"The facts recorded in {' and '.join(paths)}."


def details(paths: Sequence[str]) -> tuple[str, ...]:
    return tuple(f"Detail of {title_of(p)}." for p in paths)


DEPLOY: Canon = ("Deploy notes facts", facts(OPS[2:4]), details(OPS[2:4]), (OPS[2], OPS[3]))
"""A canonical drawn from its members and carrying each (``sleep.grounded``)."""


def held(version: HeadVersion, path: str) -> MemoryRecord:
    record = version.get(path)
    assert record is not None, path
    return record


def canonical_at(version: HeadVersion, before: HeadVersion, title: str) -> MemoryRecord:
    (made,) = [r for r in version.records() if before.get(r.path) is None
               and not r.archived and r.title == title]
    return made


# --------------------------------------------------------------------------- tests


def test_the_schema_is_in_the_strict_subset() -> None:
    assert is_successful(validate_schema(SCHEMA))


def test_no_model_writes_nothing() -> None:
    result = run(corpus(), None)
    assert result.reason == NO_MODEL
    assert result.commits == ()


def test_a_dry_run_counts_its_calls_and_asks_nothing() -> None:
    model = ScriptedModel(respond=answering(DEPLOY))
    result = run(corpus(db=True), model, dry_run=True)
    assert model.calls == 0
    assert result.commits == ()
    assert result.counts["would_call"] == 2
    assert result.counts["communities"] == 2


def test_a_canonical_absorbs_exactly_the_members_it_names() -> None:
    w = corpus()
    before = ok(w.store.head())
    model = ScriptedModel(respond=answering(DEPLOY))
    result = run(w, model)
    assert model.calls == 1
    assert result.counts["candidates"] == len(OPS) + 1
    assert (result.counts["canonicals"], result.counts["archived"]) == (1, 2)
    assert (result.counts["failed_batches"], result.counts["unknown_keys"]) == (0, 0)
    (commit,) = result.commits
    after = land(w, result)

    made = canonical_at(after, before, DEPLOY[0])
    assert made.path.startswith("areas/ops/")
    assert (made.memory_type, made.author) == ("semantic", SLEEP_AUTHOR)
    assert made.claim == DEPLOY[1]
    assert "Detail of Deploy 3." in made.body_text
    assert "Detail of Deploy 4." in made.body_text
    moved = {p: archive_path(p, STAMP.year) for p in (OPS[2], OPS[3])}
    assert sorted(link.href for link in made.links if link.rel == "supersedes") == sorted(
        to_document_path(to) for to in moved.values())
    for path, to in moved.items():
        assert after.get(path) is None
        archived = held(after, to)
        assert archived.status == "archived"
        assert archived.superseded_by == to_document_path(made.path)
    # The inbound link follows the note into the archive.
    pointer = held(after, OUTSIDER)
    assert [link.href for link in pointer.links] == [to_document_path(moved[OPS[2]])]
    # The members the answer did not name are byte for byte as they were.
    for path in OPS[:2]:
        assert held(after, path).html == held(before, path).html
    assert made.path in commit.body


def test_an_unnamed_member_is_untouched_whatever_the_text_says() -> None:
    w = corpus()
    before = ok(w.store.head())
    wide: Canon = (*DEPLOY[:3], (OPS[1], OPS[2], OPS[3]))  # names three of five
    after = land(w, run(w, ScriptedModel(respond=answering(wide))))
    assert held(after, OPS[0]).html == held(before, OPS[0]).html
    assert not held(after, OPS[0]).archived
    assert {archive_path(p, STAMP.year) for p in OPS[1:]} <= set(after.paths())


def test_a_dated_episode_is_summarised_linked_and_kept() -> None:
    w = corpus(diary=True)
    before = ok(w.store.head())
    assert is_dated_episode(held(before, DIARY))
    freeze: Canon = ("The deploy freeze facts",
                     f"The deploy froze at noon; {facts(DIARY_NOTES)[4:]}",
                     details(DIARY_NOTES), (DIARY, *DIARY_NOTES))
    result = run(w, ScriptedModel(respond=answering(freeze)))
    assert (result.counts["archived"], result.counts["episodes_kept"]) == (2, 1)
    after = land(w, result)
    made = canonical_at(after, before, freeze[0])
    episode = held(after, DIARY)
    assert not episode.archived and episode.status == "active"
    assert episode.superseded_by is None
    assert Link("part_of", to_document_path(made.path)) in episode.links
    assert Link("relates_to", to_document_path(DIARY)) in made.links
    assert to_document_path(archive_path(DIARY, STAMP.year)) not in {
        link.href for link in made.links}
    for path in DIARY_NOTES:
        assert after.get(path) is None
        assert held(after, archive_path(path, STAMP.year)).superseded_by == (
            to_document_path(made.path))


@pytest.mark.parametrize(("stranger", "unknown"), [
    ("m99", 1), ("m0", 1), ("m01", 1), ("ops/a.html", 1),
    (OPS[0], 0),  # longer than any key: the schema refuses it before it is resolved
])
def test_a_key_the_batch_did_not_offer_changes_nothing(stranger: str, unknown: int) -> None:
    w = corpus()
    result = run(w, ScriptedModel(respond=answering(DEPLOY, extra_keys=(stranger,)),
                                  checked=False))
    assert result.commits == ()
    assert result.counts["failed_batches"] == 1
    assert result.counts["unknown_keys"] == unknown
    assert result.counts["canonicals"] == 0


def test_the_fakes_stranger_key_changes_nothing() -> None:
    model = ScriptedModel(respond=answering(DEPLOY), unknown_key_calls=frozenset({1}))
    result = run(corpus(), model)
    assert result.commits == ()
    assert (result.counts["failed_batches"], result.counts["unknown_keys"]) == (1, 1)


def test_an_off_schema_answer_changes_nothing() -> None:
    def respond(request: ModelRequest) -> Mapping[str, object]:
        good = answering(DEPLOY)(request)["canonicals"]
        assert isinstance(good, list)
        return {"canonicals": [{**good[0], "path": "areas/elsewhere.html"}]}

    result = run(corpus(), ScriptedModel(respond=respond))
    assert result.commits == ()
    assert result.counts["failed_batches"] == 1


def test_a_malformed_batch_is_skipped_and_the_next_applied() -> None:
    w = corpus(db=True)
    backups: Canon = ("Backup facts", facts(DB[:2]), details(DB[:2]), DB[:2])
    model = ScriptedModel(respond=answering(DEPLOY, backups), malformed_calls=frozenset({1}))
    result = run(w, model)
    assert model.calls == 2
    assert result.counts["batches"] == 2
    assert result.counts["failed_batches"] == 1
    (commit,) = result.commits
    after = land(w, result)
    # Communities are asked by name: the backups (areas/db) first, and that call failed.
    assert all(after.get(p) is not None for p in DB)
    assert all(after.get(p) is None for p in OPS[2:])
    assert result.counts["canonicals"] == 1
    assert any(line.startswith("batch 1 malformed") for line in result.warnings)
    assert commit.subject.startswith("1 canonical compressed")


def test_each_batch_is_its_own_commit_landing_on_the_last() -> None:
    w = corpus(db=True)
    before = ok(w.store.head())
    backups: Canon = ("Backup facts", facts(DB), details(DB), DB)
    result = run(w, ScriptedModel(respond=answering(DEPLOY, backups)))
    assert len(result.commits) == 2
    after = land(w, result)
    canonical_at(after, before, backups[0])
    canonical_at(after, before, DEPLOY[0])
    assert all(after.get(p) is None for p in (*DB, OPS[2], OPS[3]))


def test_the_budget_skips_the_batches_it_cannot_pay_for() -> None:
    w = corpus(db=True)
    model = ScriptedModel(respond=answering(DEPLOY))
    result = run(w, model, calls=CallBudget(1))
    assert model.calls == 1
    assert (result.counts["calls"], result.counts["budget_skipped"]) == (1, 1)
    assert result.counts["failed_batches"] == 0


def test_a_canonical_of_one_member_is_skipped() -> None:
    alone: Canon = (*DEPLOY[:3], (OPS[3],))
    result = run(corpus(), ScriptedModel(respond=answering(alone)))
    assert result.commits == ()
    assert result.counts["too_few"] == 1


def test_a_member_claimed_twice_goes_to_the_first_canonical_only() -> None:
    second: Canon = ("Second", "Another take.", (), (OPS[3], OPS[1]))
    result = run(corpus(), ScriptedModel(respond=answering(DEPLOY, second)))
    assert (result.counts["canonicals"], result.counts["refused"]) == (1, 1)


def test_model_text_reaches_the_file_escaped() -> None:
    w = corpus()
    before = ok(w.store.head())
    claim = f"{facts(OPS[2:4])[:-1]}: a < b & <img src=x>."
    marked: Canon = ("Deploy <em>facts</em>", claim,
                     ("Detail of Deploy 3, detail of Deploy 4, the fact recorded: "
                      "<script>alert(1)</script>.",), (OPS[2], OPS[3]))
    result = run(w, ScriptedModel(respond=answering(marked)))
    after = land(w, result)
    made = canonical_at(after, before, "Deploy <em>facts</em>")
    assert made.claim == claim
    assert "<img" not in made.html and "<script>" not in made.html


def test_two_runs_send_the_same_bytes() -> None:
    first, second = ScriptedModel(respond=answering()), ScriptedModel(respond=answering())
    run(corpus(db=True, diary=True), first)
    run(corpus(db=True, diary=True), second)
    assert first.sent == second.sent
    assert len(first.sent) == 3
    assert all(r.tool_name == TOOL_NAME for r in first.requests)
    assert all(len(offered(r)) <= COMPRESS_BATCH for r in first.requests)


def test_tasks_are_never_offered() -> None:
    w = blank_world()
    clique(w, OPS)
    put(w, "areas/tasks/deploy-task.html", OPS, memory_type="task")
    w.clock.advance((STAMP - WRITTEN).total_seconds())
    model = ScriptedModel(respond=answering())
    run(w, model)
    assert all("Deploy Task" not in r.prompt for r in model.requests)


def test_a_refused_archive_writes_none_of_its_canonical() -> None:
    w = corpus()
    taken = archive_path(OPS[3], STAMP.year)
    # A file that is not a memory: an earlier archive of the path would only send this
    # one to archive/<YYYY>-2/.
    w.raw([PathChange(taken, b"<!doctype html><p>not a memory</p>\n")])
    before = ok(w.store.head())
    result = run(w, ScriptedModel(respond=answering(DEPLOY)))
    assert (result.counts["canonicals"], result.counts["refused"]) == (0, 1)
    assert result.commits == ()
    assert held(before, OPS[3]).html == held(ok(w.store.head()), OPS[3]).html



def test_a_canonical_of_keys_numbers_or_invented_text_archives_nothing() -> None:
    w = corpus()
    before = ok(w.store.head())
    weak: tuple[Canon, ...] = (
        ("Deploy Backup for New Roes", "m4", ("m4", "m6"), (OPS[2], OPS[3])),
        ("Deploy facts", "10", (), (OPS[0], OPS[1])),
    )
    result = run(w, ScriptedModel(respond=answering(*weak)))
    assert result.commits == ()
    assert (result.counts["canonicals"], result.counts["refused_ungrounded"]) == (0, 2)
    refused = [m for m in result.marks if m.kind == "model-refused"]
    assert {(m.get("phase"), m.get("rule")) for m in refused} == {
        ("compress", "text-not-drawn"), ("compress", "text-key-or-number")}
    assert all(m.get("batch") == 1 for m in refused)
    assert sorted(ok(w.store.head()).paths()) == sorted(before.paths())


def test_a_canonical_leaving_out_a_members_claim_archives_nothing() -> None:
    w = corpus(diary=True)
    # Drawn from the episode alone: the two notes it would archive are not carried.
    one_sided: Canon = ("Deploy freeze", "The deploy froze at noon.", (),
                        (DIARY, *DIARY_NOTES))
    result = run(w, ScriptedModel(respond=answering(one_sided)))
    assert result.commits == () and result.counts["refused_ungrounded"] == 1
    marks = [m for m in result.marks if m.kind == "model-refused"]
    assert [(m.get("rule"), m.get("part")) for m in marks] == [
        ("member-not-carried", "/" + path) for path in DIARY_NOTES]
    for mark in marks:
        overlap, floor = mark.get("overlap"), mark.get("floor")
        assert isinstance(overlap, float) and isinstance(floor, float) and overlap < floor
