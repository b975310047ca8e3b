"""The run report as a page: ``.memhtml/sleep/<run-id>.html``.

Every value on it (paths, subjects, warnings, a commitment's statement) comes from the
tree or a model and goes through ``html.escape``; the page carries the published
site's Content-Security-Policy as a ``<meta>`` right after the charset, holds no
script, no link and no form, and is byte-for-byte a function of the run (no clock, no
host, every list sorted or in run order).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field

from memhtml.sleep.contract import REPORT_GENERATOR, SleepPhase
from memhtml.sleep.decisions import RunDecisions
from memhtml.sleep.explain import Explanation, explain
from memhtml.sleep.ledger import PendingMark
from memhtml.store.site import CONTENT_SECURITY_POLICY


@dataclass(frozen=True)
class ReportRow:
    phase: SleepPhase
    status: str
    counts: str
    """The counts as one line of JSON (as the commit's trailer carries them)."""
    reason: str | None
    warnings: tuple[str, ...]
    commits: tuple[str, ...]


@dataclass(frozen=True)
class ReportModel:
    run_id: str
    branch: str | None
    stamp: str
    base_sha: str
    head_sha: str
    """The branch tip this page was written on top of (the report's own commit is the
    one after it)."""
    dry_run: bool
    commits: tuple[tuple[str, str, str], ...]
    """(sha, phase, subject) of every commit before the report's, oldest first."""
    rows: tuple[ReportRow, ...]
    marks: tuple[tuple[str, int], ...]
    """Ledger lines by kind."""
    unparsed: int
    below_floor: tuple[PendingMark, ...]
    explained: Explanation = field(default_factory=lambda: explain((), RunDecisions()))
    """The run's changes read against its decisions (``sleep.explain``)."""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _list(items: Sequence[str], empty: str) -> str:
    if not items:
        return f"<p>{_e(empty)}</p>"
    return "<ul>\n" + "".join(f"<li>{_e(item)}</li>\n" for item in items) + "</ul>"


def _below_floor(marks: tuple[PendingMark, ...]) -> str:
    rows = []
    for mark in marks:
        done = "done in the session" if mark.get("done") else "open"
        rows.append(f"<li><q>{_e(mark.get('statement'))}</q> (confidence "
                    f"{_e(mark.get('confidence'))}, session {_e(mark.get('session'))}, "
                    f"{_e(done)})</li>\n")
    listed = "<ul>\n" + "".join(rows) + "</ul>" if rows else "<p>None.</p>"
    return (f"<details>\n<summary>Commitments below the floor ({len(marks)})</summary>\n"
            f"{listed}\n</details>")


def _decisions(explained: Explanation) -> str:
    """One row per decision, under the file it is about: what was done, by which phase,
    by which rule (in words too), on which figures, in which commit."""
    rows: list[str] = []
    for path, decisions in explained.decided:
        for d in decisions:
            where = path + (f" \u2192 {d.to}" if d.to and d.to != path else "")
            against = f" (with {', '.join(d.related)})" if d.related else ""
            rows.append(
                f"<tr><td><code>{_e(where)}</code>{_e(against)}</td><td>{_e(d.action)}</td>"
                f"<td>{_e(d.phase)}</td><td><code>{_e(d.rule)}</code>: {_e(d.words)}</td>"
                f"<td><code>{_e(d.figures_text())}</code></td>"
                f"<td>{_e((d.commit or '')[:10])}</td></tr>\n")
    table = ("<table>\n<thead><tr><th>file</th><th>action</th><th>phase</th><th>rule</th>"
             "<th>figures</th><th>commit</th></tr></thead>\n<tbody>\n" + "".join(rows)
             + "</tbody>\n</table>") if rows else "<p>No memory changed.</p>"
    apart = [f"generated site pages: {len(explained.generated)} (regenerated, not listed)"]
    apart += [f"{phase} sweep: {n} file(s)" for phase, n in explained.swept.items()]
    if explained.unread:
        apart.append(f"decision lines not read: {explained.unread}")
    unexplained = _list(list(explained.unexplained), "None.")
    return "\n".join([
        "<h2>Decisions</h2>", table,
        "<h2>Counted apart</h2>", _list(apart, "None."),
        "<h2>Changed with no recorded decision</h2>", unexplained,
        "<h2>Run records</h2>", _list(list(explained.records), "None."),
    ])


def render_report(model: ReportModel) -> str:
    """The page, as text (UTF-8 when committed)."""
    title = f"Sleep run {model.run_id}" + (" (dry run)" if model.dry_run else "")
    facts = [("run id", model.run_id), ("branch", model.branch or "none (dry run)"),
             ("stamp", model.stamp), ("base_sha", model.base_sha),
             ("head_sha", model.head_sha), ("commits", str(len(model.commits)))]
    dl = "".join(f"<dt>{_e(k)}</dt><dd><code>{_e(v)}</code></dd>\n" for k, v in facts)
    phase_rows = []
    for position, row in enumerate(model.rows, start=1):
        detail = row.reason or ""
        phase_rows.append(
            f"<tr><td>{position}</td><td>{_e(row.phase)}</td><td>{_e(row.status)}</td>"
            f"<td><code>{_e(row.counts)}</code></td><td>{_e(detail)}</td>"
            f"<td>{_e(' '.join(sha[:10] for sha in row.commits))}</td></tr>\n")
    commit_items = "".join(f"<li><code>{_e(sha[:10])}</code> {_e(phase)}: {_e(subject)}</li>\n"
                           for sha, phase, subject in model.commits)
    commits = f"<ol>\n{commit_items}</ol>" if commit_items else "<p>No commits.</p>"
    warnings = [f"{row.phase}: {w}" for row in model.rows for w in row.warnings]
    marks = [f"{kind}: {count}" for kind, count in model.marks]
    if model.unparsed:
        marks.append(f"unparsable lines skipped: {model.unparsed}")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(CONTENT_SECURITY_POLICY)}">',
        f'<meta name="generator" content="{_e(REPORT_GENERATOR)}">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{_e(title)}</title>",
        "</head>",
        "<body>",
        "<main>",
        f"<h1>{_e(title)}</h1>",
        f"<dl>\n{dl}</dl>",
        "<h2>Phases</h2>",
        "<table>",
        "<thead><tr><th>#</th><th>phase</th><th>status</th><th>counts</th><th>reason</th>"
        "<th>commits</th></tr></thead>",
        "<tbody>\n" + "".join(phase_rows) + "</tbody>",
        "</table>",
        "<h2>Commits</h2>",
        commits,
        _decisions(model.explained),
        "<h2>Warnings</h2>",
        _list(warnings, "None."),
        "<h2>Pending marks</h2>",
        _list(marks, "None."),
        _below_floor(model.below_floor),
        "</main>",
        "</body>",
        "</html>",
        "",
    ])
