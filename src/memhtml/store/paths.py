"""Path arguments as the doors and reads take them: checked to stay inside the store.

Kept apart from the write planning so a read command can check a path without
importing the machinery that plans and lands commits.
"""

from __future__ import annotations

from returns.result import Failure, Result, Success

from memhtml.contracts.errors import PathRefused
from memhtml.contracts.paths import check_tree_path, to_tree_path
from memhtml.head.version import is_candidate_path
from memhtml.store.errors import StoreError


def tree_path(path: str) -> Result[str, StoreError]:
    """A caller's path in tree form, checked to stay inside the store. A leading
    slash is refused here: a path argument is read as a file path, and an absolute
    one names something outside the repository."""
    checked: Result[str, PathRefused] = check_tree_path(path)
    return checked.alt(lambda e: e)


def href_path(href: str) -> Result[str, StoreError]:
    """A link target in either spelling: an href is root-relative (``/a/b.html``) by
    the format's rule, so its leading slash means the store root, not the disk's."""
    return tree_path(to_tree_path(href.strip()))


def memory_path(path: str) -> Result[str, StoreError]:
    """A path a memory may be written at: inside the store and indexed by the head."""
    def candidate(tree: str) -> Result[str, StoreError]:
        if not is_candidate_path(tree):
            return Failure(PathRefused(tree, "a memory path ends in .html, is not an "
                                             "index.html and is not under .memhtml/"))
        return Success(tree)

    return tree_path(path).bind(candidate)
