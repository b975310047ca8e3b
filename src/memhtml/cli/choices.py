"""The choices the parser offers, as ``Literal`` types cyclopts turns into choices.

The memory types and task statuses come straight from ``memhtml.contracts``, whose
package resolves its names lazily, so importing the vocabulary costs no numpy and
``memhtml --help`` stays fast.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from memhtml.contracts.vocabulary import MemoryType, TaskStatus

MemoryTypeName: TypeAlias = MemoryType
TaskStatusName: TypeAlias = TaskStatus
TierName = Literal["all", "gist", "summary", "details"]
EmbedderName = Literal["none", "hashing", "local", "openai"]
EvalArmName = Literal["lexical", "vector", "hybrid"]
EvalHalfName = Literal["all", "dev", "held-out"]
ChannelName = Literal["bm25", "trigram"]
