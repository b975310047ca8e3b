"""What a write's fields may hold, judged before anything is rendered: the rules each
field must keep and the cap on one write's size.

A title, claim or body is plain text, and the only characters refused are those no
memory file can hold (NUL, a lone surrogate); entities must be ``type:name``, links
name an edge rel, the memory type is one of the ten, confidence and importance sit in
the bounds the format reads, and the text together stays under ``MAX_WRITE_BYTES``.
``store.plan.render_write`` refuses a write that breaks any of them, listing each.
Its own module because these rules read a ``WriteInput`` alone, never a plan or the
tree, and the MCP server's caps are read from the same number without the plan.
"""

from __future__ import annotations

import math
import re
from typing import Final

from memhtml.contracts.vocabulary import EDGE_RELS, MEMORY_TYPES, is_edge_rel, is_memory_type
from memhtml.head import is_entity
from memhtml.store.inputs import WriteInput

MAX_WRITE_BYTES = 1 << 20
"""The most one write may carry, in UTF-8 bytes: its text fields together, or a whole
file. A memory is one fact; a megabyte is far past any, and the bound keeps one
request from holding a writer (and every later read of the file) for long. The CLI's
``--file`` and the MCP tools cap at the same number."""
CONFIDENCE_RANGE = (0.0, 1.0)
IMPORTANCE_RANGE = (1, 10)
"""The bounds the format reads (``memhtml.format.parse``): a value outside them is
dropped there with a warning, so the door refuses it rather than commit a dead value."""


def body_violations(data: WriteInput) -> tuple[str, ...]:
    """Every rule the fields break. The title, claim and body are plain text: whatever
    they hold (``<table>``, ``&amp;``) is escaped and reads back as the same characters,
    so nothing is refused for looking like markup; characters no memory file can hold
    (NUL, a lone surrogate) are."""
    found: list[str] = []
    texts = (("title", data.title), ("claim", data.claim),
             *((f"body paragraph {i}", p) for i, p in enumerate(data.body, start=1)))
    found += [f"{label}: a NUL character at offset {text.index(chr(0))} is not text a "
              "memory file can hold" for label, text in texts if "\x00" in text]
    found += [f"entity {e!r} is not type:name (e.g. person:ines, service:checkout-api)"
              for e in data.entities if not is_entity(e)]
    found += [not_a_rel_reason(link.rel) for link in data.links if not is_edge_rel(link.rel)]
    if data.memory_type is not None and not is_memory_type(data.memory_type):
        found.append(f"memory type {data.memory_type!r} is not one of the ten types: "
                     f"{', '.join(MEMORY_TYPES)}")
    low, high = CONFIDENCE_RANGE
    if data.confidence is not None and not (
            isinstance(data.confidence, (int, float)) and not isinstance(data.confidence, bool)
            and math.isfinite(data.confidence) and low <= data.confidence <= high):
        found.append(f"confidence {data.confidence!r} is not a finite number in [0, 1]")
    first, last = IMPORTANCE_RANGE
    if data.importance is not None and not (
            isinstance(data.importance, int) and not isinstance(data.importance, bool)
            and first <= data.importance <= last):
        found.append(f"importance {data.importance!r} is not an integer from 1 to 10")
    unencodable = _lone_surrogates(data)
    if unencodable:
        # Measuring the size would raise on these: refuse with every one listed.
        return (*found, *unencodable)
    oversize = oversize_reason(_text_bytes(data), "the memory's text")
    if oversize is not None:
        found.append(oversize)
    return tuple(found)


SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _lone_surrogates(data: WriteInput) -> list[str]:
    """Each field holding a lone surrogate: a str Python holds (a JSON ``\\ud800``
    decodes to one) but no UTF-8 file can, so it is refused like any other bad input."""
    fields = (("title", data.title), ("claim", data.claim),
              *((f"body paragraph {i}", p) for i, p in enumerate(data.body, start=1)),
              ("article_html", data.article_html or ""),
              *((f"entity {i}", e) for i, e in enumerate(data.entities, start=1)),
              *((f"tag {i}", t) for i, t in enumerate(data.tags, start=1)),
              *((f"alias {i}", a) for i, a in enumerate(data.aliases, start=1)),
              *((f"link {i}", link.href) for i, link in enumerate(data.links, start=1)),
              ("author", data.author or ""), ("session id", data.session_id or ""))
    return [f"{label}: a lone surrogate at offset {hit.start()} is not text a UTF-8 file "
            "can hold" for label, text in fields if (hit := SURROGATE.search(text))]


def _text_bytes(data: WriteInput) -> int:
    texts = (data.title, data.claim, *data.body, data.article_html or "", *data.entities,
             *data.tags, *data.aliases, *(link.href for link in data.links),
             data.author or "", data.session_id or "")
    # A character is at least a byte: past the cap in characters, no need to encode.
    chars = sum(len(text) for text in texts)
    if chars > MAX_WRITE_BYTES:
        return chars
    return sum(len(text.encode("utf-8")) for text in texts)


def oversize_reason(size: int, what: str) -> str | None:
    if size <= MAX_WRITE_BYTES:
        return None
    return (f"{what} is {size} bytes, over the {MAX_WRITE_BYTES}-byte "
            f"({MAX_WRITE_BYTES >> 20} MiB) cap on one write")


def not_a_rel_reason(rel: str) -> str:
    return f"{rel!r} is not an edge rel; the rels are {', '.join(EDGE_RELS)}"
