"""``memhtml sync`` and ``memhtml clone``: one memory shared by many machines through
any git remote.

The work is ``memhtml.sync.door``; this module picks the remote and the branch,
shows git's progress on long transfers (on standard error, never with --json) and
prints the summary: what was fetched, how it was brought in, each merge decision,
and whether the push landed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from memhtml.cli.common import Common, no_scope, open_common
from memhtml.cli.output import CliError, Reply, UsageError, respond, unwrap_io

_COMMON = Common()
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""Control characters, escape sequences' start among them: a remote's messages are
shown on the person's terminal and must not be able to drive it."""


class _Progress:
    """git's progress on one line of standard error, rewritten in place; shown only on
    a terminal (a log or a pipe gets the summary alone) and never with --json."""

    def __init__(self, as_json: bool) -> None:
        self.on = not as_json and sys.stderr.isatty()
        self._shown = False

    def __call__(self, line: str) -> None:
        if self.on:
            sys.stderr.write("\r\x1b[K" + _CONTROL.sub("", line)[:100])
            sys.stderr.flush()
            self._shown = True

    def done(self) -> None:
        if self._shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _shown(path: str) -> str:
    """A path from the remote as a terminal may print it: control characters escaped."""
    return path if not _CONTROL.search(path) else repr(path)


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "nothing"


def sync(remote: str = "origin", /, *, branch: str = "", common: Common = _COMMON) -> int:
    """Share this store through a git remote: fetch its branch, bring it in (a
    fast-forward, or a merge fact by fact: metadata of one memory unioned, two edits
    of one memory both kept and linked with a review task, nothing superseded), then
    push. The push is never forced: it lands only as a fast-forward of the branch as
    fetched, and when another clone pushed first the round runs again. A remote that
    lets these credentials read but not push (a read-only member) is pulled from, with
    a note; one whose branch was rewound behind what this clone last saw is refused. A remote
    bringing a path a write would refuse (a name too long, a case twin, a symbolic
    link where the layout has a directory) is refused whole, each path named, with
    nothing moved. Each live memory the remote deleted outright is named; memhtml
    restore PATH brings one back.

    Parameters
    ----------
    remote
        The git remote to share through (git remote add NAME URL adds one).
    branch
        The branch on the remote (default: the store's branch).
    """

    def body() -> Reply:
        from memhtml.compose import explain
        from memhtml.sync.door import sync as run_sync

        # Any configured scope syncs (a read-only one too: a sync only brings in and
        # sends what that store's own clone holds), through its own remotes.
        services, store = open_common(common, writes=False)
        remotes = services.remote
        if remotes is None:
            raise CliError("this store has no repository on disk to sync from")
        on = branch or services.settings.branch
        if not on:
            raise UsageError("name the branch to sync with --branch")
        shown = _Progress(common.json)
        try:
            outcome = unwrap_io(run_sync(store, remotes, remote, on, shown))
        finally:
            shown.done()
        events = [{"kind": e.kind, "path": e.path, "other": e.other, "detail": e.detail}
                  for e in outcome.events]
        payload = {
            "ok": True, "remote": remote, "branch": on, "action": outcome.action,
            "before": outcome.before, "fetched": outcome.fetched, "after": outcome.after,
            "pushed": outcome.pushed, "rounds": outcome.rounds,
            "changed": list(outcome.changed), "kept": list(outcome.kept), "merge": events,
            "deleted": list(outcome.deleted), "remote_head": outcome.remote_head,
            "push_refused": None if outcome.push_refused is None else explain(
                outcome.push_refused),
        }
        lines = [f"{remote}/{on}: fetched {_short(outcome.fetched)}; {outcome.action}"
                 + (f" ({len(outcome.changed)} paths)" if outcome.changed else "")
                 + ("; pushed " + _short(outcome.after) if outcome.pushed else
                    "; not pushed (read-only)" if outcome.push_refused is not None else
                    "; nothing to push")
                 + (f" after {outcome.rounds} rounds" if outcome.rounds > 1 else "")]
        lines += [f"  {e.kind}: {e.detail}" for e in outcome.events]
        lines += [f"  deleted by the remote: {_shown(path)} (memhtml restore {_shown(path)} "
                  "brings it back)" for path in outcome.deleted]
        if outcome.remote_head is not None:
            lines.append(f"  {remote}'s HEAD named {_shown(outcome.remote_head)}, a branch "
                         f"it does not have; it now names {on}, so a clone checks out the "
                         "store")
        notes = tuple(f"left as it was in the checkout (changed there): {p}"
                      for p in outcome.kept)
        if outcome.push_refused is not None:
            notes += (f"note: {explain(outcome.push_refused)}",)
        return Reply(payload, "\n".join(lines), notes=notes)

    return respond(common.json, body)


def clone(url: str, directory: Path, /, *, branch: str = "", common: Common = _COMMON) -> int:
    """Clone a store from a git remote (a path, file://, ssh or https, with git's own
    credentials) and make the clone ready: the store's branch checked out and recorded
    as the clone's own (git config memhtml.branch, which no pull moves), the merge
    driver for generated pages set, local state created.

    Parameters
    ----------
    url
        Where the store is: anything `git clone` takes.
    directory
        A new or empty directory for the clone.
    branch
        The store's branch (never a sleep run's). Without it the clone takes the
        branch the remote's HEAD names; when that holds no store (a remote made with
        git init --bare names master, which a store pushed as main leaves missing),
        the branch carrying the store: the one the markers name, else main, else the
        only one, and it says which it took.
    """

    def body() -> Reply:
        no_scope(common)
        from memhtml.cli.common import open_cli_services
        from memhtml.compose import clone_store
        from memhtml.store.layout import legacy_attributes_at

        target = directory.expanduser().resolve()
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise UsageError(f"{target} exists and is not an empty directory")
        shown = _Progress(common.json)
        try:
            took = unwrap_io(clone_store(url, target, branch or None, shown),
                             lambda error: error.reason)
        finally:
            shown.done()
        on = took.branch
        services = open_cli_services(Common(store=str(target), json=common.json))
        tip = unwrap_io(services.store().tip())
        # A clone stays equal to its remote: an earlier release's attribute lines are
        # named, for the person to replace with init, never replaced here.
        legacy = unwrap_io(legacy_attributes_at(services.git, tip)) if tip else ()
        notes = (f"note: this store's .gitattributes still has an earlier memhtml's "
                 f"merge=ours lines ({', '.join(legacy)}); run memhtml init to replace "
                 "them",) if legacy else ()
        payload = {"ok": True, "store": str(target), "branch": on, "commit": tip,
                   "branch_rule": took.rule, "branch_reason": took.reason,
                   "notes": list(notes)}
        text = f"store at {target} (branch {on}, {_short(tip)})"
        # Taken by looking, not by HEAD or --branch: say which and why, on stdout, since
        # it is the answer to where the clone writes.
        if took.rule not in ("option", "head"):
            text += f"\n  took {on}: {_shown(took.reason)}"
        return Reply(payload, text, notes=notes)

    return respond(common.json, body)
