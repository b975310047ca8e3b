"""Rejecting single changes of a run: links that would dangle are refused by name, and
links a restored file holds are followed to where the run moved their target.

A phase body stands in for the night (the runner records what it commits), so each
case plants exactly the change it needs on the in-memory git.
"""

from __future__ import annotations

import pytest
from returns.io import IOResult, IOSuccess
from tests.unit.sleep.sleep_support import RUN_DAY, World, blank_world, err, ok, world

from memhtml.contracts.services import PathChange
from memhtml.format import add_link, remove_link
from memhtml.sleep import runner
from memhtml.sleep.errors import SleepRefused
from memhtml.sleep.phase import PhaseCommit, PhaseEnv, PhaseFault, PhaseResult
from memhtml.sleep.phases import body_for
from memhtml.sleep.reject import reject_changes
from memhtml.sleep.runner import run_sleep

BRANCH = f"sleep/{RUN_DAY}"
NOTE0, NOTE1, NOTE2 = (f"areas/notes/note-{n}.html" for n in range(3))
CREATED = "areas/notes/made-by-the-night.html"
ARCHIVED1 = f"archive/2026/{NOTE1}"


def night(monkeypatch: pytest.MonkeyPatch, w: World, changes: list[PathChange]) -> str:
    """A run whose trace-consolidation phase commits ``changes``; its tip."""
    def body(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        return IOSuccess(PhaseResult(commits=(PhaseCommit("planted", tuple(changes)),)))

    monkeypatch.setattr(runner, "body_for",
                        lambda phase: body if phase == "trace-consolidation" else body_for(phase))
    ok(run_sleep(w.deps()))
    return ok(w.git.resolve(BRANCH))


def text(w: World, commit: str, path: str) -> str:
    data = w.blob(commit, path)
    assert data is not None, path
    return data.decode("utf-8")


def test_a_created_memory_others_link_to_goes_only_with_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    other = blank_world()
    other.write("Made by the night", "A fact the night distilled.", path=CREATED)
    made = text(other, other.main(), CREATED).encode("utf-8")
    base = w.main()
    linked = add_link(text(w, base, NOTE2), "relates_to", "/" + CREATED).encode("utf-8")
    tip = night(monkeypatch, w, [PathChange(CREATED, made), PathChange(NOTE2, linked)])

    refused = err(reject_changes(w.deps(), RUN_DAY, [CREATED]))
    assert isinstance(refused, SleepRefused)
    assert "pointing at nothing" in refused.reason
    assert f"{NOTE2} -> {CREATED}" in refused.reason
    assert ok(w.git.resolve(BRANCH)) == tip, "a refusal moves nothing"

    done = ok(reject_changes(w.deps(), RUN_DAY, [CREATED, NOTE2]))
    assert w.blob(done.commit, CREATED) is None
    assert w.blob(done.commit, NOTE2) == w.blob(base, NOTE2)
    assert ok(w.git.resolve(BRANCH)) == done.commit


def test_a_restored_file_follows_a_link_to_where_the_run_archived_its_target(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    base = w.main()
    note2 = text(w, base, NOTE2)
    assert "/" + NOTE1 in note2
    # The night archives note 1 (inbound links pointed at its copy) and gives note 2 a
    # second link.
    followed = add_link(remove_link(note2, "relates_to", "/" + NOTE1), "relates_to",
                        "/" + ARCHIVED1)
    changed = add_link(followed, "relates_to", "/" + NOTE0).encode("utf-8")
    night(monkeypatch, w, [PathChange(NOTE1, None),
                           PathChange(ARCHIVED1, text(w, base, NOTE1).encode("utf-8")),
                           PathChange(NOTE2, changed)])

    done = ok(reject_changes(w.deps(), RUN_DAY, [NOTE2]))
    now = text(w, done.commit, NOTE2)
    assert "/" + ARCHIVED1 in now and 'href="/' + NOTE1 + '"' not in now
    assert "/" + NOTE0 not in now.replace("/" + ARCHIVED1, "")
    assert w.blob(done.commit, NOTE1) is None, "the archive stands"

    # Rejecting the archive then brings note 1 back and points note 2 at it again.
    again = ok(reject_changes(w.deps(), RUN_DAY, [NOTE1]))
    assert w.blob(again.commit, NOTE1) == w.blob(base, NOTE1)
    assert w.blob(again.commit, ARCHIVED1) is None
    assert again.relinked == (NOTE2,)
    assert w.blob(again.commit, NOTE2) == w.blob(base, NOTE2)


def test_a_change_that_only_followed_an_archive_is_refused_and_named(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Rejecting a file whose only change was pointing a link at a memory the run
    archived would put back the very bytes the tip holds: refused, naming the way to
    undo it (reject the archive), and the branch does not move."""
    w = world()
    base = w.main()
    note2 = text(w, base, NOTE2)
    followed = add_link(remove_link(note2, "relates_to", "/" + NOTE1), "relates_to",
                        "/" + ARCHIVED1).encode("utf-8")
    tip = night(monkeypatch, w, [PathChange(NOTE1, None),
                                 PathChange(ARCHIVED1, text(w, base, NOTE1).encode("utf-8")),
                                 PathChange(NOTE2, followed)])
    refused = err(reject_changes(w.deps(), RUN_DAY, [NOTE2]))
    assert isinstance(refused, SleepRefused)
    assert "changed only where its links point" in refused.reason and NOTE2 in refused.reason
    assert ok(w.git.resolve(BRANCH)) == tip
    done = ok(reject_changes(w.deps(), RUN_DAY, [NOTE1]))
    assert w.blob(done.commit, NOTE2) == w.blob(base, NOTE2)
