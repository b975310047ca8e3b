"""The token space: how raw markdown becomes normalized text and terms.

Together with the chunking rules in ``corpus`` this is what ``SCHEMA_VERSION``
names, so any change here is a schema change.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import filterfalse

# Markup that is always a word boundary: emphasis, code, blockquote, table,
# link and strikethrough punctuation. Each becomes a space rather than being
# deleted, so ``[Deleted thing](gone.md)`` reads "deleted thing gone.md" and not
# "deleted thinggone.md": a marker may split a phrase, it may never glue two
# words into a third that nobody would search for.
_MARKERS = "*`>|[]()~"
_SPACE_MARKERS = str.maketrans(dict.fromkeys(_MARKERS, " "))

# ``_`` and ``#`` are markup at a word's edge and part of the word inside it:
# ``__bold__`` and ``# Heading`` lose them, ``snake_case`` and ``C#`` keep them.
# ``#`` before a letter (``[[note#section]]``, ``#tag``) is a boundary too.
# Both patterns open on the literal character, which lets the regex engine
# skip to it instead of trying every position.
_EDGE_UNDERSCORE = re.compile(r"_(?:(?<![^\W_]_)|(?![^\W_]))")
_LOOSE_HASH = re.compile(r"#(?:(?<![^\W_]#)|(?=[^\W_]))")
_ASCII_EDGE_UNDERSCORE = re.compile(rb"_(?:(?<![^\W_]_)|(?![^\W_]))")
_ASCII_LOOSE_HASH = re.compile(rb"#(?:(?<![^\W_]#)|(?=[^\W_]))")

# A part is a run of letters, digits and apostrophes with the apostrophes at
# either end trimmed, kept only when two or more characters remain; anchoring
# the pattern on an alphanumeric at both ends does the trim and the length
# floor in one pass.
_PART = re.compile(r"[^\W_](?:[^\W_]|')*[^\W_]")

# Characters that join parts into one code-ish word (``src/mod_a/file_b.py``,
# ``e-mail``, ``C#``, ``c++``, ``user@host``, ``11:00``). A word holding one is
# indexed whole and split level by level, so it is found by its whole spelling
# and by each piece.
_JOINERS = "_./:@-#+"
_EDGE_JOINERS_LEAD = "./:@-'_#+"
_EDGE_JOINERS_TAIL = "./:@-'_"
_JOINER = re.compile(r"[_./:@#+\-]")
_INNER_JOINER = re.compile(r"[_#+]")
_SEGMENT_SPLIT = re.compile(r"[/:@]")
_PIECE_SPLIT = re.compile(r"[.\-]")

# bytes.split() knows only six ASCII whitespace characters; str.split() also
# splits on the four information separators, so they become spaces first.
_ASCII_SEPARATORS = bytes.maketrans(
    b"\x1c\x1d\x1e\x1f" + _MARKERS.encode("ascii"), b" " * (4 + len(_MARKERS))
)
_ASCII_PART_BYTES = (
    bytes(byte if chr(byte).isalnum() or chr(byte) == "'" else ord(" ") for byte in range(128))
    + b" " * 128
)
# Everything but alphanumerics, apostrophes and joiners becomes a space: what
# is left of a word that is not purely alphanumeric is a compound candidate.
_ASCII_WORD_BYTES = (
    bytes(
        byte if chr(byte).isalnum() or chr(byte) in "'" + _JOINERS else ord(" ")
        for byte in range(128)
    )
    + b" " * 128
)
_NOT_WORD = re.compile(r"[^\w'./:@\-#+]+")

ELLIPSIS = "…"


def normalize(text: str) -> str:
    """Turn markdown markers into spaces, collapse whitespace to single spaces, casefold.

    The order matters. Collapsing whitespace first would join a wrapped
    blockquote into one line with its ``>`` markers left standing between the
    words, so the recovered phrase would still not match; replacing the markers
    first leaves only whitespace to collapse. A marker becomes a space rather
    than nothing: it can separate words, never join them.
    """
    if text.isascii():
        # Same result through bytes methods, which run several times faster
        # than their str counterparts; ASCII is most of any English corpus and
        # the build normalizes every paragraph of it.
        raw = text.encode("ascii").translate(_ASCII_SEPARATORS)
        if b"_" in raw:
            raw = _ASCII_EDGE_UNDERSCORE.sub(b" ", raw)
        if b"#" in raw:
            raw = _ASCII_LOOSE_HASH.sub(b" ", raw)
        return b" ".join(raw.split()).lower().decode("ascii")
    return normalize_general(text)


def normalize_general(text: str) -> str:
    """``normalize`` without the ASCII fast path: the reference the fast path must equal."""
    spaced = text.translate(_SPACE_MARKERS)
    if "_" in spaced:
        spaced = _EDGE_UNDERSCORE.sub(" ", spaced)
    if "#" in spaced:
        spaced = _LOOSE_HASH.sub(" ", spaced)
    return " ".join(spaced.split()).casefold()


@lru_cache(maxsize=1 << 16)
def _compound_terms(word: str) -> tuple[str, ...]:
    """The whole word and its joined pieces, for a word holding a joiner.

    Levels: the whole (``src/mod_a/file_b.py``), its path segments
    (``file_b.py``), their dotted or hyphenated pieces (``file_b``); the plain
    alphanumeric parts are counted by the caller. Only pieces that still hold
    a joiner are returned, so no term is counted twice.
    """
    whole = word.lstrip(_EDGE_JOINERS_LEAD).rstrip(_EDGE_JOINERS_TAIL)
    if len(whole) < 2 or whole.isalnum() or _JOINER.search(whole) is None:
        return ()
    found = [whole]
    segments = [whole]
    if _SEGMENT_SPLIT.search(whole):
        segments = [s.strip(_EDGE_JOINERS_TAIL) for s in _SEGMENT_SPLIT.split(whole)]
        found += [s for s in segments if len(s) > 1 and _JOINER.search(s)]
    for segment in segments:
        if _PIECE_SPLIT.search(segment):
            pieces = (p.strip(_EDGE_JOINERS_TAIL) for p in _PIECE_SPLIT.split(segment))
            found += [p for p in pieces if len(p) > 1 and _INNER_JOINER.search(p)]
    return tuple(dict.fromkeys(found))


def tokenize_normalized(normalized: str) -> list[str]:
    """The terms of text that has already been through ``normalize``.

    Every alphanumeric part of two or more characters is a term; a word that
    joins parts with ``_ . / : @ - # +`` is also a term whole, and so is each
    joined piece of it (see ``_compound_terms``). ``src/mod_a/file_b.py`` is
    found by its whole path, by ``file_b.py``, ``mod_a``, ``file_b`` and by
    ``src``, ``mod``, ``file`` and ``py``; ``C#`` by ``c#``.
    """
    if normalized.isascii():
        encoded = normalized.encode("ascii")
        # The ASCII equivalent of ``_PART``: every byte that is neither an
        # alphanumeric nor an apostrophe becomes a space, then runs are
        # trimmed of apostrophes and filtered by length.
        words = encoded.translate(_ASCII_PART_BYTES).decode("ascii").split()
        if "'" in normalized:
            words = [w.strip("'") for w in words]
        terms = [w for w in words if len(w) > 1]
        joined = encoded.translate(_ASCII_WORD_BYTES).decode("ascii")
        return terms + _all_compound_terms(joined)
    return tokenize_general(normalized)


def tokenize_general(normalized: str) -> list[str]:
    """``tokenize_normalized`` without the ASCII fast path, its reference."""
    return _PART.findall(normalized) + _all_compound_terms(_NOT_WORD.sub(" ", normalized))


def _all_compound_terms(words: str) -> list[str]:
    terms: list[str] = []
    # Most words are plain; ``isalnum`` runs in C and leaves only the joined
    # ones (and the apostrophed) for the slower look.
    for word in filterfalse(str.isalnum, words.split()):
        terms += _compound_terms(word)
    return terms


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
