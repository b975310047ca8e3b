"""bench/pygit2_leaks: which pygit2 calls keep the names they are given, measured.

    python -m bench.pygit2_leaks                  # every case, 100,000 calls each
    python -m bench.pygit2_leaks --calls 20000 tree_contains tree_entries

pygit2 (1.21 and the releases before it) converts a name argument with
``pgit_borrow_fsdefault``, which takes a new reference from ``PyOS_FSPath`` and never
drops it: the string passed is never freed. A name built at run time (a path split
into its parts, an f-string) is a new object each call, so every call strands one
(about 110 bytes for a 60-character name). A literal is one shared object, which is
why a reproduction with a constant name shows nothing.

Each case runs ``--calls`` times in a process of its own, on a repository made for
it, with a name made afresh each call, after a warm-up of 1,000 calls; the figure is
the growth of the process's resident set (``VmRSS``, which counts C allocations and
strings alike), per call. ``tracemalloc`` would show the strings too, but not what
libgit2 allocates, so RSS is the measure. The cases are the calls memhtml's git
adapters make with a name, and the ways around them they use instead:

- a tree's ``in``, ``[]`` and ``/`` with a name (present or missing) leak; iterating
  a tree's entries into a dict passes no name, nor does ``git_names.tree_entry``
  (a binary search by index) or ``entry_at``;
- ``TreeBuilder.get`` and ``remove`` leak; ``insert`` does not, nor does
  ``git_names.tree_without`` (the raw tree rewritten without the entries);
- ``references.get`` / ``references[...]`` (``lookup_reference``) leak; the branch
  lookup (``lookup_branch``, parsed with ``PyArg_ParseTuple``) does not, nor does
  ``git_names.reference`` (the interned name: one object per distinct name, however
  many lookups);
- the index (cffi), the transaction (cffi), ``revparse_single``, ``get`` by id,
  ``odb.read`` and ``config[...]`` do not.

Nothing is asserted; the table is what ``docs/design.md`` cites.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from memhtml.adapters.git_names import entry_at, reference, tree_entry, tree_without

CALLS = 100_000
WARMUP = 1_000
LEAK_BYTES = 16.0
"""Growth per call above which a case is called a leak: allocator noise over 100,000
calls stays under a byte a call; a stranded name is over a hundred."""


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def fresh(base: str) -> str:
    """A new string object every call, as a path split at run time is."""
    return f"{base}-{'x' * 40}.html"


def copied(text: str) -> str:
    """An equal string that is a new object."""
    return "".join(list(text))


def _repository() -> tuple[pygit2.Repository, pygit2.Tree, str, pygit2.Oid]:
    """A repository with one commit on ``main``: a tree of 2,000 files and one
    subdirectory, and a checkout index."""
    repo = pygit2.init_repository(tempfile.mkdtemp(prefix="memhtml-leak-"))
    blob = repo.create_blob(b"x")
    builder = repo.TreeBuilder()
    for i in range(2_000):
        builder.insert(fresh(f"present{i}"), blob, FileMode.BLOB)
    sub = repo.TreeBuilder()
    sub.insert("a.html", blob, FileMode.BLOB)
    builder.insert("dir", sub.write(), FileMode.TREE)
    tree = repo[builder.write()]
    assert isinstance(tree, pygit2.Tree)
    author = pygit2.Signature("bench", "bench@memhtml.invalid", 0, 0)
    commit = repo.create_commit("refs/heads/main", author, author, "m", tree.id, [])
    repo.index.read_tree(tree)
    repo.index.write()
    return repo, tree, str(commit), blob


def cases() -> dict[str, Callable[[], Callable[[], object]]]:
    """Each case's set-up, returning the call to repeat."""

    def tree_contains() -> Callable[[], object]:
        _, tree, _, _ = _repository()
        return lambda: fresh("missing") in tree

    def tree_contains_present() -> Callable[[], object]:
        _, tree, _, _ = _repository()
        return lambda: fresh("present7") in tree

    def tree_getitem() -> Callable[[], object]:
        _, tree, _, _ = _repository()

        def call() -> object:
            try:
                return tree[fresh("missing")]
            except KeyError:
                return None

        return call

    def tree_getitem_present() -> Callable[[], object]:
        _, tree, _, _ = _repository()
        return lambda: tree[fresh("present7")]

    def tree_divide() -> Callable[[], object]:
        _, tree, _, _ = _repository()

        def call() -> object:
            try:
                return tree / fresh("missing")
            except KeyError:
                return None

        return call

    def tree_entries() -> Callable[[], object]:
        _, tree, _, _ = _repository()
        return lambda: {obj.name: obj for obj in tree}.get(fresh("missing"))

    def git_names_tree_entry() -> Callable[[], object]:
        _, tree, _, _ = _repository()
        return lambda: (tree_entry(tree, fresh("missing")), tree_entry(tree, fresh("present7")))

    def git_names_entry_at() -> Callable[[], object]:
        _, tree, _, _ = _repository()
        return lambda: entry_at(tree, f"dir/{fresh('missing')}")

    def git_names_tree_without() -> Callable[[], object]:
        repo, tree, _, _ = _repository()
        sub = tree_entry(tree, "dir")
        assert isinstance(sub, pygit2.Tree)
        return lambda: tree_without(repo, sub, [copied("a.html"), fresh("missing")])

    def git_names_reference() -> Callable[[], object]:
        repo, _, _, _ = _repository()
        return lambda: (reference(repo, copied("refs/heads/main")),
                        reference(repo, copied("refs/heads/missing")))

    def references_get() -> Callable[[], object]:
        repo, _, _, _ = _repository()
        return lambda: repo.references.get(f"refs/heads/{fresh('missing')}")

    def references_get_present() -> Callable[[], object]:
        repo, _, _, _ = _repository()
        return lambda: repo.references.get(copied("refs/heads/main"))

    def lookup_branch() -> Callable[[], object]:
        repo, _, _, _ = _repository()
        return lambda: repo.branches.local.get(fresh("missing"))

    def revparse_single() -> Callable[[], object]:
        repo, _, _, _ = _repository()

        def call() -> object:
            try:
                return repo.revparse_single(f"refs/heads/{fresh('missing')}")
            except KeyError:
                return None

        return call

    def repo_get() -> Callable[[], object]:
        repo, _, commit, _ = _repository()
        return lambda: repo.get(copied(commit))

    def odb_read() -> Callable[[], object]:
        repo, _, _, blob = _repository()
        hex_id = str(blob)
        return lambda: repo.odb.read(copied(hex_id))

    def treebuilder_get() -> Callable[[], object]:
        repo, tree, _, _ = _repository()
        builder = repo.TreeBuilder(tree)
        return lambda: builder.get(fresh("missing"))

    def treebuilder_remove() -> Callable[[], object]:
        repo, tree, _, _ = _repository()

        def call() -> object:
            builder = repo.TreeBuilder(tree)
            builder.remove(fresh("present7"))
            return builder

        return call

    def treebuilder_insert() -> Callable[[], object]:
        repo, _, _, blob = _repository()
        builder = repo.TreeBuilder()
        return lambda: builder.insert(fresh("new"), blob, FileMode.BLOB)

    def index_contains() -> Callable[[], object]:
        repo, _, _, _ = _repository()
        index = pygit2.Index(str(Path(repo.path) / "index"))
        return lambda: fresh("missing") in index

    def config_get() -> Callable[[], object]:
        repo, _, _, _ = _repository()
        config = repo.config
        return lambda: fresh("memhtml.missing") in config

    def transaction_lock() -> Callable[[], object]:
        repo, _, _, _ = _repository()

        def call() -> object:
            with repo.transaction() as txn:
                txn.lock_ref(copied("refs/heads/main"))
            return None

        return call

    return {f.__name__: f for f in (
        tree_contains, tree_contains_present, tree_getitem, tree_getitem_present,
        tree_divide, treebuilder_get, treebuilder_remove, references_get,
        references_get_present, tree_entries, git_names_tree_entry, git_names_entry_at,
        git_names_tree_without, git_names_reference, lookup_branch, revparse_single,
        repo_get, odb_read, treebuilder_insert, index_contains, config_get,
        transaction_lock)}


def measure(name: str, calls: int) -> float:
    """Bytes of RSS growth per call of case ``name``, in this process."""
    call = cases()[name]()
    for _ in range(WARMUP):
        call()
    before = rss_kb()
    for _ in range(calls):
        call()
    return (rss_kb() - before) * 1024 / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("names", nargs="*", help="cases to run (default: all)")
    options = parser.parse_args()
    if options.one:
        print(measure(options.one, options.calls))
        return
    names = options.names or list(cases())
    print(f"pygit2 {version('pygit2')} (libgit2 {pygit2.LIBGIT2_VERSION}), "
          f"{options.calls:,} calls a case, a fresh name each call")
    for name in names:
        done = subprocess.run([sys.executable, "-m", "bench.pygit2_leaks", "--one", name,
                               "--calls", str(options.calls)],
                              check=True, capture_output=True, text=True)
        per_call = float(done.stdout.strip())
        verdict = "LEAKS" if per_call > LEAK_BYTES else "flat"
        print(f"  {name:26} {per_call:8.1f} bytes/call   {verdict}", flush=True)


if __name__ == "__main__":
    main()
