"""The agent doors' pure laws: redaction finds each kind of secret wherever it sits and
keeps every line the JSON it was; capture is idempotent and ends a session once; brief
and recall keep their budgets; recall answers nothing for a prompt the store has no
evidence for."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.integration.publish.site_support import memory_file, records_of

from memhtml.agent.brief import brief
from memhtml.agent.capture import SESSION_END_LINE, prepare
from memhtml.agent.recall import recall
from memhtml.agent.redact import redact_text
from memhtml.agent.tokens import count_tokens
from memhtml.head import HeadVersion, version_from_records
from memhtml.sleep.phases.trace_sessions import parse_transcript

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _run(alphabet: str, low: int, high: int | None = None) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=low, max_size=high or low + 20)


SECRETS: dict[str, st.SearchStrategy[str]] = {
    "aws-access-key": _run(_UPPER, 16, 16).map(lambda s: "AKIA" + s),
    "github-token": _run(_ALNUM, 36).map(lambda s: "ghp_" + s),
    "gitlab-token": _run(_ALNUM, 20).map(lambda s: "glpat-" + s),
    "slack-token": _run(_ALNUM, 10).map(lambda s: "xoxb-" + s),
    "anthropic-key": _run(_ALNUM, 20).map(lambda s: "sk-ant-" + s),
    "openai-key": _run(_ALNUM, 20).map(lambda s: "sk-proj-" + s),
    "google-api-key": _run(_ALNUM, 35, 35).map(lambda s: "AIza" + s),
    "stripe-key": _run(_ALNUM, 16).map(lambda s: "sk_live_" + s),
    "jwt": st.tuples(_run(_ALNUM, 8), _run(_ALNUM, 8), _run(_ALNUM, 8)).map(
        lambda p: f"eyJ{p[0]}.eyJ{p[1]}.{p[2]}"),
    "private-key": _run(_ALNUM, 40).map(
        lambda s: f"-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----"),
}
PROSE = st.text(st.sampled_from(list("abcdefghij klmnop.,\n")), max_size=40)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(SECRETS)).flatmap(
    lambda kind: st.tuples(st.just(kind), SECRETS[kind])), PROSE, PROSE)
def test_every_kind_of_secret_is_redacted_wherever_it_sits(
        secret: tuple[str, str], before: str, after: str) -> None:
    kind, value = secret
    text, count = redact_text(f"{before} {value} {after}")
    assert value not in text and count >= 1
    assert f"[REDACTED:{kind}]" in text or "[REDACTED:" in text


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["API_KEY=", "password: ", '"client_secret": "', "export TOKEN="]),
       _run(_ALNUM + "!#%&*", 8, 30))
def test_a_named_secret_keeps_its_name_and_loses_its_value(name: str, value: str) -> None:
    text, count = redact_text(f"{name}{value}")
    assert value not in text and count == 1
    assert text.startswith(name.rstrip('"').rstrip())


def test_bearer_basic_and_url_passwords() -> None:
    assert redact_text("Authorization: Bearer abcdef0123456789xyz")[0] == \
        "Authorization: Bearer [REDACTED:bearer]"
    done, _ = redact_text("git clone https://ana:s3cretpass@example.org/repo.git")
    assert "s3cretpass" not in done and "ana:" in done and "@example.org" in done


def test_prose_is_left_alone() -> None:
    for text in ("Deploys happen on Tuesdays.", "the token bucket refills every second",
                 "skip the secret santa", "password reset emails go out at 9"):
        assert redact_text(text) == (text, 0)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30)
    | SECRETS["github-token"],
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(max_size=8), inner, max_size=4), max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(JSONISH, min_size=1, max_size=6))
def test_capture_keeps_json_lines_json_is_idempotent_and_ends_once(lines: list[object]) -> None:
    source = "\n".join(json.dumps(line) for line in lines).encode()
    once = prepare(source, end=True)
    assert prepare(once.data, end=True).data == once.data, "a capture of a capture is itself"
    kept = once.data.split(b"\n")[:-1]
    assert kept[-1] == SESSION_END_LINE and kept.count(SESSION_END_LINE) == 1 + sum(
        1 for line in lines if line == {"type": "session_end"})
    for raw in kept:
        json.loads(raw)
    assert b"ghp_" not in once.data
    assert parse_transcript(once.data).closed


def test_a_line_that_is_not_json_is_redacted_as_text() -> None:
    done = prepare(b'not json sk-ant-abcdefghijklmnopqrstuvwx\n{"role":"user","content":"hi"}\n')
    assert done.unparsed == 1 and done.redacted == 1
    assert b"sk-ant-" not in done.data and b"[REDACTED:anthropic-key]" in done.data


def _store(n: int) -> HeadVersion:
    files = {f"areas/ops/note-{i:03d}.html": memory_file(
        f"Service {i} port", f"Service number {i} listens on port {8000 + i} in zone {i % 7}.",
        at=f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00Z") for i in range(n)}
    files.update({f"areas/tasks/task-{i}.html": memory_file(
        f"Task {i}", f"Do the chore number {i}.", memory_type="task", task_status="todo",
        due_at=f"2026-12-{1 + i:02d}") for i in range(min(n, 20))})
    return version_from_records(records_of(files), "0" * 40)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 60), st.integers(20, 600), st.integers(1, 12))
def test_brief_keeps_its_budget_and_puts_overdue_tasks_first(n: int, budget: int,
                                                             items: int) -> None:
    found = brief(_store(n), "2026-12-07T00:00:00Z", {}, budget=budget, items=items)
    assert found.tokens <= budget + count_tokens("\n\n") * len(found.parts)
    assert found.tokens == count_tokens(found.text)
    for part in found.parts:
        assert len(part.lines) <= items
    tasks = next((p for p in found.parts if p.heading.startswith("Open tasks")), None)
    if tasks is not None:
        flags = ["OVERDUE" in line for line in tasks.lines]
        assert flags == sorted(flags, reverse=True)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(10, 300))
def test_recall_keeps_its_budget(n: int, budget: int) -> None:
    found = recall(_store(n), "which port does service number 3 listen on in zone 3",
                   budget=budget)
    assert found.tokens <= budget
    assert all(m.path in found.text for m in found.memories)


def test_recall_finds_the_named_memory_and_nothing_for_an_unrelated_prompt() -> None:
    version = _store(30)
    found = recall(version, "which port does service number 17 listen on?")
    assert found.memories and found.memories[0].path == "areas/ops/note-017.html"
    assert recall(version, "write a haiku about autumn leaves").text == ""
    assert recall(version, "").memories == ()
