"""The two datetime forms the format admits, and the root-relative href form.

Event, due and validity times are compared and ordered as raw strings, so every
admitted value must sort lexicographically the way it sorts in time. That rules
out space separators, offsets other than ``Z``, optional seconds and fractions
(``00.5Z`` would sort before ``00Z``).
"""

from __future__ import annotations

import re
from datetime import date, datetime

_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_INSTANT = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z")
_SEGMENT_FORBIDDEN = frozenset({"", ".", ".."})


def is_valid_datetime(value: str) -> bool:
    """True for ``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM:SSZ`` naming a real date and time."""
    match = _INSTANT.fullmatch(value) or _DATE.fullmatch(value)
    if match is None:
        return False
    fields = [int(g) for g in match.groups()]
    try:
        if len(fields) == 3:
            date(fields[0], fields[1], fields[2])
        else:
            datetime(fields[0], fields[1], fields[2], fields[3], fields[4], fields[5])
    except ValueError:
        return False
    return fields[0] >= 1


def is_root_relative_href(href: str) -> bool:
    """True for a repo-root-relative document reference: ``/a/b.html``.

    No scheme, no host, no ``.``/``..`` or empty segment, no backslash, query,
    fragment or whitespace. A relative href would break on the first ``git mv``
    of the file holding it, and a protocol-relative ``//host/x`` would silently
    leave the repository, so both are refused rather than normalized.
    """
    if not href.startswith("/") or href.startswith("//"):
        return False
    if any(ch in href for ch in "\\?#") or any(ch.isspace() or ord(ch) < 0x20 for ch in href):
        return False
    return not any(seg in _SEGMENT_FORBIDDEN for seg in href[1:].split("/"))
