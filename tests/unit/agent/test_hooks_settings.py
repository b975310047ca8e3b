"""Claude Code settings with memhtml's hooks merged in and taken out: a person's own
settings come back exactly, installing twice is installing once, and every event gets
one memhtml entry naming the store."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.agent.hooks import EVENTS, command_for, install, installed, is_ours, uninstall

EXE = ("/opt/venv/bin/memhtml",)
events = st.sampled_from(["PreToolUse", "PostToolUse", "Stop", "UserPromptSubmit",
                          "SessionStart", "Notification"])
theirs = st.sampled_from(["./check.sh", "date", "npm test", "python3 hooks/lint.py",
                          "echo memhtml is great", "memhtml search x"])
entry = st.fixed_dictionaries({"type": st.just("command"), "command": theirs},
                              optional={"timeout": st.integers(1, 60)})
group = st.fixed_dictionaries({"hooks": st.lists(entry, max_size=3)},
                              optional={"matcher": st.sampled_from(["", "Bash", "Edit|Write"])})
person = st.fixed_dictionaries({}, optional={
    "hooks": st.dictionaries(events, st.lists(group, min_size=1, max_size=3), max_size=4),
    "permissions": st.just({"allow": ["Bash(npm test)"]}),
    "model": st.just("sonnet")})


@settings(max_examples=200, deadline=None)
@given(person, st.sampled_from(["/home/ada/memory", "/srv/a store/with 'quotes'"]))
def test_a_persons_settings_come_back_exactly_and_install_is_idempotent(
        mine: dict[str, Any], store: str) -> None:
    before = json.loads(json.dumps(mine))
    once = install(mine, EXE, store).settings
    assert mine == before, "the input is not changed in place"
    assert install(once, EXE, store).settings == once
    # An empty "hooks" object means what no object means; it is the one thing not
    # given back as it was.
    assert uninstall(once).settings == {k: v for k, v in mine.items() if v != {}}
    found = installed(once)
    assert sorted(e for e, _ in found) == sorted(e for e, _, _ in EVENTS)
    assert all(command.endswith(command_for(EXE, "x", store).split(" x ", 1)[1])
               for _, command in found)
    assert all(not is_ours(c) for g in mine.get("hooks", {}).values() for x in g
               for c in (h["command"] for h in x["hooks"]))


def test_another_store_replaces_memhtmls_entries_rather_than_adding() -> None:
    first = install({}, EXE, "/a").settings
    second = install(first, ("/usr/bin/python3", "-m", "memhtml"), "/b")
    assert second.removed == len(EVENTS)
    assert all("/b" in c and "-m memhtml" in c for _, c in installed(second.settings))


@given(st.sampled_from([
    "/opt/memhtml recall --hook claude-code --store /x | tee /tmp/x",
    "logger memhtml brief --hook claude-code",
    'echo "done"; memhtml recall --hook claude-code --store /x >> ~/log',
    "memhtml-wrapper brief --hook claude-code --store /x",
    "/opt/memhtml recall --hook claude-code --store /x --budget 100",
]), st.sampled_from(["Notification", "Stop", "UserPromptSubmit", "SessionStart"]))
def test_a_persons_command_that_runs_memhtml_is_theirs(command: str, event: str) -> None:
    mine = {"hooks": {event: [{"hooks": [{"type": "command", "command": command}]}]}}
    assert not is_ours(command)
    once = install(mine, EXE, "/s")
    assert once.removed == 0
    assert uninstall(once.settings).settings == mine
