"""Frontmatter as the export writes it: each value in the YAML style it needs or had.

A facet keeps the style it was written in (``markdown_fields``): a plain scalar is
written plain again whenever YAML can read it plain, so ``version: 1.10`` and
``enabled: true`` stay what another YAML reader takes them for (a number, a
boolean), and a quoted one is written quoted, so ``version: "1.10"`` stays text to
that reader too. A value the export writes for a place of the memory (a title, a
date, a tag) is written plain when every YAML reader reads it back as that same
text, quoted otherwise. The import reads every scalar as the text written, so either
way it gets the value back.

>>> scalar("Deploy window"), scalar("1.10"), scalar("2026-01-01T00:00:00Z")
('Deploy window', "'1.10'", "'2026-01-01T00:00:00Z'")
>>> facet_scalar("1.10", "="), facet_scalar("1.10", "'"), facet_scalar("a: b", "=")
('1.10', '"1.10"', "'a: b'")
>>> print(block("tags", ["ops", "on call"]))
tags:
- ops
- on call
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

import yaml

from memhtml.store.markdown_fields import EMPTY, LIST, NESTED, PLAIN, QUOTED

_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"
_INDICATORS = frozenset(",[]{}#&*!|>'\"%@`")
_NEEDS_SPACE = frozenset("-?:")
_UNPRINTABLE = re.compile(
    "[^\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029\ufeff]")
"""What YAML does not take as written in a quoted scalar: a character outside its
printable set, a line or paragraph separator (folded), a byte-order mark."""

__all__ = ["block", "facet_block", "facet_scalar", "key_of", "scalar"]


def plain_ok(text: str) -> bool:
    """Whether ``text`` can be written as a plain scalar and read back as itself (its
    characters; whether a YAML reader then types it is another question)."""
    if not text or text != text.strip(" ") or _UNPRINTABLE.search(text) or "\t" in text:
        return False
    first = text[0]
    if first in _INDICATORS or (first in _NEEDS_SPACE and (len(text) == 1 or text[1] == " ")):
        return False
    return ": " not in text and " #" not in text and not text.endswith(":") \
        and not text.startswith(("---", "..."))


def quoted(text: str) -> str:
    """``text`` quoted: single quotes when that is enough, else double quotes with
    YAML's own escapes (a control character, a line break, a noncharacter)."""
    if not _UNPRINTABLE.search(text):
        return "'" + text.replace("'", "''") + "'"
    return _double(text)


def _double(text: str) -> str:
    return yaml.safe_dump(text, default_style='"', allow_unicode=True,
                          width=10**9).rstrip("\n")


def scalar(text: str) -> str:
    """A value of the memory's: plain when every YAML reader reads it as this text."""
    if plain_ok(text) and _resolved(text) == _STR_TAG:
        return text
    return quoted(text)


def _resolved(text: str) -> str:
    """The tag a YAML reader gives ``text`` written plain."""
    tag: str = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return tag


def key_of(key: str) -> str:
    """A frontmatter key, plain when it can be."""
    return key if plain_ok(key) else quoted(key)


def facet_scalar(text: str, code: str) -> str:
    """A facet's scalar in the style it was written in (``markdown_fields`` codes)."""
    if code == EMPTY:
        return ""
    if code == PLAIN and plain_ok(text):
        return text
    if code == QUOTED:
        return _double(text)
    return quoted(text)


def block(key: str, values: Sequence[str]) -> str:
    """A list of the memory's values (tags, aliases, entities), one item a line."""
    if not values:
        return f"{key_of(key)}: []"
    return "\n".join([f"{key_of(key)}:", *(f"- {scalar(v)}" for v in values)])


def facet_block(key: str, code: str, values: Sequence[str]) -> str:
    """A facet as written: a scalar, a list of scalars, or a nested value (its JSON)."""
    name = key_of(key)
    if code.startswith(LIST):
        items = code[len(LIST):]
        if not values:
            return f"{name}: []"
        lines = [f"{name}:"]
        for value, item in zip(values, items.ljust(len(values), PLAIN), strict=False):
            written = facet_scalar(value, item)
            lines.append(f"- {written}".rstrip())
        return "\n".join(lines)
    if code == NESTED and values:
        try:
            loaded = json.loads(values[0])
        except ValueError:
            loaded = values[0]
        dumped = yaml.safe_dump({key: loaded}, allow_unicode=True, sort_keys=False,
                                default_flow_style=False, width=10**9)
        return dumped.rstrip("\n")
    value = values[0] if values else ""
    return f"{name}: {facet_scalar(value, code)}".rstrip()


def mapping(key: str, groups: Mapping[str, Sequence[str]]) -> str:
    """``edges``: each rel with its targets, one a line."""
    lines = [f"{key_of(key)}:"]
    for rel, targets in groups.items():
        lines.append(f"  {key_of(rel)}:")
        lines += [f"  - {scalar(t)}" for t in targets]
    return "\n".join(lines)
