"""How the agent doors count tokens: words and marks, not a model's tokenizer.

``brief`` and ``recall`` are bounded by a token budget, and a budget needs a count
that is the same everywhere, cheap, and needs no model file: each run of letters,
digits or underscores is one token and so is every other character that is not
white space (``\\w+|[^\\w\\s]``). Byte-pair tokenizers split rare words and merge
nothing across a space, so on English prose they give about as many tokens as this
count or somewhat more; the figures in docs/benchmarks.md ("The agent's loop") say
by how much on the texts the doors print.
"""

from __future__ import annotations

import re
from typing import Final

_TOKEN: Final = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """Tokens in ``text`` as the agent doors count them (see the module docstring)."""
    return sum(1 for _ in _TOKEN.finditer(text))


def shortened(text: str, limit: int) -> str:
    """``text`` on one line (runs of white space as one space), cut to ``limit``
    characters with an ellipsis when longer: how the doors print a claim."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "\u2026"


__all__ = ["count_tokens", "shortened"]
