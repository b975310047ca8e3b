"""A small fixed store exported as markdown, file for file against the files beside
this test (``expected/``).

The store holds what the export has to write out: a claim full of markdown's own
characters, a body with sections, a list with a nested list, a table, a quote, code
with its language, emphasis and a web link, tags, entities and aliases, edges
between memories and one to an archived memory (which is itself left out).

To regenerate after an intended change: ``MEMHTML_REGEN_GOLDEN=1 python -m pytest
tests/golden/markdown_export``, then review every diff by eye.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.integration.store.store_support import make_memory_store, ok

from memhtml.store import WriteInput, archive, link, write
from memhtml.store.markdown_export import export_markdown

EXPECTED = Path(__file__).resolve().parent / "expected"

RICH_BODY = (
    "<section><p>Rollouts follow three steps, <em>always</em> in order.</p>"
    "<ol><li>Ship to the <strong>canary</strong>.</li>"
    "<li>Watch <code>error_rate</code> for ten minutes:<ul><li>under 1%: go on</li>"
    "<li>over: roll back</li></ul></li><li>Ship everywhere.</li></ol></section>"
    "<section><table><tr><th>stage</th><th>share</th></tr>"
    "<tr><td>canary</td><td>5%</td></tr><tr><td>a|b</td><td>95%</td></tr></table>"
    "<aside>The runbook lives at <a href=\"https://example.org/runbook\">the wiki</a>.</aside>"
    "<figure><pre><code data-lang=\"bash\">kubectl rollout status deploy/api\n"
    "echo ```done```</code></pre></figure></section>"
)


def fixed_export() -> dict[str, str]:
    store, _ = make_memory_store()
    old = ok(write(store, WriteInput(
        title="Old deploy runbook", claim="Deploys once went out by hand.",
        directory="areas/ops/"))).paths[0]
    rich = ok(write(store, WriteInput(
        title="Deploy steps", claim="Deploys go through the *canary* first [always].",
        memory_type="procedural", article_html=RICH_BODY, tags=("ops", "c#"),
        entities=("service:api",), directory="areas/ops/"))).paths[0]
    plain = ok(write(store, WriteInput(
        title="Cache TTL", claim="1. The cache TTL is # 5 minutes & no more.",
        body=("It was 10 minutes before the incident.",), aliases=("ttl",),
        directory="areas/cache/"))).paths[0]
    same_stem = ok(write(store, WriteInput(
        title="Deploy steps", claim="Mobile apps deploy through the store review.",
        memory_type="semantic", directory="areas/mobile/"))).paths[0]
    ok(link(store, rich, "relates_to", "/" + plain))
    ok(link(store, rich, "supersedes", "/" + old))
    ok(link(store, plain, "relates_to", "/" + same_stem))
    ok(link(store, same_stem, "contradicts", "/" + rich))
    ok(archive(store, old))
    return export_markdown(ok(store.head()).records()).files


def test_the_fixed_store_exports_as_the_golden_files() -> None:
    files = fixed_export()
    if os.environ.get("MEMHTML_REGEN_GOLDEN"):
        for rel, text in files.items():
            (EXPECTED / rel).parent.mkdir(parents=True, exist_ok=True)
            (EXPECTED / rel).write_text(text, encoding="utf-8", newline="\n")
    expected = {path.relative_to(EXPECTED).as_posix(): path.read_text(encoding="utf-8")
                for path in sorted(EXPECTED.rglob("*.md"))}
    assert sorted(files) == sorted(expected)
    for rel, text in files.items():
        assert text == expected[rel], rel
