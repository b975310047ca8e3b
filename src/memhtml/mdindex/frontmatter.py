"""The two frontmatter fields the index carries: ``name`` and ``type``.

Read without a YAML parser: a file that opens with a ``---`` line, then
``name:`` and ``type:`` lines anywhere before the next line starting with
``---``. Anything absent or malformed yields ``None``; parsing never fails,
because the index surfaces what the corpus already says and requires nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

_FENCE = "---"


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """What a file's frontmatter says; ``None`` where it says nothing."""

    name: str | None = None
    type: str | None = None


NO_FRONTMATTER = Frontmatter()


def _value(raw: str) -> str | None:
    value = raw.strip()
    # One pair of matching quotes is YAML spelling, not part of the name; a
    # wikilink written to a quoted name must still resolve.
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1].strip()
    return value or None


def parse_frontmatter(text: str) -> Frontmatter:
    """The first ``name:`` and ``type:`` of the leading frontmatter block.

    CRLF line endings are accepted: a checkout on Windows writes them, and a
    fence read as ``---\\r`` would otherwise make every file look as if it had
    no frontmatter at all, which reads as a corpus fault rather than a
    line-ending one.
    """
    # A byte-order mark before the fence is an editor's doing, not the author's.
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    if lines[0] != _FENCE:
        return NO_FRONTMATTER
    name: str | None = None
    kind: str | None = None
    for line in lines[1:]:
        if line.startswith(_FENCE):
            return Frontmatter(name, kind)
        stripped = line.strip()
        if name is None and stripped.startswith("name:"):
            name = _value(stripped[len("name:") :])
        elif kind is None and stripped.startswith("type:"):
            kind = _value(stripped[len("type:") :])
    # No closing fence: the opening line was a thematic break, not frontmatter.
    return NO_FRONTMATTER
