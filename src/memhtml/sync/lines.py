"""A clean line-level three-way merge for the store's plain files, or nothing.

A settings file such as ``.memhtml/config.toml`` changed on two clones usually
changed in two places: both edits apply. When the edits touch or overlap, there is
no answer a machine should pick by itself and nothing a person could read in a
file with conflict markers in it, so this returns None and the caller keeps one
whole version (the other stays in history).
"""

from __future__ import annotations

from difflib import SequenceMatcher

Hunk = tuple[int, int, tuple[bytes, ...]]
"""Base lines ``[start, end)`` replaced by these lines."""


def _hunks(base: list[bytes], side: list[bytes]) -> list[Hunk]:
    matcher = SequenceMatcher(None, base, side, autojunk=False)
    return [(i1, i2, tuple(side[j1:j2]))
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def merge_lines(base: bytes, one: bytes, two: bytes) -> bytes | None:
    """Both sides' line edits applied to ``base``, or None when any two edits from
    different sides overlap or touch.

    Touching counts as a conflict (two insertions at one line, an insertion right at
    the other's edit): applying both would need an order, and any order picked would
    make the merge depend on which side is which. An identical edit on both sides is
    one edit. Symmetric in ``one`` and ``two`` by construction.
    """
    lines = base.splitlines(keepends=True)
    first = _hunks(lines, one.splitlines(keepends=True))
    both = _hunks(lines, two.splitlines(keepends=True))
    # A hunk both sides made is kept once (in ``first``); the rest of each side's
    # hunks must stay clear of the other's. Hunks of one side never touch each other.
    second = [h for h in both if h not in first]
    own = [h for h in first if h not in both]
    for a_start, a_end, _ in own:
        for b_start, b_end, _ in second:
            if a_start <= b_end and b_start <= a_end:
                return None
    out: list[bytes] = []
    at = 0
    for start, end, replacement in sorted(first + second):
        out.extend(lines[at:start])
        out.extend(replacement)
        at = end
    out.extend(lines[at:])
    return b"".join(out)
