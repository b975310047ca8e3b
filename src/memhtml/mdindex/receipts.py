"""Receipts as text: one line a person can read and a script can split.

The line is ``key=value`` fields separated by single spaces, then the quoted
snippet last::

    score=7.4213 score-channel=bm25 fused=0.016393 class=notes name=wind-log
    type=measured at=notes/wind.md:12 snippet="the anemometer is reliable…"

(shown wrapped here; it is one line). ``at`` is ``file:line``, the 1-based
line where the quoted paragraph starts, so an editor opens the file there.

Values never contain a space, a backslash or a control character (they are
escaped as ``\\x20``, ``\\\\``, ``\\xNN``), an absent value prints ``-`` rather
than a made-up zero, and the snippet is a JSON string literal, so
``line.split(" snippet=", 1)`` and ``json.loads`` recover every field.
"""

from __future__ import annotations

import json
from typing import TypeAlias

from memhtml.mdindex.fusion import FileHit

JSONScalar: TypeAlias = str | int | float | None

ABSENT = "-"


def _escape(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _field(value: str | None) -> str:
    if not value:
        return ABSENT
    out: list[str] = []
    for char in value:
        if char == "\\":
            out.append("\\\\")
        elif char == " " or not char.isprintable():
            out.append(_escape(ord(char)))
        else:
            out.append(char)
    return "".join(out)


def format_receipt(hit: FileHit) -> str:
    """The receipt line for one hit."""
    native = ABSENT if hit.native is None else f"{hit.native:.4f}"
    return (
        f"score={native} score-channel={_field(hit.native_channel)} fused={hit.fused:.6f}"
        f" class={_field(hit.class_)} name={_field(hit.fm_name)} type={_field(hit.fm_type)}"
        f" at={_field(hit.file)}:{hit.line}"
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
