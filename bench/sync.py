"""bench/sync: the fact-by-fact merge of two clones' histories, against load_head and git.

SciFact's 5,183 abstracts are committed as a store's memory files (as in
``bench.head``). Two branches then each make N changes on top: a quarter new
memories, a quarter metadata-only edits, a quarter article edits and a quarter
archive-like moves, one in ten of the edited paths edited on both branches (so every
merge rule runs). Measured in the same run, each the fastest of three:

- ``load_head`` of the base commit (parsing the whole store);
- ``merge_draft`` (``memhtml.sync.door``): merge base, the changed paths of both
  sides, their blobs, the path lists and ``merge_trees``; everything ``memhtml sync``
  does between fetch and commit;
- ``git merge-tree --write-tree`` of the same two branches (git's own in-memory merge,
  as a process: what a plain ``git pull`` would spend merging).

Target: the merge at most 0.2x ``load_head`` at N = 100, and its cost following N
(reported for N = 10, 100 and 1,000).
"""

from __future__ import annotations

import subprocess
import tempfile
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from bench.advance import RUNS, fastest
from bench.common import run, scifact_dir
from memhtml.adapters.clock import FixedClock
from memhtml.adapters.git import PygitService
from memhtml.contracts import PathChange, Signature
from memhtml.eval.beir import memory_path, read_corpus, render_doc
from memhtml.format import content_hash, set_meta
from memhtml.head import load_head
from memhtml.store import Store, StoreDeps
from memhtml.store.landing import Draft
from memhtml.sync.door import merge_draft
from memhtml.sync.merge import TreeMerge

AUTHOR = Signature("bench", "bench@memhtml.invalid")
AT = datetime(2026, 1, 1, tzinfo=UTC)
SIZES = (10, 100, 1000)


def _edit_article(html: str, mark: str) -> str:
    changed = html.replace("</article>", f"<p>{mark}</p></article>", 1)
    return set_meta(changed, "memhtml-content-hash", content_hash(changed))


def _side(files: dict[str, str], paths: list[str], n: int, name: str, shared: list[str]
          ) -> list[PathChange]:
    """N changes for one branch: new files, meta edits, article edits, moves."""
    quarter = max(1, n // 4)
    changes: list[PathChange] = []
    template = files[paths[0]]
    for i in range(quarter):
        new = template.replace("<title>", f"<title>{name} new {i} ", 1)
        changes.append(PathChange(f"areas/{name}/new-{i}.html", new.encode()))
    own = [p for p in paths if p not in shared]
    meta = shared[: len(shared) // 2] + own[:quarter]
    for i, path in enumerate(meta[:quarter]):
        updated = f"2027-01-{1 + i % 28:02d}T00:00:00Z"
        changes.append(PathChange(path, set_meta(set_meta(
            files[path], "memhtml-confidence", "0.7" if name == "a" else "0.9"),
            "memhtml-updated", updated).encode()))
    article = shared[len(shared) // 2:] + own[quarter: 2 * quarter]
    for path in article[:quarter]:
        changes.append(PathChange(path, _edit_article(files[path], name).encode()))
    for path in own[2 * quarter: 3 * quarter]:
        changes.append(PathChange(path, None))
        changes.append(PathChange(f"archive/2026/{path}", set_meta(
            files[path], "memhtml-status", "archived").encode()))
    return changes


def _load(git: PygitService, sha: str) -> object:
    return run(load_head(git, sha))


def _merge(store: Store, ours: str, theirs: str) -> tuple[Draft, TreeMerge]:
    return run(merge_draft(store, ours, theirs, "b"))


def _git_merge(root: Path) -> str:
    # Exit 1 means the textual merge has conflicts: still a finished merge to time.
    return subprocess.run(["git", "-C", str(root), "merge-tree", "--write-tree", "a", "b"],
                          capture_output=True, text=True, check=False).stdout


def main() -> None:
    docs = list(read_corpus(scifact_dir() / "corpus.jsonl"))
    print(f"SciFact: {len(docs)} memory files; fastest of {RUNS} runs each")
    files = {memory_path(d): render_doc(d) for d in docs}
    paths = sorted(files)
    load_s = 0.0
    for n in SIZES:
        root = Path(tempfile.mkdtemp(prefix="memhtml-bench-sync-"))
        git = run(PygitService.init(root, bare=True))
        base = run(git.commit("refs/heads/main", None,
                              [PathChange(p, h.encode()) for p, h in files.items()],
                              "import SciFact", AUTHOR, AT))
        shared = paths[: max(2, n // 10)]
        a_paths = paths[len(shared): len(shared) + n]
        b_paths = paths[len(shared) + n: len(shared) + 2 * n]
        run(git.create_branch("a", base))
        run(git.create_branch("b", base))
        a = run(git.commit("refs/heads/a", base, _side(files, shared + a_paths, n, "a", shared),
                           "side a", AUTHOR, AT))
        b = run(git.commit("refs/heads/b", base, _side(files, shared + b_paths, n, "b", shared),
                           "side b", AUTHOR, AT))
        if not load_s:
            _, load_s = fastest(partial(_load, git, base))
            print(f"load_head of the base                      {load_s:7.3f} s")
        store = Store(StoreDeps(git=git, clock=FixedClock(AT), author=AUTHOR))
        (draft, merged), merge_s = fastest(partial(_merge, store, a, b))
        _, git_s = fastest(partial(_git_merge, root))
        kinds: dict[str, int] = {}
        for event in merged.events:
            kinds[event.kind] = kinds.get(event.kind, 0) + 1
        print(f"N={n:5d} per side: merge {merge_s:7.3f} s = x{merge_s / load_s:5.3f} of "
              f"load_head; git merge-tree {git_s:7.3f} s; {len(draft.changes)} paths "
              f"written; events {dict(sorted(kinds.items()))}")


if __name__ == "__main__":
    main()
