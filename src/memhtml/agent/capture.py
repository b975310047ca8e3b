"""Capture: a finished (or compacting) session's transcript, made ready for the
nightly run to distil.

``memhtml capture`` copies an agent's session transcript (JSON lines: one message a
line, as Claude Code writes it and ``sleep.phases.trace_sessions`` reads it) into the
``transcripts_dir`` the sleep run reads, as ``<session>.jsonl``. Redacted on the way
(``agent.redact``): every string value of every line, so each line stays the JSON it
was; a line that is not JSON is redacted as text. With ``end``, a ``session_end``
line is added, which tells the night the session is over (otherwise it waits for the
file to settle). Captured again, the same session is the same file: a later capture
of a longer transcript replaces it, an identical one writes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final

from memhtml.agent.redact import may_hold_secret, redact_json, redact_text

SESSION_END_LINE: Final = b'{"type":"session_end"}'
CAPTURE_MAX_BYTES: Final = 64 * 1024 * 1024
"""The largest transcript capture reads: past it, a clear refusal rather than a
process holding it all in memory."""


@dataclass(frozen=True, slots=True)
class Prepared:
    data: bytes
    lines: int
    redacted: int
    """Secrets replaced, over every line."""
    unparsed: int
    """Lines that were not JSON, redacted as text."""


def prepare(source: bytes, *, end: bool = False) -> Prepared:
    """``source``'s lines redacted, one JSON line each, and the end line when ``end``
    (once: a transcript that already ends the session is not ended twice)."""
    out: list[bytes] = []
    redacted = unparsed = 0
    ended = False
    for raw in source.split(b"\n"):
        if not raw.strip():
            continue
        text = raw.decode("utf-8", "replace")
        if not may_hold_secret(text) and "session_end" not in text:
            # Nothing any rule could match: the line as it came (most of a session).
            out.append(text.strip().encode("utf-8"))
            continue
        try:
            parsed = json.loads(text)
            clean, count = redact_json(parsed)
            line = json.dumps(clean, ensure_ascii=False, separators=(",", ":"))
        except (ValueError, RecursionError):
            unparsed += 1
            line, count = redact_text(text)
        else:
            ended = ended or (isinstance(parsed, dict) and parsed.get("type") == "session_end")
        redacted += count
        try:
            out.append(line.encode("utf-8"))
        except UnicodeEncodeError:
            # Half a surrogate pair (a transcript cut mid-character): JSON's own escape
            # keeps the line JSON and the file UTF-8.
            # (Only a JSON line can hold one: text lines were decoded with replacement.)
            out.append(json.dumps(json.loads(line), ensure_ascii=True,
                                  separators=(",", ":")).encode("ascii"))
    if end and not ended:
        out.append(SESSION_END_LINE)
    data = b"\n".join(out) + (b"\n" if out else b"")
    return Prepared(data, len(out), redacted, unparsed)


__all__ = ["CAPTURE_MAX_BYTES", "Prepared", "prepare"]
