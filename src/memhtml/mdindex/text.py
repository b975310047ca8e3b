"""The token space: how raw markdown becomes normalized text and terms.

Together with the chunking rules in ``corpus`` this is what ``SCHEMA_VERSION``
names, so any change here is a schema change.
"""

from __future__ import annotations

import re

# Emphasis, code, blockquote, heading, table and link punctuation. Deleting
# these characters wherever they stand is deliberately blunt: a phrase split by
# ``**`` or hidden behind a ``>`` on every wrapped line must read as one run of
# words again, and markdown gives no cheaper way to know which uses are markup.
_MARKERS = "*_`>#|[]()"
_DELETE_MARKERS = str.maketrans("", "", _MARKERS)

# A term is a run of letters, digits and apostrophes with the apostrophes at
# either end trimmed, kept only when two or more characters remain; anchoring
# the pattern on a word character at both ends does the trim and the length
# floor in one pass. ``\w`` also admits ``_``, which normalized text no longer
# contains.
_TERM = re.compile(r"\w[\w']*\w")

# bytes.split() knows only six ASCII whitespace characters; str.split() also
# splits on the four information separators, so they become spaces first.
_ASCII_SEPARATORS = bytes.maketrans(b"\x1c\x1d\x1e\x1f", b"    ")
_ASCII_MARKERS = _MARKERS.encode("ascii")
_ASCII_TERM_BYTES = (
    bytes(byte if chr(byte).isalnum() or chr(byte) in "_'" else ord(" ") for byte in range(128))
    + b" " * 128
)

ELLIPSIS = "…"


def normalize(text: str) -> str:
    """Strip markdown markers, collapse whitespace to single spaces, casefold.

    The order matters. Collapsing whitespace first would join a wrapped
    blockquote into one line with its ``>`` markers left standing between the
    words, so the recovered phrase would still not match; deleting the markers
    first leaves only whitespace to collapse.
    """
    if text.isascii():
        # Same result through bytes methods, which run several times faster
        # than their str counterparts; ASCII is most of any English corpus and
        # the build normalizes every paragraph of it.
        raw = text.encode("ascii").translate(_ASCII_SEPARATORS, _ASCII_MARKERS)
        return b" ".join(raw.split()).lower().decode("ascii")
    return " ".join(text.translate(_DELETE_MARKERS).split()).casefold()


def tokenize_normalized(normalized: str) -> list[str]:
    """The terms of text that has already been through ``normalize``."""
    if normalized.isascii():
        # The ASCII equivalent of ``_TERM``: every byte that is neither a word
        # character nor an apostrophe becomes a space, then runs are trimmed of
        # apostrophes and filtered by length.
        words = normalized.encode("ascii").translate(_ASCII_TERM_BYTES).decode("ascii").split()
        if "'" in normalized:
            words = [w.strip("'") for w in words]
        return [w for w in words if len(w) > 1]
    return _TERM.findall(normalized)


def tokenize(text: str) -> list[str]:
    """Split text into terms, normalizing it first.

    There is no stemming and no stopword list: neither was needed on the
    corpus this design was measured against, and either should arrive only
    when an evaluation on the reader's own corpus shows it helps.
    """
    return tokenize_normalized(normalize(text))


def truncate(text: str, max_bytes: int) -> str:
    """Shorten text to at most ``max_bytes`` of UTF-8, then mark the cut with ``…``.

    The budget is in bytes because receipts are read as lines by scripts with
    byte limits. The cut moves back to the start of a character, so the result
    is always valid UTF-8 and a prefix of the input (plus the ellipsis, which
    the budget does not count). Text already within the budget is returned
    unchanged.
    """
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    cut = max(max_bytes, 0)
    # UTF-8 continuation bytes look like 0b10xxxxxx; step back over them.
    while cut > 0 and encoded[cut] & 0xC0 == 0x80:
        cut -= 1
    return encoded[:cut].decode("utf-8") + ELLIPSIS
