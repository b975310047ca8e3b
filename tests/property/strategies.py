"""Hypothesis strategies for memory files, shared by the property tests."""

from __future__ import annotations

from hypothesis import strategies as st

from memhtml.contracts.record import Link
from memhtml.contracts.vocabulary import EDGE_RELS, MEMORY_TYPES, TASK_STATUSES
from memhtml.format import NewMemoryInput, render_template

# Printable text plus the characters the writer treats specially: markup
# metacharacters, the no-break space, tabs and newlines, and some multibyte text.
_ALPHABET = st.one_of(
    st.characters(
        codec="utf-8",
        exclude_categories=("Cs", "Cc", "Co", "Cn"),
    ),
    st.sampled_from(["<", ">", "&", '"', "'", "\u00a0", "\t", "\n", " ", "`", "é", "日", "🙂"]),
)
words = st.text(alphabet=_ALPHABET, min_size=1, max_size=40)
claims = words.filter(lambda s: s.strip(" \t\n\r\f") != "")
slugs = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)
hrefs = st.builds(lambda a, b: f"/{a}/{b}.html", slugs, slugs)
instants = st.datetimes(
    min_value=__import__("datetime").datetime(1970, 1, 1),
    max_value=__import__("datetime").datetime(2200, 1, 1),
).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))
dates = st.dates().map(lambda d: d.isoformat()).filter(lambda s: len(s) == 10)
entities = st.builds(lambda t, n: f"{t}:{n}", st.sampled_from(["service", "person", "tool"]), slugs)

code_blocks = st.builds(
    lambda lang, code: f"```{lang}\n{code}\n```",
    st.sampled_from(["", "python", "bash", "ts"]),
    st.text(alphabet=_ALPHABET, min_size=1, max_size=60).filter(lambda c: "```" not in c),
)
paragraphs = st.one_of(words, code_blocks)


@st.composite
def memory_inputs(draw: st.DrawFn) -> NewMemoryInput:
    """A write-door input over the whole metadata surface."""
    mtype = draw(st.sampled_from(MEMORY_TYPES))
    return NewMemoryInput(
        title=draw(claims),
        claim=draw(claims),
        memory_type=mtype,
        at=draw(instants),
        body=tuple(draw(st.lists(paragraphs, max_size=4))),
        entities=tuple(draw(st.lists(entities, max_size=3, unique=True))),
        tags=tuple(draw(st.lists(slugs, max_size=3, unique=True))),
        aliases=tuple(draw(st.lists(slugs, max_size=2, unique=True))),
        links=tuple(
            draw(
                st.lists(
                    st.builds(Link, st.sampled_from(EDGE_RELS), hrefs),
                    max_size=3,
                    unique=True,
                )
            )
        ),
        author=draw(st.none() | st.sampled_from(["agent:test", "human:ann"])),
        confidence=draw(st.none() | st.floats(0, 1).map(lambda x: round(x, 2))),
        importance=draw(st.none() | st.integers(1, 10)),
        valid_from=draw(st.none() | dates),
        valid_until=draw(st.none() | instants),
        task_status=draw(st.sampled_from(TASK_STATUSES)) if mtype == "task" else None,
        due_at=draw(st.none() | dates) if mtype == "task" else None,
        detect=lambda _code: None,
    )


memory_files = memory_inputs().map(render_template)

_INLINE = ["strong", "em", "code", "kbd", "samp", "var", "abbr", "dfn", "cite", "q"]


@st.composite
def article_bodies(draw: st.DrawFn) -> str:
    """Article markup beyond the template's: lists, facets, tables, figures, folds."""
    claim = draw(claims).replace("&", "&amp;").replace("<", "&lt;")
    blocks = [f"<p><mark>{claim}</mark></p>"]
    for _ in range(draw(st.integers(0, 4))):
        text = draw(words).replace("&", "&amp;").replace("<", "&lt;")
        kind = draw(st.sampled_from(["p", "ul", "dl", "pre", "details", "aside", "table", "inl"]))
        if kind == "p":
            blocks.append(f"<p>{text}</p>")
        elif kind == "ul":
            blocks.append(f"<ul>\n  <li>{text}</li>\n  <li>{text}</li>\n</ul>")
        elif kind == "dl":
            value = draw(st.integers(-5, 500))
            blocks.append(f'<dl><dt>{text}</dt><dd><data value="{value}">{text}</data></dd></dl>')
        elif kind == "pre":
            blocks.append(
                f"<figure><pre>\n\n{text}  </pre><figcaption>{text}</figcaption></figure>"
            )
        elif kind == "details":
            blocks.append(f"<details><summary>{text}</summary><p>{text}</p></details>")
        elif kind == "aside":
            blocks.append(f"<aside>{text}</aside>")
        elif kind == "table":
            blocks.append(f"<table><tr><th>{text}</th></tr><tr><td>{text}</td></tr></table>")
        else:
            tag = draw(st.sampled_from(_INLINE))
            blocks.append(f"<p>{text} <{tag}>{text}</{tag}> tail</p>")
    return "\n".join(blocks)
