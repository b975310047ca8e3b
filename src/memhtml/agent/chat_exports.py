"""Chat exports read for import: ChatGPT's and Claude's ``conversations.json``.

Both services export a person's chats as one JSON array (inside a zip, or as the
file itself). ``read_chatgpt`` follows each conversation's ``mapping`` from its
``current_node`` up through ``parent`` links (the branch the person last saw, in
order; edited-away branches are left out); ``read_claude`` reads ``chat_messages`` in
order. Each gives ``Conversation`` values: an id, a title, a start time and the turns
(user and assistant text only; system, tool and empty messages are skipped).

Read whole or refused whole: a document that is not the export's shape is refused
with each problem named (at most ``SHOWN`` of them), and an id seen twice is one
conversation (the first), counted. Bounds: ``MAX_CONVERSATIONS`` conversations,
``MAX_TURNS`` turns each, ``MAX_TEXT`` characters a turn (longer is cut, and said).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

MAX_CONVERSATIONS: Final = 100_000
MAX_TURNS: Final = 20_000
MAX_TEXT: Final = 100_000
SHOWN: Final = 20
_ID: Final = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class Turn:
    role: str
    """``user`` or ``assistant``."""
    text: str


@dataclass(frozen=True, slots=True)
class Conversation:
    source: str
    """``chatgpt`` or ``claude``."""
    id: str
    """The export's id, folded to a safe session-id stem."""
    title: str
    started: str | None
    """When it began, ``YYYY-MM-DDTHH:MM:SSZ``; None when the export does not say."""
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Export:
    conversations: tuple[Conversation, ...]
    duplicates: int
    cut: int
    """Turns longer than ``MAX_TEXT`` that were cut."""


def safe_id(value: str) -> str:
    """An export id as a session-id stem: ``[A-Za-z0-9_-]`` only, at most 100."""
    return _ID.sub("-", value).strip("-")[:100] or "conversation"


def _instant(value: object) -> str | None:
    try:
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float):
            moment = datetime.fromtimestamp(float(value), UTC)
        elif isinstance(value, str) and value:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            moment = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class _Reading:
    def __init__(self) -> None:
        self.problems: list[str] = []
        self.cut = 0

    def text(self, value: str) -> str:
        if len(value) > MAX_TEXT:
            self.cut += 1
            return value[:MAX_TEXT]
        return value


def _parts_text(content: object) -> str:
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(p for p in parts if isinstance(p, str)).strip()
    text = content.get("text")
    return text.strip() if isinstance(text, str) else ""


def _chatgpt_one(item: dict[str, object], number: int, reading: _Reading
                 ) -> Conversation | None:
    ident = item.get("conversation_id") or item.get("id")
    mapping = item.get("mapping")
    if not isinstance(ident, str) or not ident or not isinstance(mapping, dict):
        reading.problems.append(f"conversation {number}: no id or no mapping")
        return None
    node = item.get("current_node")
    chain: list[dict[str, object]] = []
    seen: set[object] = set()
    while isinstance(node, str) and node in mapping and node not in seen:
        seen.add(node)
        entry = mapping[node]
        if not isinstance(entry, dict):
            reading.problems.append(f"conversation {number}: node {node!r} is not an object")
            return None
        chain.append(entry)
        node = entry.get("parent")
        if len(chain) > MAX_TURNS * 2:
            reading.problems.append(f"conversation {number}: more than {MAX_TURNS} turns")
            return None
    turns: list[Turn] = []
    for entry in reversed(chain):
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        author = message.get("author")
        role = author.get("role") if isinstance(author, dict) else None
        text = _parts_text(message.get("content"))
        if role in ("user", "assistant") and text:
            turns.append(Turn(str(role), reading.text(text)))
    title = item.get("title")
    return Conversation("chatgpt", safe_id(ident), title.strip() if isinstance(title, str)
                        and title.strip() else "Untitled conversation",
                        _instant(item.get("create_time")), tuple(turns))


def _claude_one(item: dict[str, object], number: int, reading: _Reading
                ) -> Conversation | None:
    ident = item.get("uuid")
    messages = item.get("chat_messages")
    if not isinstance(ident, str) or not ident or not isinstance(messages, list):
        reading.problems.append(f"conversation {number}: no uuid or no chat_messages")
        return None
    if len(messages) > MAX_TURNS:
        reading.problems.append(f"conversation {number}: more than {MAX_TURNS} turns")
        return None
    turns: list[Turn] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        sender = message.get("sender")
        role = {"human": "user", "assistant": "assistant"}.get(str(sender))
        text = message.get("text")
        if not isinstance(text, str) or not text.strip():
            blocks = message.get("content")
            text = "\n".join(b["text"] for b in blocks if isinstance(b, dict)
                             and isinstance(b.get("text"), str)) if isinstance(
                blocks, list) else ""
        if role and text.strip():
            turns.append(Turn(role, reading.text(text.strip())))
    title = item.get("name")
    return Conversation("claude", safe_id(ident), title.strip() if isinstance(title, str)
                        and title.strip() else "Untitled conversation",
                        _instant(item.get("created_at")), tuple(turns))


def read_export(data: bytes, source: str) -> Export | list[str]:
    """The conversations of a ``conversations.json`` (``source``: ``chatgpt`` or
    ``claude``), or every problem with it."""
    try:
        found = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return [f"not JSON: {exc}"]
    if not isinstance(found, list):
        return ["not a JSON array of conversations"]
    if len(found) > MAX_CONVERSATIONS:
        return [f"more than {MAX_CONVERSATIONS} conversations"]
    reading = _Reading()
    one = _chatgpt_one if source == "chatgpt" else _claude_one
    kept: dict[str, Conversation] = {}
    duplicates = 0
    for number, item in enumerate(found, start=1):
        if not isinstance(item, dict):
            reading.problems.append(f"conversation {number}: not an object")
            continue
        conversation = one(item, number, reading)
        if conversation is None:
            continue
        if conversation.id in kept:
            duplicates += 1
            continue
        kept[conversation.id] = conversation
    if reading.problems:
        return reading.problems[:SHOWN] + (
            [f"and {len(reading.problems) - SHOWN} more"] if len(reading.problems) > SHOWN
            else [])
    return Export(tuple(kept.values()), duplicates, reading.cut)


def transcript_of(conversation: Conversation) -> bytes:
    """The conversation as the nightly run reads a session: a JSON line a turn, then
    the ``session_end`` line (an export is a finished conversation)."""
    lines = [json.dumps({"role": t.role, "content": t.text}) for t in conversation.turns]
    lines.append(json.dumps({"type": "session_end"}))
    return ("\n".join(lines) + "\n").encode("ascii")


__all__ = ["Conversation", "Export", "Turn", "read_export", "safe_id", "transcript_of"]
