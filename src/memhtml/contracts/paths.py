"""The two spellings of a memory path, and the checks that keep a path inside the store.

A link ``href`` is the *document* form, root-relative with a leading slash
(``/areas/deploy/x.html``) because a browser resolves it against the published
site. Git trees and the head's record map use the *tree* form without it
(``areas/deploy/x.html``). Conversion happens at the store boundary only.
"""

from __future__ import annotations

from returns.result import Failure, Result, Success

from memhtml.contracts.errors import PathRefused

_FORBIDDEN_SEGMENTS = frozenset({"", ".", ".."})


def to_tree_path(document_path: str) -> str:
    """``/a/b.html`` -> ``a/b.html``. A tree path passes through unchanged."""
    return document_path[1:] if document_path.startswith("/") else document_path


def to_document_path(tree_path: str) -> str:
    """``a/b.html`` -> ``/a/b.html``. A document path passes through unchanged."""
    return tree_path if tree_path.startswith("/") else "/" + tree_path


def check_tree_path(path: str) -> Result[str, PathRefused]:
    """Accept a relative, slash-separated path that stays inside the store.

    Refused: absolute paths, backslashes, ``.``/``..``/empty segments, NUL and
    control characters, and anything under ``.git``. These are the spellings that
    would let a write land outside the repository's tree or inside git's own
    directory, so they are refused rather than normalized.
    """
    if not path:
        return Failure(PathRefused(path, "empty path"))
    if path.startswith("/"):
        return Failure(PathRefused(path, "absolute path; give it relative to the store root"))
    if "\\" in path:
        return Failure(PathRefused(path, "backslash in path; use '/' as the separator"))
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in path):
        return Failure(PathRefused(path, "control character in path"))
    segments = path.split("/")
    if any(segment in _FORBIDDEN_SEGMENTS for segment in segments):
        return Failure(
            PathRefused(path, "empty, '.' or '..' segment: the path would leave the store")
        )
    if segments[0].lower() == ".git" or any(s.lower() == ".git" for s in segments):
        return Failure(PathRefused(path, "'.git' is git's own directory, not part of the store"))
    return Success(path)
