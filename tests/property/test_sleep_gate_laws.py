"""The merge gate's law, over generated stores and generated run changes.

A store of memories that share no word of their titles or claims (some with a
duplicate: the same claim under another title) is the base; a run branch is cut at
it and carries what a night might do, each memory given one role:

- *kept* as it was (its duplicate, if it has one, folded into it with proper
  supersession: the copy archived ``superseded-by`` the keeper, the keeper linking
  ``supersedes`` to the archive);
- *archived* with nothing standing for it (forgotten), by retention's commit;
- *rewritten*, its title, claim or both, either keeping its words (``, revised``) or
  replaced by one word nobody searches for (``qqq``; a memory keeps being found by the
  one of the two left), and either in a phase's commit (recorded) or in a hand commit
  on the branch (not);
- *folded into a stranger*: archived superseded by a kept memory that says nothing
  of it;
- *moved* under another directory, its bytes unchanged (placement's commit).

Then ``sleep merge`` runs behind the composition's own gate with a drawn
``archive_share``. The law: it lands exactly when every base memory stays findable
(itself, where it moved, or its keeper: no stranger fold, no ``qqq``), the archived
share is within the setting, and every title or claim change is recorded; and when
it refuses, the refusal is the first broken rule in merge's order (``unrecorded``,
``over-archived``, ``gate-failed``) and names exactly the memories that broke it.
The oracle is the roles alone; it never searches.

Everything runs on the in-memory doubles (``InMemoryGit``), and the run's commits
are made directly on its branch, so an example costs a load and a gate, not a night.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from hypothesis import event, given, settings
from hypothesis import strategies as st

from memhtml.compose.sleep import head_gate
from memhtml.contracts.paths import to_document_path
from memhtml.contracts.services import PathChange
from memhtml.head import HeadVersion
from memhtml.sleep.contract import (
    TRAILER_BASE,
    TRAILER_PHASE,
    TRAILER_RUN,
    branch_of,
    report_path,
)
from memhtml.sleep.merge import merge_run
from memhtml.store.layout import archive_path
from memhtml.store.plan import Plan, archive_step, link_step
from tests.property.head_support import memory
from tests.unit.sleep.sleep_support import RUN_DAY, World, blank_world, ok

WORDS = [
    "anchor", "basalt", "cobalt", "dynamo", "ember", "falcon", "glacier", "harbor",
    "indigo", "jasper", "kelvin", "lantern", "magnet", "nectar", "orchid", "pepper",
    "quartz", "raven", "saffron", "tundra", "umber", "velvet", "walnut", "xenon",
    "yarrow", "zephyr", "acorn", "bramble", "cinder", "dune", "estuary", "fjord",
    "granite", "heron", "iris", "juniper", "kestrel", "lichen", "marble", "nimbus",
]
BRANCH = branch_of(RUN_DAY)
NOW = "2026-11-29T03:15:07Z"
ROLES = ("kept", "archived", "rewritten", "stranger", "moved")


@dataclass(frozen=True)
class Role:
    kind: str
    duplicate: bool = False
    """kept: has a duplicate the run folds into it."""
    fields: tuple[str, ...] = ()
    """rewritten: which of title and claim."""
    findable: bool = True
    """rewritten: keeps its words (True) or becomes ``qqq``."""
    recorded: bool = True
    """rewritten: in a phase's commit (True) or by hand."""


kept = st.builds(Role, st.just("kept"), duplicate=st.booleans())
roles = st.one_of(
    # Kept twice as often as any change, so a night of several changes still lands
    # now and then.
    kept, kept,
    st.builds(Role, st.just("archived")),
    st.builds(Role, st.just("rewritten"),
              fields=st.sampled_from([("title",), ("claim",), ("title", "claim")]),
              findable=st.booleans(), recorded=st.booleans()),
    st.builds(Role, st.just("stranger")),
    st.builds(Role, st.just("moved")),
)


def path_of(n: int) -> str:
    return f"areas/notes/m{n}.html"


def dup_of(n: int) -> str:
    return f"areas/notes/m{n}-copy.html"


def title_of(n: int) -> str:
    return f"{WORDS[3 * n].capitalize()} {WORDS[3 * n + 1]}"


def claim_of(n: int) -> str:
    # Only the memory's own words: a word two claims shared would put any keeper in
    # a small store's top k for any query that has it.
    return f"{WORDS[3 * n].capitalize()} {WORDS[3 * n + 1]} {WORDS[3 * n + 2]}."


def _examples(ci: int) -> int:
    profile = settings.default
    if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" or profile is None:
        return ci
    return profile.max_examples


def trailers(phase: str, base: str) -> str:
    return (f"memhtml sleep: {phase} ({RUN_DAY})\n\n{TRAILER_RUN}: {RUN_DAY}\n"
            f"{TRAILER_PHASE}: {phase}\n{TRAILER_BASE}: {base}\n")


def commit(w: World, changes: list[PathChange], message: str) -> None:
    if changes:
        tip = ok(w.git.resolve(BRANCH))
        ok(w.git.commit(BRANCH, tip, changes, message, w.store.deps.author, w.clock.now()))


def branch_version(w: World) -> HeadVersion:
    return ok(w.store.version_at(BRANCH))


def rewritten(w: World, n: int, role: Role) -> PathChange:
    data = w.blob(BRANCH, path_of(n))
    assert data is not None
    text = data.decode()
    if "title" in role.fields:
        new = f"{title_of(n)}, revised" if role.findable else "qqq"
        text = text.replace(f"<title>{title_of(n)}</title>", f"<title>{new}</title>")
    if "claim" in role.fields:
        new = claim_of(n).replace(".", ", restated.") if role.findable else "qqq."
        text = text.replace(f"<mark>{claim_of(n)}</mark>", f"<mark>{new}</mark>")
    assert text != data.decode()
    return PathChange(path_of(n), text.encode())


def plan_changes(plan: Plan) -> list[PathChange]:
    return list(plan.changes()[0])


def fold(plan: Plan, drop: str, keeper: str) -> Plan:
    plan = archive_step(plan, drop, to_document_path(keeper)).unwrap().plan
    to = archive_path(drop, plan.year)
    return link_step(plan, keeper, "supersedes", to_document_path(to)).unwrap().plan


def run_branch(w: World, assigned: list[Role], base: str) -> None:
    """The run's commits on its branch, one kind of change each, a report last."""
    kept = [n for n, r in enumerate(assigned) if r.kind == "kept"]
    plan = Plan.start(branch_version(w), NOW)
    for n, role in enumerate(assigned):
        if role.kind == "kept" and role.duplicate:
            plan = fold(plan, dup_of(n), path_of(n))
    commit(w, plan_changes(plan), trailers("dedup-merge", base))
    plan = Plan.start(branch_version(w), NOW)
    for n, role in enumerate(assigned):
        if role.kind == "archived":
            plan = archive_step(plan, path_of(n)).unwrap().plan
    commit(w, plan_changes(plan), trailers("retention-triage", base))
    plan = Plan.start(branch_version(w), NOW)
    for n, role in enumerate(assigned):
        if role.kind == "stranger":
            plan = fold(plan, path_of(n), path_of(kept[0]))
    commit(w, plan_changes(plan), trailers("compress", base))
    commit(w, [rewritten(w, n, r) for n, r in enumerate(assigned)
               if r.kind == "rewritten" and r.recorded], trailers("compress", base))
    commit(w, [rewritten(w, n, r) for n, r in enumerate(assigned)
               if r.kind == "rewritten" and not r.recorded], "a hand edit on the run")
    moves: list[PathChange] = []
    for n, role in enumerate(assigned):
        if role.kind == "moved":
            moves += [PathChange(path_of(n), None),
                      PathChange(f"areas/filed/m{n}.html", w.blob(BRANCH, path_of(n)))]
    commit(w, moves, trailers("placement-triage", base))
    commit(w, [PathChange(report_path(RUN_DAY), b"<!doctype html><p>report</p>\n")],
           trailers("report", base))


@settings(max_examples=_examples(30))
@given(assigned=st.lists(roles, min_size=2, max_size=12),
       share=st.sampled_from([0.0, 0.1, 0.25, 0.5]))
def test_the_gate_passes_exactly_when_nothing_is_lost_unseen(
        assigned: list[Role], share: float) -> None:
    if not any(r.kind == "kept" for r in assigned):
        assigned = [Role("kept"), *assigned]
    w = blank_world()
    files = {path_of(n): memory(title_of(n), claim_of(n)) for n in range(len(assigned))}
    files |= {dup_of(n): memory(f"{WORDS[3 * n + 2].capitalize()} copy", claim_of(n))
              for n, r in enumerate(assigned) if r.duplicate}
    w.raw([PathChange(p, html.encode()) for p, html in sorted(files.items())], "the base")
    base = w.main()
    ok(w.git.create_branch(BRANCH, base))
    run_branch(w, assigned, base)

    outcome = ok(merge_run(w.deps(gate=head_gate, archive_share=share), RUN_DAY))

    hand = sorted(path_of(n) for n, r in enumerate(assigned)
                  if r.kind == "rewritten" and not r.recorded)
    forgotten = tuple(sorted(path_of(n) for n, r in enumerate(assigned)
                             if r.kind == "archived"))
    # Lost to search: folded into a stranger, or both title and claim replaced (one
    # of them left still finds it).
    unfindable = sorted(path_of(n) for n, r in enumerate(assigned)
                        if r.kind == "stranger" or (r.kind == "rewritten" and not r.findable
                                                    and len(r.fields) == 2))
    over = len(forgotten) > share * len(files)
    expected = ("unrecorded" if hand else "over-archived" if over
                else "gate-failed" if unfindable else None)
    event(f"refusal: {expected}")
    assert outcome.merged == (expected is None), outcome
    assert outcome.refusal == expected, outcome
    if expected is None:
        assert w.main() == ok(w.git.resolve(BRANCH))
        assert sorted(old for old, _ in outcome.moved) == sorted(
            path_of(n) for n, r in enumerate(assigned) if r.kind == "moved")
        return
    assert w.main() == base, "a refusal moves nothing"
    named = sorted({line.split(":", 1)[0].split(" (now", 1)[0] for line in outcome.violations})
    if expected == "unrecorded":
        assert named == hand, outcome.violations
    elif expected == "over-archived":
        assert outcome.violations == forgotten
    else:
        assert named == unfindable, outcome.violations
