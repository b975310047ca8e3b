"""The closed vocabularies as the parser sees them.

Spelled out here rather than imported from ``memhtml.contracts``, whose package
import pulls in numpy: ``memhtml --help`` and the markdown commands should not pay
for it. A unit test holds these equal to the contracts' vocabularies.
"""

from __future__ import annotations

from typing import Literal

MemoryTypeName = Literal[
    "episodic",
    "semantic",
    "procedural",
    "agent_insight",
    "user_preference",
    "error_pattern",
    "verdict",
    "precedent",
    "arc",
    "task",
]
TaskStatusName = Literal["todo", "doing", "blocked", "done"]
TierName = Literal["all", "gist", "summary", "details"]
EmbedderName = Literal["none", "hashing", "local", "openai"]
EvalArmName = Literal["lexical", "vector", "hybrid"]
ChannelName = Literal["bm25", "trigram"]
