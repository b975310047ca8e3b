"""The bulk archive and the task-status body line: ``archive_many_step`` makes the very
changes ``archive_step`` applied one path at a time makes, and counts what it refuses."""

from __future__ import annotations

from functools import reduce

from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful
from returns.result import Failure

from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.vocabulary import EdgeRel, MemoryType
from memhtml.format import NewMemoryInput, render_template, set_meta
from memhtml.head import HeadVersion, record_from
from memhtml.head.indexes import build_indexes
from memhtml.head.version import SkippedFile
from memhtml.store.errors import describe
from memhtml.store.plan import Plan, archive_many_step, archive_step, task_status_step

NOW = "2026-11-29T03:15:07Z"
WRITTEN = "2026-05-01T12:00:00Z"
RELS: tuple[EdgeRel, ...] = ("relates_to", "supports", "contradicts", "part_of")


def live(n: int) -> str:
    return f"areas/n/m{n}.html"


def doc(path: str) -> str:
    return "/" + path


def memory(path: str, n: int, links: tuple[Link, ...] = (), superseded_by: str | None = None,
           memory_type: MemoryType = "semantic", archived: bool = False) -> MemoryRecord:
    html = render_template(NewMemoryInput(
        title=f"Memory {n}", claim=f"Fact number {n} about the deploy window.",
        memory_type=memory_type, at=WRITTEN, links=links))
    if superseded_by is not None:
        html = set_meta(html, "memhtml-superseded-by", superseded_by)
    if archived:
        html = set_meta(set_meta(html, "memhtml-status", "archived"), "memhtml-archived", WRITTEN)
    return record_from(html, path).unwrap()


def version(records: list[MemoryRecord], skipped: tuple[str, ...] = ()) -> HeadVersion:
    return HeadVersion(build_indexes(records), "0" * 40, None,
                       tuple(SkippedFile(p, "not a memory") for p in skipped))


@st.composite
def stores(draw: st.DrawFn) -> tuple[HeadVersion, list[str], dict[str, str]]:
    """A few live memories linking each other, some superseded by others, a few old
    archived ones superseded by live ones, maybe an archive path an earlier archive or a
    file that is not a memory holds; the
    paths to archive (repeats and strangers allowed) and a keeper for some."""
    n = draw(st.integers(2, 6))
    paths = [live(i) for i in range(n)]
    records: list[MemoryRecord] = []
    for i, path in enumerate(paths):
        targets = draw(st.lists(st.tuples(st.sampled_from(RELS), st.sampled_from(paths)),
                                max_size=3, unique=True))
        links = tuple(Link(rel, doc(t)) for rel, t in targets)
        keeper = draw(st.none() | st.sampled_from(paths))
        records.append(memory(path, i, links, None if keeper is None else doc(keeper)))
    for j in range(draw(st.integers(0, 2))):
        records.append(memory(f"archive/2025/areas/old/o{j}.html", 100 + j,
                              superseded_by=doc(draw(st.sampled_from(paths))), archived=True))
    taken = draw(st.lists(st.sampled_from(paths), max_size=1))
    for path in taken:
        records.append(memory(f"archive/2026/{path}", 200, archived=True))
    skipped = tuple(f"archive/2026/{p}" for p in draw(st.lists(st.sampled_from(paths),
                                                             max_size=1)) if p not in taken)
    order = draw(st.permutations([*paths, "areas/n/none.html"]))
    asked = [*order[:draw(st.integers(0, len(order)))],
             *draw(st.lists(st.sampled_from([*paths, doc(paths[0])]), max_size=2))]
    keepers = {p: doc(draw(st.sampled_from(paths)))
               for p in draw(st.lists(st.sampled_from(paths), max_size=3))}
    return version(records, skipped), asked, keepers


@given(stores())
def test_the_bulk_archive_is_archive_step_one_path_at_a_time(
        drawn: tuple[HeadVersion, list[str], dict[str, str]]) -> None:
    base, asked, keepers = drawn
    refusals: list[tuple[str, str]] = []

    def one(plan: Plan, path: str) -> Plan:
        stepped = archive_step(plan, path, keepers.get(path))
        if isinstance(stepped, Failure):
            refusals.append((path, describe(stepped.failure())))
            return plan
        return stepped.unwrap().plan

    expected = reduce(one, asked, Plan.start(base, NOW))
    done = archive_many_step(Plan.start(base, NOW), asked, keepers).unwrap()
    assert done.plan.changes() == expected.changes()
    assert done.refused == tuple(refusals)
    assert len(done.archived) + len(done.refused) == len(asked)


def test_an_earlier_archive_of_the_path_this_year_sends_it_to_the_next_folder() -> None:
    base = version([memory(live(0), 0), memory(live(1), 1, (Link("supports", doc(live(0))),)),
                    memory(f"archive/2026/{live(0)}", 9, archived=True)])
    done = archive_many_step(Plan.start(base, NOW), [live(0), live(1)]).unwrap()
    assert done.archived == ((live(0), f"archive/2026-2/{live(0)}"),
                             (live(1), f"archive/2026/{live(1)}"))
    assert done.refused == ()
    assert done.plan.view.get(f"archive/2026/{live(0)}") is not None, "the earlier one stays"
    moved = done.plan.view.get(f"archive/2026-2/{live(1)}".replace(live(1), live(0)))
    assert moved is not None and moved.claim == "Fact number 0 about the deploy window."
    linking = done.plan.view.get(f"archive/2026/{live(1)}")
    assert linking is not None
    assert Link("supports", doc(f"archive/2026-2/{live(0)}")) in linking.links


def test_a_file_that_is_not_a_memory_at_the_archive_path_is_a_counted_refusal() -> None:
    base = version([memory(live(0), 0), memory(live(1), 1, (Link("supports", doc(live(0))),))],
                   (f"archive/2026/{live(0)}",))
    done = archive_many_step(Plan.start(base, NOW), [live(0), live(1)]).unwrap()
    assert done.archived == ((live(1), f"archive/2026/{live(1)}"),)
    assert done.refused == ((live(0), f"archive/2026/{live(0)} is a file that is not a memory "
                                      f"(not a memory); {live(0)} was not archived there"),)
    assert done.outcome.body == "archived 1 to archive/2026/; refused 1"
    assert done.plan.view.get(live(0)) is not None


def test_archiving_a_keeper_follows_every_record_it_supersedes() -> None:
    # m1 is superseded by m0 and archived first; archiving m0 next must point the
    # archived m1's superseded-by at m0's archive path (the index, kept as it goes).
    base = version([memory(live(0), 0), memory(live(1), 1), memory(live(2), 2,
                                                                    superseded_by=doc(live(0)))])
    done = archive_many_step(Plan.start(base, NOW), [live(1), live(0)],
                             {live(1): doc(live(0))}).unwrap()
    for path in (f"archive/2026/{live(1)}", live(2)):
        record = done.plan.view.get(path)
        assert record is not None
        assert record.superseded_by == f"/archive/2026/{live(0)}"


def test_an_empty_list_changes_nothing() -> None:
    base = version([memory(live(0), 0)])
    done = archive_many_step(Plan.start(base, NOW), []).unwrap()
    assert done.plan.changes() == ((), {})
    assert (done.archived, done.refused) == ((), ())


def test_task_status_carries_the_given_body_line() -> None:
    base = version([memory("areas/tasks/t.html", 0, memory_type="task")])
    plain = task_status_step(Plan.start(base, NOW), "areas/tasks/t.html", "done").unwrap()
    swept = task_status_step(Plan.start(base, NOW), "areas/tasks/t.html", "done",
                             "no longer detected").unwrap()
    assert plain.outcome.body == "done, archived"
    assert swept.outcome.body == "no longer detected"
    assert swept.plan.changes() == plain.plan.changes()
    doing = task_status_step(Plan.start(base, NOW), "areas/tasks/t.html", "doing").unwrap()
    assert doing.outcome.body == "doing"


def test_a_bad_status_is_still_refused() -> None:
    base = version([memory("areas/tasks/t.html", 0, memory_type="task")])
    assert not is_successful(task_status_step(Plan.start(base, NOW), "areas/tasks/t.html",
                                              "finished", "x"))
