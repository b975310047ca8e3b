"""Receipts as text: one line a person can read and a script can split.

The line is ``key=value`` fields separated by single spaces, then the quoted
snippet last::

    score=7.4213 score-channel=bm25 fused=0.016393 class=notes name=wind-log
    type=measured at=notes/wind.md:12 snippet="the anemometer is reliable…"

(shown wrapped here; it is one line). ``at`` is ``file:line``, the 1-based
line where the quoted paragraph starts, so an editor opens the file there.

A value is printed as it is when it holds no whitespace, quote, backslash or control
character, and as a JSON string literal when it does (``name="Deploy checklist"``, a
name as a person reads it; the escapes a JSON literal needs are the only ones). An
absent value prints ``-`` rather than a made-up zero, and the snippet is a JSON string
literal, so a line splits with ``shlex``-like care, or ``split_receipt``, and
``json.loads`` recovers each quoted field.
"""

from __future__ import annotations

import json
import re
from typing import TypeAlias

from memhtml.mdindex.fusion import FileHit

JSONScalar: TypeAlias = str | int | float | None

ABSENT = "-"


_QUOTE_NEEDED = re.compile(r'[\s"\\]')


def _field(value: str | None) -> str:
    if not value:
        return ABSENT
    if _QUOTE_NEEDED.search(value) is None and value.isprintable() and value != ABSENT:
        return value
    return json.dumps(value, ensure_ascii=False)


_FIELD = re.compile(r'([A-Za-z-]+)=("(?:[^"\\]|\\.)*"|\S*)')


def split_receipt(line: str) -> dict[str, str]:
    """The fields of a receipt line, each quoted value read back as the text it
    stands for (the inverse of ``format_receipt`` for every field)."""
    fields: dict[str, str] = {}
    for hit in _FIELD.finditer(line):
        raw = hit.group(2)
        fields[hit.group(1)] = json.loads(raw) if raw.startswith('"') else raw
    return fields


def format_receipt(hit: FileHit) -> str:
    """The receipt line for one hit."""
    native = ABSENT if hit.native is None else f"{hit.native:.4f}"
    return (
        f"score={native} score-channel={_field(hit.native_channel)} fused={hit.fused:.6f}"
        f" class={_field(hit.class_)} name={_field(hit.fm_name)} type={_field(hit.fm_type)}"
        f" at={_field(f'{hit.file}:{hit.line}')}"
        f" snippet={json.dumps(hit.snippet, ensure_ascii=False)}"
    )


def to_dict(hit: FileHit) -> dict[str, JSONScalar]:
    """The hit as a flat JSON-ready mapping; ``class_`` is spelled ``class``."""
    return {
        "file": hit.file,
        "para": hit.para,
        "line": hit.line,
        "class": hit.class_,
        "fm_name": hit.fm_name,
        "fm_type": hit.fm_type,
        "snippet": hit.snippet,
        "fused": hit.fused,
        "native": hit.native,
        "native_channel": hit.native_channel,
    }


def to_json(hit: FileHit) -> str:
    """The hit as one line of canonical JSON (sorted keys), for JSON Lines output."""
    return json.dumps(to_dict(hit), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
