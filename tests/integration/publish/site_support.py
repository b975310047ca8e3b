"""A small store for the publish tests: its memory files, its views and a site on disk."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html.parser import HTMLParser
from pathlib import Path

from returns.result import Success

from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.vocabulary import MemoryType, TaskStatus
from memhtml.format import NewMemoryInput, render_template, set_meta
from memhtml.head import IndexedView, build_indexes, record_from
from memhtml.store.site import render_site

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
