"""bench/archive: archiving a thousand memories in one plan, on SciFact.

SciFact's 5,183 abstracts are committed as memory files (a bare repository), once as
they are and once with every archived memory given one inbound ``relates_to`` from
another file, so each archive also rewrites a link. Measured in the same run, each
the fastest of ``MEMHTML_BENCH_RUNS`` (default 3), and printed as ratios of
``load_head`` of the same commit:

- ``archive_many_step`` of 1,000 paths (every fifth, in path order);
- ``archive_step`` over the same paths one at a time, each scanning every record for
  ``memhtml-superseded-by``: what the bulk form replaces.

Target (issue 15): 1,000 archives <= 1x ``load_head``.
"""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime
from functools import reduce
from pathlib import Path

from bench.advance import fastest
from bench.common import run, scifact_dir
from memhtml.adapters.git import PygitService
from memhtml.contracts import PathChange, Signature
from memhtml.contracts.paths import to_document_path
from memhtml.eval.beir import memory_path, read_corpus, render_doc
from memhtml.format import add_link
from memhtml.head import HeadVersion, load_head
from memhtml.store.plan import Plan, archive_many_step, archive_step

AUTHOR = Signature("bench", "bench@memhtml.invalid")
AT = datetime(2026, 1, 1, tzinfo=UTC)
NOW = "2026-06-01T00:00:00Z"
RUNS = int(os.environ.get("MEMHTML_BENCH_RUNS", "3"))
ARCHIVES = 1000


def one_by_one(version: HeadVersion, paths: list[str]) -> Plan:
    def step(plan: Plan, path: str) -> Plan:
        return archive_step(plan, path).unwrap().plan

    return reduce(step, paths, Plan.start(version, NOW))


def in_bulk(version: HeadVersion, paths: list[str]) -> Plan:
    done = archive_many_step(Plan.start(version, NOW), paths).unwrap()
    assert not done.refused, done.refused
    return done.plan


def measure(label: str, files: dict[str, str], targets: list[str]) -> None:
    root = Path(tempfile.mkdtemp(prefix="memhtml-bench-archive-"))
    git = run(PygitService.init(root, bare=True))
    sha = run(git.commit("refs/heads/main", None,
                         [PathChange(p, h.encode()) for p, h in sorted(files.items())],
                         "import SciFact", AUTHOR, AT))
    version, load_s = fastest(lambda: run(load_head(git, sha)))
    bulk, bulk_s = fastest(lambda: in_bulk(version, targets))
    each, each_s = fastest(lambda: one_by_one(version, targets))
    assert bulk.changes() == each.changes()
    print(f"{label}")
    print(f"  load_head                          {load_s:7.2f} s")
    print(f"  archive_many_step, {len(targets)} paths      {bulk_s:7.2f} s   "
          f"x{bulk_s / load_s:4.2f} of load_head")
    print(f"  archive_step one by one, {len(targets)} paths {each_s:7.2f} s   "
          f"x{each_s / load_s:4.2f} of load_head")


def main() -> None:
    docs = list(read_corpus(scifact_dir() / "corpus.jsonl"))
    files = {memory_path(d): render_doc(d) for d in docs}
    paths = sorted(files)
    targets = paths[::5][:ARCHIVES]
    print(f"SciFact: {len(files)} memory files, {len(targets)} archived; "
          f"fastest of {RUNS} runs each")
    measure("no inbound links", files, targets)
    linked = dict(files)
    for n in range(0, len(targets) * 5, 5):
        # The next path in order links to the target (never itself a target: targets
        # are every fifth path).
        target, source = paths[n], paths[n + 1]
        linked[source] = add_link(linked[source], "relates_to", to_document_path(target))
    measure("one inbound relates_to per archived memory", linked, targets)


if __name__ == "__main__":
    main()
