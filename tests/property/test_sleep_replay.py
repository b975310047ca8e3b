"""A law of ``sleep merge`` beside writers, over generated interleavings.

A run is cut over a few linked notes and edits some of them on its branch (as a phase
would); meanwhile writers land new notes, edit notes, and archive notes through the
door (which rewrites the links into the archived one). Then the run is merged:

- when no path both sides changed, it lands, and main's tree is exactly main's tip
  before the merge with every path the run changed as the run left it;
- otherwise it is refused ``conflict`` naming exactly the paths both changed, and
  main does not move.
"""

from __future__ import annotations

from hypothesis import event, given, settings
from hypothesis import strategies as st

from memhtml.contracts.services import PathChange
from memhtml.sleep.contract import TRAILER_BASE, TRAILER_PHASE, TRAILER_RUN
from memhtml.sleep.merge import merge_run
from memhtml.sleep.runner import run_sleep
from memhtml.store import archive
from tests.unit.sleep.sleep_support import RUN_DAY, World, ok, world

NOTES = 4
BRANCH = f"sleep/{RUN_DAY}"


def note(n: int) -> str:
    return f"areas/notes/note-{n}.html"


WRITER_OPS = st.one_of(
    st.tuples(st.just("write"), st.integers(0, 99)),
    st.tuples(st.just("edit"), st.integers(0, NOTES - 1)),
    st.tuples(st.just("archive"), st.integers(0, NOTES - 1)),
)


def edited(w: World, rev: str, n: int, words: str) -> PathChange:
    data = w.blob(rev, note(n))
    assert data is not None
    return PathChange(note(n), data.replace(b"about the deploy window", words.encode()))


def writer(w: World, op: tuple[str, int], i: int) -> None:
    kind, n = op
    if kind == "write":
        w.write(f"Writer {i}", f"Writer fact {i} of {n}.", path=f"areas/writers/w{i}.html")
    elif kind == "edit" and w.blob(w.main(), note(n)) is not None:
        w.raw([edited(w, w.main(), n, f"as writer {i} saw it")])
    elif kind == "archive" and w.blob(w.main(), note(n)) is not None:
        ok(archive(w.store, note(n)))


@settings(max_examples=20)
@given(run_edits=st.sets(st.integers(0, NOTES - 1), max_size=2),
       writers=st.lists(WRITER_OPS, min_size=1, max_size=4))
def test_a_merge_beside_writers_lands_exactly_or_names_every_shared_path(
        run_edits: set[int], writers: list[tuple[str, int]]) -> None:
    w = world(memories=NOTES)
    report = ok(run_sleep(w.deps()))
    if run_edits:
        tip = ok(w.git.resolve(BRANCH))
        # Carrying the run's trailers, as a phase's commit does: a claim only a phase
        # may rewrite (a hand commit's rewrite is refused as unrecorded).
        ok(w.git.commit(BRANCH, tip, [edited(w, tip, n, "as the run saw it")
                                      for n in sorted(run_edits)],
                        f"a phase's edit\n\n{TRAILER_RUN}: {RUN_DAY}\n"
                        f"{TRAILER_PHASE}: integrity\n{TRAILER_BASE}: {report.base_sha}\n",
                        w.store.deps.author, w.clock.now()))
    for i, op in enumerate(writers):
        writer(w, op, i)
    base, tip, main = report.base_sha, ok(w.git.resolve(BRANCH)), w.main()
    run_paths = set(ok(w.git.changed_paths(base, tip)))
    main_paths = set(ok(w.git.changed_paths(base, main)))
    outcome = ok(merge_run(w.deps(), RUN_DAY))
    shared = sorted(run_paths & main_paths)
    event("conflict" if shared else "fast-forward" if main == base else "replayed")
    if shared:
        assert (outcome.merged, outcome.refusal, outcome.conflicts) == (
            False, "conflict", tuple(shared)), outcome
        assert w.main() == main
        return
    if main == base:
        assert outcome.merged and outcome.fast_forwarded, outcome
        return
    assert outcome.merged and outcome.merge_commit == w.main(), outcome
    expected = w.tree(main)
    for path in run_paths:
        blob = w.tree(tip).get(path)
        if blob is None:
            expected.pop(path, None)
        else:
            expected[path] = blob
    assert w.tree(w.main()) == expected
