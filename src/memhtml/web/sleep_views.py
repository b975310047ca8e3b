"""The sleep review in the browser: the runs, a run's changes with their reasons, each
file before and after.

Each function takes the run's ``SleepDeps`` (``compose.sleep.sleep_deps``, as the CLI's
``sleep`` commands build them) and answers the page's values from the same functions
``memhtml sleep status`` and ``sleep review`` print: ``sleep.runs.sleep_status`` and
``sleep.review.review_run``. A file's two versions are read from the run's base and
tip; a memory is shown through the published site's reader of the checked tree, as
every page of the app shows one, and beside it a line diff of the files themselves.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from markupsafe import Markup
from returns.io import IOResult

from memhtml.contracts.services import TreeEntry
from memhtml.head import record_from
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.errors import SleepError
from memhtml.sleep.reject import REJECTABLE
from memhtml.sleep.review import FileChange, Review, review_run
from memhtml.sleep.runs import SleepStatus, sleep_status
from memhtml.store.site_article import article_blocks

DIFF_LINES: Final = 400
"""Lines of a file's diff shown at most: a compress canonical's whole rewrite fits."""


def runs(deps: SleepDeps) -> IOResult[dict[str, Any], SleepError]:
    def page(status: SleepStatus) -> dict[str, Any]:
        return {"here": "sleep", "title": "Sleep runs", "main": status.main,
                "runs": status.runs, "notes": status.notes,
                "open": [r.run_id for r in status.runs
                         if r.state in ("mergeable", "main-advanced", "stopped")]}

    return sleep_status(deps).map(page)


@dataclass(frozen=True)
class Group:
    change: str
    files: tuple[FileChange, ...]


ORDER: Final = ("archived", "moved", "body-changed", "meta-only", "created", "deleted")


def run(deps: SleepDeps, run_id: str) -> IOResult[dict[str, Any], SleepError]:
    """A run's page: its state, each phase's counts, its commits, and its files grouped
    by what happened to them, each with the decisions that made the change."""
    def page(review: Review) -> dict[str, Any]:
        groups = [Group(change, tuple(f for f in review.files if f.change == change))
                  for change in ORDER]
        return {"here": "sleep", "title": f"Sleep run {review.run_id}", "review": review,
                "groups": [g for g in groups if g.files],
                "mergeable": review.state in ("mergeable", "main-advanced"),
                "rejectable": review.state in REJECTABLE,
                "open": review.state not in ("merged",)}

    return review_run(deps, run_id).map(page)


@dataclass(frozen=True)
class Side:
    label: str
    path: str | None
    blocks: tuple[Markup, ...]
    claim: str | None
    title: str | None


def _side(label: str, path: str | None, data: bytes | None) -> Side:
    if path is None or data is None:
        return Side(label, path, (), None, None)
    text = data.decode("utf-8", "replace")
    record = record_from(text, path).value_or(None)
    if record is None:
        return Side(label, path, (), None, None)
    # article_blocks escapes every text and attribute it writes back.
    blocks = tuple(Markup(b) for b in article_blocks(record.html, lambda _href: None))
    return Side(label, path, blocks, record.claim, record.title)


def _read(deps: SleepDeps, commit: str, paths: Sequence[str]
          ) -> IOResult[dict[str, bytes | None], SleepError]:
    git = deps.git
    entries: IOResult[tuple[TreeEntry, ...], SleepError] = git.entries_at(commit, list(paths))

    def blobs(found: tuple[TreeEntry, ...]) -> IOResult[dict[str, bytes | None], SleepError]:
        ids = {e.path: e.blob_id for e in found}
        read: IOResult[Any, SleepError] = git.read_blobs(sorted(set(ids.values())))
        return read.map(lambda got: {p: got.get(ids[p]) if p in ids else None for p in paths})

    return entries.bind(blobs)


def file(deps: SleepDeps, run_id: str, path: str) -> IOResult[dict[str, Any], SleepError]:
    """One file of a run: before (at the run's base) and after (at its tip, where the
    run put it), rendered, with a line diff and the decisions behind the change."""
    from memhtml.sleep.errors import SleepRefused

    def page(review: Review) -> IOResult[dict[str, Any], SleepError]:
        change = next((f for f in review.files if f.path == path), None)
        if change is None:
            refused: IOResult[dict[str, Any], SleepError] = IOResult.from_failure(
                SleepRefused(f"run {run_id} did not change {path}"))
            return refused
        after_path = change.to or (None if change.change == "deleted" else path)
        before_path = None if change.change == "created" else path

        def shown(base: dict[str, bytes | None], tip: dict[str, bytes | None]
                  ) -> dict[str, Any]:
            old = base.get(before_path) if before_path else None
            new = tip.get(after_path) if after_path else None
            diff = list(difflib.unified_diff(
                (old or b"").decode("utf-8", "replace").splitlines(),
                (new or b"").decode("utf-8", "replace").splitlines(),
                fromfile=f"{before_path or '(none)'} at {review.base[:10]}",
                tofile=f"{after_path or '(none)'} at {review.tip[:10]}", lineterm=""))
            return {"here": "sleep", "title": f"{path} in run {run_id}", "review": review,
                    "rejectable": review.state in REJECTABLE,
                    "change": change, "before": _side("Before", before_path, old),
                    "after": _side("After", after_path, new),
                    "diff": diff[:DIFF_LINES], "cut": max(0, len(diff) - DIFF_LINES)}

        return _read(deps, review.base, [p for p in (before_path,) if p]).bind(
            lambda base: _read(deps, review.tip, [p for p in (after_path,) if p]).map(
                lambda tip: shown(base, tip)))

    return review_run(deps, run_id).bind(page)


__all__ = ["file", "run", "runs"]
