"""The veto's words, widened: which texts a planted corpus may give a role.

A base text holding a polarity marker, a variant qualifier, a word beside its
prefixed form ("active"/"inactive") or an opposite pair would make a planted pair
show a flip the plan did not put there, so ``eval.planted`` gives such a text no
role that needs a clean one. The words are the veto's own (``domain.veto_text``),
widened on purpose: a document is passed over when in doubt, never mislabelled. Its
own module because the vocabulary and its test change apart from the role
assignment that applies them.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

_TOKEN: Final = re.compile(r"[a-z0-9]+(?:\.[0-9]+)*")
"""The veto's tokenizer: "3.5" stays one token, so it differs from "35"."""
_NEGATION_MARKERS: Final = frozenset({
    "not", "no", "never", "none", "cannot", "without", "neither", "nor", "nobody", "nothing",
    "avoid", "disallow", "disallowed", "forbidden", "unsafe", "invalid", "false", "fail",
    "fails", "failed", "failure", "deny", "denied", "reject", "rejected", "non",
})  # fmt: skip
_QUALIFIERS: Final = frozenset(
    {"pro", "max", "beta", "alpha", "rc", "preview", "legacy", "deprecated", "experimental"}
)
_PREFIXES: Final = ("non", "dis", "un", "in")
_OPPOSITES: Final[tuple[tuple[frozenset[str], frozenset[str]], ...]] = tuple(
    (frozenset(a), frozenset(b)) for a, b in (
        (("allow", "allows", "allowed"), ("deny", "denies", "denied")),
        (("accept", "accepts", "accepted"), ("reject", "rejects", "rejected")),
        (("enable", "enables", "enabled"), ("disable", "disables", "disabled")),
        (("include", "includes", "included"), ("exclude", "excludes", "excluded")),
        (("pass", "passes", "passed"), ("fail", "fails", "failed")),
        (("success", "succeeds", "succeeded"), ("failure", "failures")),
        (("true",), ("false",)),
        (("open",), ("closed",)),
        (("on",), ("off",)),
        (("up",), ("down",)),
        (("valid",), ("invalid",)),
        (("safe",), ("unsafe",)),
    )
)  # fmt: skip
"""Opposites no prefix relates: a text holding both forms is never given a role."""


def veto_tokens(text: str) -> frozenset[str]:
    """The veto's tokens of a text; an elided "not" ("isn't") becomes ``not``."""
    folded = unicodedata.normalize("NFC", text).lower().replace("\u2019", "'")
    tokens = set(_TOKEN.findall(folded))
    if "n't" in folded or "cannot" in folded:
        tokens.add("not")
    return frozenset(tokens)


def polar_clean(tokens: frozenset[str]) -> bool:
    """No polarity marker, no variant qualifier, no word beside its prefixed form
    ("active"/"inactive") and no opposite pair: a text no veto reading can find a
    flip inside, so whatever flip a planted pair shows is the one planted."""
    if not _NEGATION_MARKERS.isdisjoint(tokens) or not _QUALIFIERS.isdisjoint(tokens):
        return False
    for token in tokens:
        for prefix in _PREFIXES:
            if token.startswith(prefix) and token[len(prefix) :] in tokens:
                return False
    return not any(not a.isdisjoint(tokens) and not b.isdisjoint(tokens) for a, b in _OPPOSITES)
