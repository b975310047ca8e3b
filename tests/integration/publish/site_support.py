"""A small store for the publish tests: its memory files, its views and a site on disk."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from returns.result import Success

from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.services import PathChange
from memhtml.contracts.vocabulary import MemoryType, TaskStatus
from memhtml.format import NewMemoryInput, render_template, set_meta
from memhtml.head import HeadVersion, IndexedView, build_indexes, record_from
from memhtml.store import publish
from memhtml.store.landing import Landed
from memhtml.store.site import render_site
from tests.integration.store.store_support import AUTHOR, CLOCK, make_memory_store, ok

HOSTILE = '<script>window.__pwned=1;alert(1)</script> " onmouseover="window.__pwned=2" javascript:'
HOSTILE_TITLE = "Hostile " + HOSTILE + "alert(3)"
HOSTILE_CLAIM = "Claim " + HOSTILE + "alert(4) <img src=x onerror=alert(5)> & done."
HOSTILE_PATH = "areas/security/hostile-looking.html"
SCHEME_PATH = "areas/security/javascript:alert(6).html"

DEPLOY_PATH = "areas/deploy/canary-gate.html"
DEPLOY_CLAIM = "The deploy step of checkout-api is safe once the canary stage passes."


def memory_file(
    title: str,
    claim: str,
    *,
    memory_type: MemoryType = "semantic",
    body: tuple[str, ...] = (),
    links: tuple[Link, ...] = (),
    task_status: TaskStatus | None = None,
    due_at: str | None = None,
    at: str = "2026-07-28T14:03:11Z",
) -> str:
    return render_template(
        NewMemoryInput(
            title=title, claim=claim, memory_type=memory_type, at=at, body=body, links=links,
            task_status=task_status, due_at=due_at, detect=lambda _code: None,
        )
    )


def archived_file(html: str) -> str:
    return set_meta(set_meta(html, "memhtml-status", "archived"), "memhtml-archived",
                    "2026-11-01T00:00:00Z")


def sample_files() -> dict[str, str]:
    """A store across a few directories: links, a task, an archived correction, a
    hostile-looking memory and a file name that starts like a URL scheme."""
    return {
        DEPLOY_PATH: memory_file(
            "Deploy step is safe after the canary", DEPLOY_CLAIM,
            body=("Verified after the canary gate was added.",),
            links=(Link("relates_to", "/areas/deploy/rollback-window.html"),),
        ),
        "areas/deploy/rollback-window.html": memory_file(
            "Rollback window is ten minutes", "A rollback after ten minutes needs a migration.",
            memory_type="procedural",
            at="2026-08-02T09:00:00Z",
        ),
        "areas/inbox/review-alerts.html": memory_file(
            "Review the paging alerts", "The paging alerts need a review before the freeze.",
            memory_type="task", task_status="doing", due_at="2026-12-01T00:00:00Z",
        ),
        HOSTILE_PATH: memory_file(HOSTILE_TITLE, HOSTILE_CLAIM),
        SCHEME_PATH: memory_file("A file named like a scheme", "Its name starts with javascript."),
        "resources/people/laura.html": memory_file(
            "Laura runs the release train", "Laura decides when a release leaves the train.",
            memory_type="user_preference",
        ),
        "archive/2026/areas/deploy/deploy-step-unsafe.html": archived_file(memory_file(
            "Deploy step is unsafe", "The deploy step of checkout-api is unsafe.",
        )),
        "notes.html": memory_file("A note at the root", "Root-level memories are listed too."),
    }


TAGGED_PATH = "areas/security/runbook-notes.html"
REFUSED_SCRIPT = "areas/security/refused-script.html"
REFUSED_JS_HREF = "areas/security/refused-javascript-href.html"
REFUSED_HANDLER = "areas/security/refused-handler.html"
REFUSED_STYLESHEET = "areas/security/refused-stylesheet.html"
HOSTILE_TAG = '<img src=x onerror="window.__pwned=7"> tag'
HOSTILE_ENTITY = 'service:"><script>window.__pwned=8</script>'

TAGGED_ARTICLE = (
    "<p><mark>The security runbook starts at the canary gate.</mark> See "
    '<a href="/areas/deploy/canary-gate.html">the canary gate</a> and the '
    '<a href="https://example.org/runbook">runbook</a>.</p>\n'
    "<ul><li>First <code>drain --vip</code></li><li>Then <strong>wait</strong></li></ul>\n"
    "<ol><li>one</li><li>two</li></ol>\n"
    "<dl><dt>Owner</dt><dd>Laura</dd></dl>\n"
    '<figure><pre><code>echo "&lt;script&gt;window.__pwned=9&lt;/script&gt;"\n'
    "  --indented</code></pre></figure>\n"
    "<aside><p>An aside with <em>emphasis</em>.</p></aside>"
)
TAGGED_LINKS = (
    Link("relates_to", "/" + DEPLOY_PATH),
    Link("relates_to", "/" + REFUSED_SCRIPT),
    Link("supports", "/" + SCHEME_PATH),
    Link("leads_to", "/areas/nowhere/missing.html"),
)


def _inject(html: str, old: str, new: str) -> str:
    assert html.count(old) == 1, old
    return html.replace(old, new)


def tagged_file() -> str:
    """A valid memory with hostile tags and entities, structured prose and edges to
    a memory, a refused file, a scheme-named file and nowhere."""
    return render_template(NewMemoryInput(
        title="Security runbook notes", claim="", memory_type="procedural",
        at="2026-08-03T10:00:00Z", article_html=TAGGED_ARTICLE, links=TAGGED_LINKS,
        tags=(HOSTILE_TAG, "security"), entities=(HOSTILE_ENTITY, "person:laura"),
        detect=lambda _code: None,
    ))


def refused_files() -> dict[str, str]:
    """Files the format check refuses, each one that would run script (or, for the
    stylesheet, break the closed head) if a browser opened it from the site."""
    base = memory_file("Looks like a memory", "It is not one the check accepts.")
    return {
        REFUSED_SCRIPT: _inject(base, "</article>",
                                "<script>window.__pwned=3;alert(3)</script></article>"),
        REFUSED_JS_HREF: _inject(base, "</mark>",
                                 '</mark> <a href="javascript:window.__pwned=4">go</a>'),
        REFUSED_HANDLER: _inject(base, "<p><mark>", '<p onmouseover="window.__pwned=5"><mark>'),
        REFUSED_STYLESHEET: _inject(base, "</head>",
                                    '<link rel="stylesheet" href="/memhtml-site/memhtml.css">\n'
                                    "</head>"),
    }


def hostile_store_files() -> dict[str, str]:
    """``sample_files`` plus the tagged memory: every one of them passes the check."""
    return {**sample_files(), TAGGED_PATH: tagged_file()}


def records_of(files: Mapping[str, str]) -> list[MemoryRecord]:
    out = []
    for path in sorted(files):
        result = record_from(files[path], path)
        assert isinstance(result, Success), (path, result)
        out.append(result.unwrap())
    return out


def view_of_files(files: Mapping[str, str], order: Iterable[str] | None = None) -> IndexedView:
    """A view over ``files``, its records inserted in ``order`` (default: sorted)."""
    by_path = {r.path: r for r in records_of(files)}
    paths = list(order) if order is not None else sorted(by_path)
    return IndexedView(build_indexes(by_path[p] for p in paths), None)


def write_site(root: Path, files: Mapping[str, str], extra: Mapping[str, bytes] = {}) -> None:
    """The memory files, ``extra`` files and the rendered site, laid out under ``root``."""
    view = view_of_files(files)
    tree: dict[str, bytes] = {p: t.encode() for p, t in files.items()}
    tree.update(extra)
    tree.update(render_site(view, tree))
    write_tree(root, tree)


@dataclass(frozen=True)
class Published:
    landed: Landed
    tree: dict[str, bytes]
    """The whole tree at the publish commit."""
    version: HeadVersion
    """The head the publish read."""
    commits: int
    """Commits the publish added (one, or none when nothing changed)."""


def publish_store(files: Mapping[str, str]) -> Published:
    """Commit ``files`` as they are (refused ones included, past every door) to a fresh
    in-memory store, then run the real publish door on it."""
    store, git = make_memory_store()
    before = ok(store.tip())
    changes = [PathChange(path, text.encode()) for path, text in sorted(files.items())]
    written = ok(git.commit(store.deps.ref, before, changes, "files", AUTHOR, CLOCK.now()))
    version = ok(store.head())
    landed = ok(publish(store))
    entries = ok(git.list_tree(landed.commit))
    blobs = ok(git.read_blobs([e.blob_id for e in entries]))
    commits = len(ok(git.commits_between(written, landed.commit)))
    return Published(landed, {e.path: blobs[e.blob_id] for e in entries}, version, commits)


def write_tree(root: Path, tree: Mapping[str, bytes]) -> None:
    for path, data in tree.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                  "source", "track", "wbr"})


class TagBalance(HTMLParser):
    """Records every element and checks that non-void elements nest and close."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.doctype: str | None = None

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.problems.append(f"self-closing <{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def tag_balance(page: str) -> TagBalance:
    checker = TagBalance()
    checker.feed(page)
    checker.close()
    if checker.stack:
        checker.problems.append(f"unclosed {checker.stack}")
    return checker
