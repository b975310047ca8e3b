"""Frontmatter laws: a note's YAML is read within bounds, and every field it names keeps
its value.

Bounds. An alias lets a few hundred bytes stand for billions of values (nine lines of
``&a [*a, *a, ...]``); the import refuses the first alias the parser meets, before
anything is built from it, whatever the nesting, the fan-out, or the style (flow or
block lists, mappings, merge keys). Generated bombs keep fan-out to the depth under a
million values, so a reader that expanded them would still finish and fail the law
rather than hang the suite; the full bomb runs through the command in a process of its
own, its address space capped (``test_markdown_import_bounded``).

Keys. YAML 1.1 reads ``1`` as an int and ``true`` as a bool, which hash alike, so a
loader keeping typed keys drops one of the two values. Keys drawn from every spelling
YAML types (numbers, booleans, nulls, floats, dates, quoted forms) each keep their
value as a facet of the memory file, named as written; two keys that are the same
text are refused by name with both lines, never folded into one.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from memhtml.head.record import record_from
from memhtml.store.errors import FrontmatterDuplicateField, FrontmatterOverLimit
from memhtml.store.markdown_front import MAX_FRONT_DEPTH, ascii_collapsed
from memhtml.store.markdown_import import convert_markdown, render_file

AT = "2026-01-01T00:00:00Z"


# -- aliases -----------------------------------------------------------------------------

@st.composite
def bombs(draw: st.DrawFn) -> tuple[str, int]:
    """A frontmatter whose aliases nest ``depth`` levels of ``fan`` references, in one
    of four styles, below some ordinary fields; and the note line of its first alias."""
    depth = draw(st.integers(1, 12))
    fan = draw(st.integers(2, 12))
    while fan ** depth > 1_000_000:
        depth -= 1
    style = draw(st.sampled_from(["flow", "block", "mapping", "merge"]))
    before = draw(st.lists(st.sampled_from(["name: Bomb", "owner: priya", "tags: [a, b]"]),
                           max_size=3, unique=True))
    lines = [*before, "l0: &a0 [" + ", ".join(["lol"] * fan) + "]"]
    for level in range(1, depth + 1):
        refs = [f"*a{level - 1}"] * fan
        if style == "flow":
            lines.append(f"l{level}: &a{level} [" + ", ".join(refs) + "]")
        elif style == "block":
            lines.append(f"l{level}: &a{level}")
            lines += [f"  - {ref}" for ref in refs]
        elif style == "mapping":
            lines.append(f"l{level}: &a{level} {{" + ", ".join(
                f"k{n}: {ref}" for n, ref in enumerate(refs)) + "}")
        else:
            lines.append(f"l{level}: &a{level}")
            lines += [f"  k{n}: {{<<: {ref}}}" for n, ref in enumerate(refs)]
    first = next(n for n, line in enumerate(lines) if "*a" in line)
    return "\n".join(lines), first + 2


@settings(max_examples=40)
@given(bombs())
def test_an_alias_is_refused_where_it_is_met(drawn: tuple[str, int]) -> None:
    block, line = drawn
    result = convert_markdown("notes/bomb.md", f"---\n{block}\n---\nA fact.\n".encode())
    assert isinstance(result, Failure), "an alias was read"
    error = result.failure()
    assert isinstance(error, FrontmatterOverLimit), error
    assert (error.file, error.limit, error.line) == ("notes/bomb.md", "alias", line)


@settings(max_examples=25)
@given(st.integers(MAX_FRONT_DEPTH + 1, 400), st.sampled_from(["[", "{k: "]))
def test_nesting_past_the_cap_is_refused(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    block = "a: " + opener * depth + "x" + closer * depth
    error = convert_markdown("n.md", f"---\n{block}\n---\nA fact.\n".encode()).failure()
    assert isinstance(error, FrontmatterOverLimit) and error.limit == "depth", error


# -- keys as written ---------------------------------------------------------------------

TYPED_KEYS = ("1", "01", "0x1", "0o7", "1_000", "+1", "-0", "true", "True", "TRUE", "yes",
              "no", "on", "off", "y", "n", "null", "Null", "~", "1.0", "1e3", ".inf",
              "-.Inf", ".nan", "2024-01-01", "2024-01-01T10:00:00Z", "12:30", "=",
              "priority", "x-1")
"""Spellings YAML 1.1 gives a type (ints in every base, booleans, nulls, floats,
dates, sexagesimals, the value key), and plain words beside them."""


def _quoted(text: str, style: str) -> str:
    if style == "single":
        return "'" + text.replace("'", "''") + "'"
    if style == "double":
        return json.dumps(text)
    return text


key_forms = st.tuples(st.sampled_from(TYPED_KEYS), st.sampled_from(["plain", "single", "double"]))
values = st.sampled_from(["one", "yes", "012", "1.10", "~", "'quoted'", "2024-02-30", "a b"])
_WRITTEN = {"'quoted'": "quoted", "~": ""}
"""A value's text in the facet, where it is not the characters written."""


@settings(max_examples=60)
@given(st.lists(st.tuples(key_forms, values), min_size=1, max_size=8))
def test_no_key_loses_its_value(fields: list[tuple[tuple[str, str], str]]) -> None:
    block = "\n".join(f"{_quoted(text, style)}: {value}" for (text, style), value in fields)
    result = convert_markdown("n.md", f"---\n{block}\n---\nA fact.\n".encode())
    texts = [text for (text, _), _ in fields]
    repeated = [text for n, text in enumerate(texts) if text in texts[:n]]
    if repeated:
        error = result.failure()
        assert isinstance(error, FrontmatterDuplicateField), error
        first = texts.index(repeated[0])
        assert (error.field, error.lines) == (repeated[0], (first + 2, texts.index(
            repeated[0], first + 1) + 2)), error
        return
    assert isinstance(result, Success), result
    wanted = [(text, _WRITTEN.get(value, value)) for (text, _), value in fields]
    converted = result.unwrap()
    assert list(converted.front.facet_pairs) == wanted
    record = record_from(render_file(converted, (), AT), "areas/x/n.html").unwrap()
    kept = [(f.name, f.value) for f in record.facets]
    assert [(ascii_collapsed(k), v) for k, v in wanted] == kept[:len(wanted)]
