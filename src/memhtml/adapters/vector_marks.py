"""The coverage claim a vector set keeps beside its manifest (``covers.json``).

A command that finds the set holding every passage of a version records it here
(``VectorCacheStore.mark_covered``), so the next write or search at that version, or
at one a few paths away from it, learns what the set lacks from those paths alone
instead of walking every record (at 5,000 memories the walk was about 40 ms of a cold
write). The claim names the set's state it was made about (``SetStamp``: the parts
it was read from); a part's name is never given again, so a set repaired, folded,
merged or restored from an older copy since no longer lists one of them, and the
claim lapses for good: nothing has to remember to remove it, and no later save can
bring it back by adding other rows.

The file is a hint, never a source of truth: it is written without ``fsync`` (a claim
lost to a crash costs one walk), and one that is not a regular file, not JSON of the
expected shape, or about another state of the set is ignored. It lives under the git
directory with the vectors (this clone's own state), so a cloned or pulled repository
cannot supply one.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

from memhtml.contracts.local_files import read_regular, write_replacing
from memhtml.contracts.vectors import Covering, SetStamp

MARK = "covers.json"
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_MARK_BYTES = 4096
"""A mark names a set's parts (a base and at most ``Compaction.max_segments``
segments, 21 characters each): about 600 bytes at most; anything much larger is not
one and is not read whole."""


def stands(covering: Covering, stamp: SetStamp | None) -> bool:
    """Whether a claim made about ``covering.stamp`` holds of the set as ``stamp``
    describes it: the set still lists every part the claim names (their rows are
    unchanged, so it holds them all). A claim about no set (``NO_SET``) holds of any;
    only a save makes one, and records it for the set as saved (``write_mark`` never
    records it as such)."""
    if stamp is None:
        return False
    listed = set(stamp.parts)
    return all(part in listed for part in covering.stamp.parts)


def read_mark(folder: Path) -> Covering | None:
    """The claim recorded in ``folder``; None when there is none or it is not one."""
    path = folder / MARK
    try:
        data = read_regular(path, limit=_MARK_BYTES)
        found = json.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(found, dict):
        return None
    commit, parts = found.get("commit"), found.get("parts")
    if not isinstance(commit, str) or _COMMIT.fullmatch(commit) is None \
            or not isinstance(parts, list) or not parts \
            or not all(isinstance(part, str) and part for part in parts):
        return None  # a claim about no part at all would stand of every set: not one
    return Covering(commit, SetStamp(tuple(parts)))


def covers(folder: Path, stamp: SetStamp | None) -> str | None:
    """The commit the claim in ``folder`` names, when it holds of ``stamp``."""
    if stamp is None:
        return None
    mark = read_mark(folder)
    return mark.commit if mark is not None and stands(mark, stamp) else None


def write_mark(folder: Path, covering: Covering) -> None:
    """Record ``covering`` in ``folder``, replacing the claim there (never written
    through whatever stands at its name), so a reader sees the old claim or the new."""
    if not covering.stamp.parts:
        raise ValueError("a claim is recorded about a set's parts, not about no set")
    data = json.dumps({"commit": covering.commit, "parts": list(covering.stamp.parts)},
                      sort_keys=True).encode("ascii")
    # One temporary per process and thread: two threads of a server recording claims at
    # once must not remove or rename each other's half-written file.
    temporary = folder / f".{MARK}.{os.getpid()}.{threading.get_ident()}.tmp"
    write_replacing(folder / MARK, data, temporary, mode=0o600)
