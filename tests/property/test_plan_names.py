"""The names a plan judges a new path by, kept op by op, are the names a fresh fold of
the plan's touched paths gives, after any sequence of writes, moves and archives.

The fold is the rule itself: every touched path the view holds and the base does not
is added, every one the base holds and the view does not is removed, and a move's
source is taken away as well. The paths are drawn from a few names that differ only by
case or Unicode normalization, in nested directories, and the raw overlay ops go in
beside the doors' steps so twins the doors would refuse reach the plan too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

from hypothesis import event, given
from hypothesis import strategies as st
from returns.result import Result, Success

from memhtml.contracts.ops import Archive, Move, Put
from memhtml.contracts.paths import path_key
from memhtml.format import NewMemoryInput, render_template
from memhtml.head import HeadVersion, record_from
from memhtml.head.indexes import build_indexes
from memhtml.head.version import SkippedFile
from memhtml.store.errors import StoreError
from memhtml.store.inputs import WriteInput
from memhtml.store.paths import Names, Spellings
from memhtml.store.plan import (
    Plan,
    _base_spellings,
    archive_step,
    move_step,
    names_for,
    write_step,
)

NOW = "2026-11-29T03:15:07Z"
DIRS = ("", "areas/", "Areas/", "areas/inbox/", "areas/Inbox/", "caf\u00e9/", "cafe\u0301/",
        "areas/inbox/deep/")
FILES = ("note.html", "Note.html", "r\u00e9sum\u00e9.html", "re\u0301sume\u0301.html",
         "other.html")
PATHS = tuple(d + f for d in DIRS for f in FILES)


def html(n: int) -> str:
    return render_template(NewMemoryInput(
        title=f"Memory {n}", claim=f"Fact number {n} about the deploy window.",
        memory_type="semantic", at="2026-05-01T12:00:00Z"))


def base_of(paths: list[str], skipped: list[str]) -> HeadVersion:
    records = [record_from(html(i), path).unwrap() for i, path in enumerate(paths)]
    return HeadVersion(build_indexes(records), "0" * 40, None,
                       tuple(SkippedFile(p, "not a memory") for p in skipped
                             if p not in paths))


def folded(plan: Plan, leaving: str | None = None) -> Names:
    """The names as a fold over every touched path makes them."""
    added = [p for p in plan.touched
             if plan.base.get(p) is None and plan.view.get(p) is not None]
    removed = [p for p in plan.touched
               if plan.base.get(p) is not None and plan.view.get(p) is None]
    if leaving is not None:
        removed.append(leaving)
    return Names((_base_spellings(plan), Spellings.of(added)), (Spellings.of(removed),))


def net(names: Names, table: Callable[[Spellings], Mapping[str, Counter[str]]]
        ) -> dict[str, Counter[str]]:
    """Each key's spellings, present minus gone, the ones left above zero."""
    keys = {key for layer in (*names.present, *names.gone) for key in table(layer)}
    out: dict[str, Counter[str]] = {}
    for key in keys:
        total: Counter[str] = Counter()
        for layer in names.present:
            total.update(table(layer).get(key, {}))
        for layer in names.gone:
            total.subtract(table(layer).get(key, {}))
        if +total:
            out[key] = +total
    return out


def assert_same_names(plan: Plan) -> None:
    added = {p for p in plan.touched
             if plan.base.get(p) is None and plan.view.get(p) is not None}
    removed = {p for p in plan.touched
               if plan.base.get(p) is not None and plan.view.get(p) is None}
    assert set(plan.own_names.added.paths) == added
    assert set(plan.own_names.removed.paths) == removed
    fresh_added, fresh_removed = Spellings.of(added), Spellings.of(removed)
    for kept, fresh in ((plan.own_names.added.spellings(), fresh_added),
                        (plan.own_names.removed.spellings(), fresh_removed)):
        assert dict(kept.files) == dict(fresh.files)
        assert dict(kept.dirs) == dict(fresh.dirs)
    for leaving in (None, *sorted(plan.view.paths())[:3], PATHS[0]):
        kept_names, fresh_names = names_for(plan, leaving), folded(plan, leaving)
        assert net(kept_names, lambda s: s.files) == net(fresh_names, lambda s: s.files)
        assert net(kept_names, lambda s: s.dirs) == net(fresh_names, lambda s: s.dirs)
        for path in PATHS:
            assert kept_names.twin(path) == fresh_names.twin(path)
        for directory in DIRS:
            bare = directory.rstrip("/")
            assert kept_names.has_directory(bare) == fresh_names.has_directory(bare)


paths = st.sampled_from(PATHS)
KINDS = ("put", "write", "write-in", "move", "raw-move", "archive", "raw-archive")
steps = st.tuples(st.sampled_from(KINDS), st.integers(0, 60),
                  paths | st.sampled_from(DIRS))
"""(kind, which, target): a put or a write goes to ``target``, a write into a
directory to ``target``'s directory; a move or an archive takes the ``which``-th live
memory of the view in path order (so most find one), a move to ``target``."""


def apply(plan: Plan, step: tuple[str, int, str], n: int) -> Result[Plan, StoreError]:
    """One drawn step; a refused one leaves the plan as it was (the caller keeps it)."""
    kind, which, target = step
    live = sorted(p for p in plan.view.paths() if not p.startswith("archive/"))
    held = live[which % len(live)] if live else PATHS[which % len(PATHS)]
    match kind:
        case "put":
            return plan.apply(Put(target, html(n)))
        case "write":
            return write_step(plan, WriteInput(title=f"W{n}", claim=f"Claim {n}.",
                                               path=target)).map(lambda s: s.plan)
        case "write-in":
            folder = target.rsplit("/", 1)[0] + "/" if "/" in target else ""
            return write_step(plan, WriteInput(title=f"Note {n % 3}", claim=f"Claim {n}."),
                              directory=folder).map(lambda s: s.plan)
        case "move":
            return move_step(plan, held, target).map(lambda s: s.plan)
        case "raw-move":
            return plan.apply(Move(held, target))
        case "archive":
            return archive_step(plan, held).map(lambda s: s.plan)
        case _:
            return plan.apply(Archive(held, f"archive/2026/{held}", html(n)))


@given(base=st.lists(paths, max_size=6, unique=True),
       skipped=st.lists(paths, max_size=2, unique=True),
       sequence=st.lists(steps, min_size=1, max_size=12))
def test_kept_names_equal_a_fresh_fold_after_every_step(
        base: list[str], skipped: list[str], sequence: list[tuple[str, int, str]]) -> None:
    plan = Plan.start(base_of(base, skipped), NOW)
    assert_same_names(plan)
    for n, step in enumerate(sequence):
        match apply(plan, step, n):
            case Success(after):
                plan = after
                event(f"{step[0]!s} applied")
            case _:
                event(f"{step[0]!s} refused")
        assert_same_names(plan)


def test_a_write_then_a_move_away_leaves_no_added_name() -> None:
    """A path written and then moved on is in neither set; its destination is added,
    and a base file moved away is removed with its directories' counts."""
    plan = Plan.start(base_of(["areas/inbox/old.html"], []), NOW)
    plan = plan.apply(Put("areas/Inbox/new.html", html(1))).unwrap()
    plan = plan.apply(Move("areas/Inbox/new.html", "areas/x/new.html")).unwrap()
    plan = plan.apply(Move("areas/inbox/old.html", "old.html")).unwrap()
    assert set(plan.own_names.added.paths) == {"areas/x/new.html", "old.html"}
    assert set(plan.own_names.removed.paths) == {"areas/inbox/old.html"}
    removed = plan.own_names.removed.spellings()
    assert removed.dirs["areas/inbox"] == Counter({"areas/inbox": 1})
    assert "areas/inbox" not in plan.own_names.added.spellings().dirs
    assert_same_names(plan)


@given(st.lists(st.builds(lambda d, f: d + f, st.sampled_from(DIRS), st.sampled_from(FILES)),
                max_size=12))
def test_spellings_count_each_key_as_a_counter_per_path_would(paths: list[str]) -> None:
    """Most keys hold one spelling and are kept as a plain name; what a reader sees is
    each key's spellings counted, as one ``Counter`` a path counts them."""
    expected: dict[str, Counter[str]] = {}
    for path in paths:
        expected.setdefault(path_key(path), Counter())[path] += 1
    files = Spellings.of(paths).files
    assert dict(files.items()) == expected
    assert sorted(files) == sorted(expected) and len(files) == len(expected)
    for key in expected:
        files[key]["mutated"] += 1  # a copy: the table is left as it was
    assert dict(files.items()) == expected
