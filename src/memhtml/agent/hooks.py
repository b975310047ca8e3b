"""Claude Code's hook entries for memhtml, merged into and taken out of its settings.

Claude Code reads hooks from ``settings.json`` (the project's ``.claude/`` or the
user's ``~/.claude/``): ``{"hooks": {EVENT: [{"matcher"?: ..., "hooks": [{"type":
"command", "command": ..., "timeout": ...}]}]}}``. memhtml adds one group per event:

- ``SessionStart`` -> ``memhtml brief --hook claude-code``: the briefing, as the
  session's added context;
- ``UserPromptSubmit`` -> ``memhtml recall --hook claude-code``: the memories the
  prompt has evidence for, added to it (nothing when none);
- ``PreCompact``, ``Stop`` and ``SessionEnd`` -> ``memhtml capture --hook
  claude-code``: the transcript kept for the nightly run (ended at SessionEnd).

Each command names the store by absolute path, so it works from any project
directory. An entry is memhtml's when it sits under one of those five events and its
command is exactly one memhtml writes (``is_ours``): installing again replaces memhtml's
entries (another store, another executable) and leaves every other hook, key and
group as it was; uninstalling takes out exactly the entries that are memhtml's, and
an event or a ``hooks`` object left empty by that. Pure: a settings value in, a new
one out; reading and writing the file is the command's.
"""

from __future__ import annotations

import copy
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

EVENTS: Final[tuple[tuple[str, str, int], ...]] = (
    ("SessionStart", "brief", 15),
    ("UserPromptSubmit", "recall", 10),
    ("PreCompact", "capture", 60),
    ("Stop", "capture", 60),
    ("SessionEnd", "capture", 60),
)
"""Each event, the door it runs and its timeout in seconds."""
OUR_EVENTS: Final = frozenset(event for event, _, _ in EVENTS)

DOORS: Final = frozenset({"brief", "recall", "capture"})


class SettingsShapeError(ValueError):
    """The settings file holds something other than Claude Code's hook shape where
    memhtml would write: left untouched, with what was found."""


def command_for(executable: Sequence[str], door: str, store: str) -> str:
    """The hook command: the executable (its words: a console script, or an interpreter
    with ``-m memhtml``), the door, ``--hook claude-code`` and the store, each word
    quoted for the shell Claude Code runs it with."""
    return (" ".join(shlex.quote(word) for word in executable)
            + f" {door} --hook claude-code --store {shlex.quote(store)}")


def is_ours(command: object) -> bool:
    """Whether a hook command is exactly one ``command_for`` writes: a memhtml
    executable (``.../memhtml``, or an interpreter with ``-m memhtml``), a door, ``--hook
    claude-code``, ``--store`` and a path, quoted as memhtml quotes them, nothing before
    or after. A person's own command that merely runs memhtml (piped, logged, chained)
    is theirs."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) < 6 or words[-5] not in DOORS or words[-4:-2] != ["--hook", "claude-code"] \
            or words[-2] != "--store":
        return False
    executable = words[:-5]
    named = (len(executable) == 1 and executable[0].rsplit("/", 1)[-1] == "memhtml") or (
        len(executable) == 3 and executable[1:] == ["-m", "memhtml"])
    return named and command == command_for(executable, words[-5], words[-1])


@dataclass(frozen=True, slots=True)
class Change:
    settings: dict[str, Any]
    added: tuple[str, ...]
    """Events given a memhtml entry."""
    removed: int
    """memhtml entries taken out (on install: the ones replaced)."""


def _groups(settings: Mapping[str, Any], event: str) -> list[Any]:
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsShapeError(f"'hooks' is a {type(hooks).__name__}, not an object")
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise SettingsShapeError(f"'hooks.{event}' is a {type(groups).__name__}, not a list")
    return groups


def _without_ours(settings: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """A copy without memhtml's entries; a group, an event or the ``hooks`` object
    that only memhtml's entries emptied goes too, anything else stays as it was."""
    out = copy.deepcopy(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict) or not hooks:
        return out, 0
    removed = 0
    for event in list(hooks):
        groups = _groups(out, event)
        kept_groups = []
        taken = 0
        ours_here = event in OUR_EVENTS
        for group in groups:
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list) or not ours_here:
                kept_groups.append(group)
                continue
            kept = [e for e in entries if not (isinstance(e, dict) and is_ours(e.get("command")))]
            taken += len(entries) - len(kept)
            if kept or len(kept) == len(entries):
                kept_groups.append({**group, "hooks": kept})
        removed += taken
        if kept_groups or not taken:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if len(hooks) == 0:
        del out["hooks"]
    return out, removed


def install(settings: Mapping[str, Any], executable: Sequence[str], store: str) -> Change:
    """``settings`` with memhtml's entries for ``store`` (and no other of memhtml's)."""
    if not isinstance(settings, dict):
        raise SettingsShapeError("the settings file is not a JSON object")
    for event, _door, _timeout in EVENTS:
        _groups(settings, event)
    out, removed = _without_ours(dict(settings))
    hooks = out.setdefault("hooks", {})
    for event, door, timeout in EVENTS:
        hooks.setdefault(event, []).append({"hooks": [{
            "type": "command", "command": command_for(executable, door, store),
            "timeout": timeout}]})
    return Change(out, tuple(e for e, _, _ in EVENTS), removed)


def uninstall(settings: Mapping[str, Any]) -> Change:
    """``settings`` without any entry of memhtml's."""
    if not isinstance(settings, dict):
        raise SettingsShapeError("the settings file is not a JSON object")
    out, removed = _without_ours(dict(settings))
    return Change(out, (), removed)


def installed(settings: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(event, command)`` of each memhtml entry in ``settings``."""
    found: list[tuple[str, str]] = []
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        if event not in OUR_EVENTS:
            continue
        for group in groups if isinstance(groups, list) else []:
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else []:
                if isinstance(entry, dict) and is_ours(entry.get("command")):
                    found.append((str(event), str(entry["command"])))
    return found


__all__ = ["EVENTS", "Change", "SettingsShapeError", "command_for", "install", "installed",
           "is_ours", "uninstall"]
