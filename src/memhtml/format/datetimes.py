"""The two datetime forms the format admits, and the root-relative href form.

Event, due and validity times are compared and ordered as raw strings, so every
admitted value must sort lexicographically the way it sorts in time. That rules
out space separators, offsets other than ``Z``, optional seconds and fractions
(``00.5Z`` would sort before ``00Z``).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from functools import lru_cache
from urllib.parse import unquote

_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_INSTANT = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z")
_SEGMENT_FORBIDDEN = frozenset({"", ".", ".."})
_HREF_FORBIDDEN = re.compile(r'[\s\x00-\x20\x7f-\x9f"<>\\?#]')
"""Characters a document reference never holds: whitespace and controls (a browser
strips some and keeps others, so the checker and the reader would resolve different
paths), the markup metacharacters, the backslash a browser reads as ``/``, and a
query or fragment."""


def is_valid_datetime(value: str) -> bool:
    """True for ``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM:SSZ`` naming a real date and time."""
    # Both forms are ASCII of exactly 10 or 20 characters, so nothing else can pass,
    # and only strings of those lengths reach the cache: it holds at most 4,096 short
    # strings, whatever a hostile file puts in its metas.
    return len(value) in (10, 20) and _is_valid_short(value)


@lru_cache(maxsize=4096)
def _is_valid_short(value: str) -> bool:
    """Cached because a corpus repeats its stamps (an import shares one created time,
    a day's writes share a date) and every file states four or more, so a tree load
    would otherwise build the same ``datetime`` thousands of times."""
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


def is_utc_instant(value: str) -> bool:
    """True for ``YYYY-MM-DDTHH:MM:SSZ`` naming a real instant: a write stamp's form."""
    return _INSTANT.fullmatch(value) is not None and is_valid_datetime(value)


def is_root_relative_href(href: str) -> bool:
    """True for a repo-root-relative document reference: ``/a/b.html``.

    No scheme, no host, no ``.``/``..`` or empty segment, no backslash, query,
    fragment, whitespace, control or markup character. A relative href would break
    on the first ``git mv`` of the file holding it, and a protocol-relative
    ``//host/x`` would silently leave the repository, so both are refused rather
    than normalized.

    The segments are judged as a browser resolves them and as a static server
    decodes them: a browser reads ``%2e`` as a dot, so ``/a/%2e%2e/b`` climbs out of
    ``/a`` exactly as ``/a/../b`` does, and a server that decodes ``%2f`` or ``%5c``
    before it splits the path sees separators the browser did not. So the path
    decoded once must pass the same rules as the path as written.
    """
    if not href.startswith("/") or href.startswith("//"):
        return False
    if _HREF_FORBIDDEN.search(href):
        return False
    decoded = unquote(href, errors="replace") if "%" in href else href
    if decoded != href and (decoded.startswith("//") or _HREF_FORBIDDEN.search(decoded)):
        return False
    return not any(seg in _SEGMENT_FORBIDDEN for seg in decoded[1:].split("/"))
