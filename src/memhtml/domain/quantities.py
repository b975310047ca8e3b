"""The numbers a claim states, by value: what the merge veto's numeric predicate compares.

Two statements of one fact write their numbers as they come: "40 minutes" and "forty
minutes", "02:00 UTC" and "2 AM UTC", "1,000 rows" and "one thousand rows", "an hour"
and "60 minutes". Compared as tokens, each of those read as a changed number and the
veto refused a true paraphrase; and "forty" against "fifty", holding no digit, passed
as no number at all. So each number is read as a value with what it measures:

- a time of day (``02:00``, ``2 am``, ``2:30 p.m.``, ``two o'clock``, ``noon``,
  ``midnight``) is ``time:HH:MM`` on a 24-hour clock;
- a duration (a number before ``ms``/``s``/``sec``/``min``/``h``/``hr``/``day``/``week``
  and their plurals, or ``an hour``) is ``dur:<seconds>``; months and years are
  ``mon:<months>``; a percentage (``%``, ``percent``) is ``pct:<value>``; a size
  (``kb``, ``mb``, ``gb``, ``tb``, bytes) is ``size:<value><unit>``, not converted;
- any other whole number, in digits (``1,000``, ``007``) or in words (``forty-two``,
  ``a hundred and five``, ``a dozen``), is ``n:<value>``; an ordinal in digits
  (``3rd``) is ``ord:<value>``;
- everything else holding a digit (a version ``v2.10``, a decimal ``1.10`` with no
  unit, a code ``e42``) stays the literal token ``lit:<token>``, since "1.10" and
  "1.1" are two versions.

Nothing is read from context beyond the next word, and nothing is guessed: "one"
alone is a determiner or a pronoun ("as one study puts it", "one of", "no one"), a
number only before a unit or a clock word or inside a longer number, so "1 replica"
against "one replica" is still refused; "second" is a unit only after a number. A
flip still fires: any changed value, unit, time or literal gives another set.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Final

UNITS: Final[dict[str, tuple[str, Decimal]]] = {
    **dict.fromkeys(("ms", "msec", "millisecond", "milliseconds"), ("dur", Decimal("0.001"))),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), ("dur", Decimal(1))),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), ("dur", Decimal(60))),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), ("dur", Decimal(3600))),
    **dict.fromkeys(("d", "day", "days"), ("dur", Decimal(86400))),
    **dict.fromkeys(("wk", "wks", "week", "weeks"), ("dur", Decimal(604800))),
    **dict.fromkeys(("month", "months"), ("mon", Decimal(1))),
    **dict.fromkeys(("yr", "yrs", "year", "years"), ("mon", Decimal(12))),
    **dict.fromkeys(("%", "percent", "pct"), ("pct", Decimal(1))),
}  # fmt: skip
"""A unit word after a number: the kind of quantity and its factor to the kind's base
unit (seconds, months, percent)."""

A_UNIT: Final = frozenset({"millisecond", "minute", "hour", "day", "week", "month", "year"})
"""Units that "a" or "an" counts one of ("an hour", "a week"); "a second" is an
ordinal as often as a unit, so it is not among them."""
LONE_NOT_UNITS: Final = frozenset({"s", "d"})

SIZES: Final[dict[str, str]] = {
    "b": "b", "byte": "b", "bytes": "b", "kb": "kb", "kib": "kib", "mb": "mb",
    "mib": "mib", "gb": "gb", "gib": "gib", "tb": "tb", "tib": "tib",
}  # fmt: skip
"""Sizes keep their unit as written (a KB is 1,000 or 1,024 bytes by who writes it)."""

ONES: Final[dict[str, int]] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
SCALES: Final[dict[str, int]] = {"hundred": 100, "thousand": 1_000, "million": 1_000_000,
                                 "billion": 1_000_000_000}
DOZEN: Final = "dozen"
MERIDIEM: Final = {"am": 0, "pm": 12}
NAMED_TIMES: Final = {"noon": (12, 0), "midday": (12, 0), "midnight": (0, 0)}

_PRE: Final = (
    (re.compile(r"\ba\.m\.?"), "am"),
    (re.compile(r"\bp\.m\.?"), "pm"),
    (re.compile(r"\bo['\u2019]?clock\b"), "oclock"),
    (re.compile(r"\bper\s+cent\b"), "percent"),
)
_TOKEN: Final = re.compile(r"\d{1,3}(?:,\d{3})+(?![\d,])|[a-z0-9]+(?:[.:][0-9]+)*|%")
_CLOCK: Final = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?")
_WHOLE: Final = re.compile(r"\d+|\d{1,3}(?:,\d{3})+")
_DECIMAL: Final = re.compile(r"\d+\.\d+")
_SUFFIXED: Final = re.compile(r"(\d+(?:\.\d+)?)([a-z]+)")
_ORDINAL: Final = frozenset({"st", "nd", "rd", "th"})
_STARTS: Final = frozenset({*ONES, *SCALES, DOZEN, "a", "an"})
"""Words a run of number words may start with."""


def _number(value: Decimal) -> str:
    """A value's one spelling: no exponent, no trailing zeros."""
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _time(hour: int, minute: int, meridiem: str | None) -> str | None:
    if meridiem is not None:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + MERIDIEM[meridiem]
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return f"time:{hour:02d}:{minute:02d}"


def _joins(current: int, word: str) -> bool:
    """Whether ``word`` continues the number read so far ("forty" then "two") rather
    than starting another ("five" then "six", "ten" then "twenty")."""
    last, value = current % 100, ONES[word]
    if value >= 10:
        return last == 0
    return last % 10 == 0 and not 10 <= last < 20


def _words(tokens: Sequence[str], start: int) -> tuple[int, int] | None:
    """The value of the run of number words at ``start`` and where it ends, or None.
    "a" or "an" before a scale or "dozen" counts one of it ("a hundred"); "and" joins
    only after a scale ("a hundred and five", never "one and two")."""
    total = current = 0
    seen = False
    n = start
    while n < len(tokens):
        word = tokens[n]
        nxt = tokens[n + 1] if n + 1 < len(tokens) else ""
        if word in ONES:
            if seen and not _joins(current, word):
                break
            current += ONES[word]
        elif word in SCALES:
            if SCALES[word] == 100:
                current = max(current, 1) * 100
            else:
                total += max(current, 1) * SCALES[word]
                current = 0
        elif word == DOZEN:
            current = max(current, 1) * 12
        elif word in ("a", "an") and not seen and (nxt in SCALES or nxt == DOZEN):
            pass
        elif word == "and" and seen and (current >= 100 or total) and nxt in ONES:
            n += 1
            continue
        else:
            break
        seen = seen or word not in ("a", "an")
        n += 1
    return (total + current, n) if seen else None


def _lone_one(tokens: Sequence[str], start: int, end: int) -> bool:
    """A bare "one" that counts nothing: "one" alone is a determiner or a pronoun far
    more often than a count ("as one study puts it", "one of the replicas", "no one"),
    so it is a number only before a unit, a size or a clock word ("one hour", "one
    o'clock") or inside a longer number ("one hundred", "twenty-one")."""
    if end != start + 1 or tokens[start] != "one":
        return False
    after = tokens[end] if end < len(tokens) else ""
    return not (after in UNITS or after in SIZES or after in MERIDIEM or after == "oclock")


def _quantity(value: Decimal, unit: str | None, written_on: bool = False) -> str | None:
    """``value`` read with the unit word after it; None when that word is no unit. A
    lone "s" or "d" is a unit only written on the number ("30s"): as a word it is
    more often a possessive or an initial."""
    if unit is None or (not written_on and unit in LONE_NOT_UNITS):
        return None
    if unit in UNITS:
        kind, factor = UNITS[unit]
        return f"{kind}:{_number(value * factor)}"
    if unit in SIZES:
        return f"size:{_number(value)}{SIZES[unit]}"
    return None


def _counted(tokens: Sequence[str], value: Decimal, after: int) -> tuple[str, int]:
    """A number followed by what may say what it counts: a time, a unit, or a count."""
    nxt = tokens[after] if after < len(tokens) else None
    whole = value == value.to_integral_value()
    if nxt in MERIDIEM and whole:
        found = _time(int(value), 0, nxt)
        if found is not None:
            return found, after + 1
    if nxt == "oclock" and whole:
        found = _time(int(value), 0, None)
        if found is not None:
            return found, after + 1
    quantity = _quantity(value, nxt)
    if quantity is not None:
        return quantity, after + 1
    return f"n:{_number(value)}", after


def quantities(text: str) -> frozenset[str]:
    """Every number ``text`` states, each as one canonical string (see the module)."""
    folded = text.lower()
    for pattern, replacement in _PRE:
        folded = pattern.sub(replacement, folded)
    tokens = _TOKEN.findall(folded)
    found: set[str] = set()
    n = 0
    while n < len(tokens):
        token = tokens[n]
        nxt = tokens[n + 1] if n + 1 < len(tokens) else None
        if token in NAMED_TIMES:
            found.add(_time(*NAMED_TIMES[token], None) or token)
            n += 1
            continue
        clock = _CLOCK.fullmatch(token)
        if clock is not None:
            meridiem = nxt if nxt in MERIDIEM else None
            time = None if clock.group(3) not in (None, "00") else _time(
                int(clock.group(1)), int(clock.group(2)), meridiem)
            if time is not None:
                found.add(time)
                n += 2 if meridiem else 1
            else:
                found.add(f"lit:{token}")
                n += 1
            continue
        if _WHOLE.fullmatch(token):
            value, n = _counted(tokens, Decimal(token.replace(",", "")), n + 1)
            found.add(value)
            continue
        if _DECIMAL.fullmatch(token):
            quantity = _quantity(Decimal(token), nxt)
            found.add(quantity if quantity is not None else f"lit:{token}")
            n += 2 if quantity is not None else 1
            continue
        suffixed = _SUFFIXED.fullmatch(token)
        if suffixed is not None:
            found.add(_suffixed(suffixed.group(1), suffixed.group(2), token))
            n += 1
            continue
        if any(c.isdigit() for c in token):
            found.add(f"lit:{token}")
            n += 1
            continue
        if token in ("a", "an") and nxt in A_UNIT:
            found.add(_quantity(Decimal(1), nxt) or nxt)
            n += 2
            continue
        words = _words(tokens, n) if token in _STARTS else None
        if words is not None and not _lone_one(tokens, n, words[1]):
            value, n = _counted(tokens, Decimal(words[0]), words[1])
            found.add(value)
            continue
        n += 1
    return frozenset(found)


def _suffixed(digits: str, suffix: str, token: str) -> str:
    """A number with its unit, ordinal or meridiem written on: "30s", "3rd", "2am"."""
    try:
        value = Decimal(digits)
    except InvalidOperation:  # pragma: no cover - the pattern admits digits only
        return f"lit:{token}"
    whole = "." not in digits
    if suffix in MERIDIEM and whole:
        return _time(int(digits), 0, suffix) or f"lit:{token}"
    if suffix in _ORDINAL and whole:
        return f"ord:{int(digits)}"
    if suffix == "s" and len(digits) == 4 and digits.endswith("0"):
        return f"lit:{token}"  # a decade, "the 1990s"
    return _quantity(value, suffix, written_on=True) or f"lit:{token}"
