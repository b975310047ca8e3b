"""The published site's one stylesheet, served from the site's own origin.

It is the only thing the pages' Content-Security-Policy lets them load, which is why
the pages carry no ``style`` attribute and no ``<style>`` element.
"""

from __future__ import annotations

STYLESHEET = """\
:root {
  color-scheme: light dark;
  --fg: #1d1f21;
  --muted: #5c6370;
  --rule: #d8dce2;
  --accent: #1f5fbf;
  --mark: #fff3b0;
  --panel: #f5f7fa;
}
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e6e6; --muted: #a0a8b4; --rule: #3a3f47; --accent: #8ab4f8; --mark: #5c5220;
    --panel: #22262c; }
}
body {
  margin: 0 auto;
  max-width: 50rem;
  padding: 1.5rem 1.25rem 3rem;
  font: 1rem/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg);
}
a { color: var(--accent); text-decoration: none; }
a:hover, a:focus { text-decoration: underline; }
mark { background: var(--mark); color: inherit; padding: 0 0.1rem; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
nav ol { display: flex; flex-wrap: wrap; gap: 0.35rem; list-style: none; margin: 0; padding: 0;
  color: var(--muted); font-size: 0.9rem; }
nav li + li::before { content: "/"; margin-right: 0.35rem; }
h1 { margin: 0.4rem 0 0.2rem; font-size: 1.7rem; overflow-wrap: anywhere; }
h2 { margin: 2rem 0 0.6rem; font-size: 1.05rem; text-transform: uppercase; letter-spacing: 0.05em;
  color: var(--muted); border-bottom: 1px solid var(--rule); padding-bottom: 0.3rem; }
header > p { margin: 0; color: var(--muted); }
ul { list-style: none; margin: 0; padding: 0; }
.directories { display: flex; flex-wrap: wrap; gap: 0.5rem 1.25rem; }
.directories a { font-weight: 600; }
.memories > li { padding: 0.7rem 0; border-bottom: 1px solid var(--rule); }
.memories h3 { margin: 0; font-size: 1.05rem; overflow-wrap: anywhere; }
.memories .claim { margin: 0.2rem 0; }
.facts { margin: 0; color: var(--muted); font-size: 0.85rem; }
.facts code { font-size: 0.85rem; }
.archived h3 a, .archived .claim { color: var(--muted); }
.badge { display: inline-block; padding: 0 0.45rem; border: 1px solid var(--muted);
  border-radius: 0.6rem; font-size: 0.75rem; text-transform: uppercase; letter-spacing: 0.04em; }
.files li, .skipped li { font-size: 0.9rem; padding: 0.2rem 0; overflow-wrap: anywhere; }
.skipped .reason, .unlinked .why { color: var(--muted); }
.skipped .reason::before, .unlinked .why::before { content: "\\2014\\00a0"; }
.explain { color: var(--muted); font-size: 0.85rem; margin: 0 0 0.4rem; }
.memory-text { margin: 1.2rem 0 0; overflow-wrap: anywhere; }
.memory-text p, .memory-text h3 { margin: 0 0 0.7rem; }
.memory-text h3 { font-size: 1.05rem; }
.memory-text pre { background: var(--panel); border: 1px solid var(--rule); border-radius: 0.3rem;
  padding: 0.6rem 0.8rem; overflow-x: auto; font-size: 0.85rem; line-height: 1.45;
  white-space: pre; overflow-wrap: normal; }
.memory-text .item { position: relative; margin: 0 0 0.3rem; padding-left: 1.2rem; }
.memory-text .item::before { content: "\\2022"; position: absolute; left: 0.3rem;
  color: var(--muted); }
.memory-text .item:has(> .marker) { padding-left: 1.6rem; }
.memory-text .item:has(> .marker)::before { content: none; }
.memory-text .marker { position: absolute; left: 0; color: var(--muted); }
.memory-text .depth-2 { margin-left: 1.2rem; }
.memory-text .depth-3 { margin-left: 2.4rem; }
.memory-text .depth-4 { margin-left: 3.6rem; }
.memory-text .term { margin: 0.5rem 0 0; font-weight: 600; }
.memory-text .def { margin: 0 0 0.4rem 1.2rem; }
.memory-text .caption, .memory-text .row { font-size: 0.9rem; color: var(--muted); }
.memory-text .caption { margin-bottom: 0.3rem; }
.memory-text table { display: block; max-width: 100%; overflow-x: auto; border-collapse: collapse;
  margin: 0 0 0.9rem; font-size: 0.92rem; }
.memory-text th, .memory-text td { border: 1px solid var(--rule); padding: 0.3rem 0.6rem;
  text-align: left; vertical-align: top; overflow-wrap: normal; }
.memory-text th { font-weight: 600; background: var(--panel); }
.memory-text .summary { font-weight: 600; }
.memory-text .note, .memory-text .more, .memory-text .quote { border-left: 3px solid var(--rule);
  padding-left: 0.8rem; color: var(--muted); }
dl.about { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0; }
dl.about dt { color: var(--muted); }
dl.about dd { margin: 0; overflow-wrap: anywhere; }
.chips { display: flex; flex-wrap: wrap; gap: 0.3rem; }
.chips li { border: 1px solid var(--rule); border-radius: 0.7rem; padding: 0 0.5rem;
  font-size: 0.85rem; }
.edges li { display: grid; grid-template-columns: 7.5rem 1fr; gap: 0 0.75rem; padding: 0.25rem 0; }
.edges .rel { color: var(--muted); font-size: 0.85rem; padding-top: 0.1rem; }
.edges .target { overflow-wrap: anywhere; }
.edges code { color: var(--muted); font-size: 0.8rem; }
.folder-note { margin: 1rem 0 0; padding: 0.5rem 0.8rem; background: var(--panel);
  border-left: 3px solid var(--accent); border-radius: 0.2rem; font-size: 1.05rem;
  overflow-wrap: anywhere; }
.folder-note a { font-weight: 600; }
.recent li { padding: 0.2rem 0; overflow-wrap: anywhere; }
.recent time, .recent code { margin-left: 0.4rem; color: var(--muted); font-size: 0.85rem; }
.labels li { overflow-wrap: anywhere; }
.labels .count { color: var(--muted); font-size: 0.8rem; }
.labels + .explain { margin-top: 0.5rem; }
.badge.overdue { border-color: currentColor; color: #b3261e; font-weight: 700; }
@media (prefers-color-scheme: dark) { .badge.overdue { color: #f2b8b5; } }
.task.overdue h3 a { font-weight: 700; }
footer { margin-top: 2.5rem; padding-top: 0.6rem; border-top: 1px solid var(--rule);
  color: var(--muted); font-size: 0.9rem; }
"""
