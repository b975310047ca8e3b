"""The read surface of one version of the corpus."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from memhtml.contracts.record import MemoryRecord


class HeadView(Protocol):
    """What a search, an overlay or the gate needs from a version.

    Lists come back sorted ascending, so a caller never depends on the hash order
    of the persistent maps behind them.
    """

    @property
    def sha(self) -> str | None:
        """The commit the view was built from; None when it has no git ancestry."""
        ...

    @property
    def size(self) -> int:
        """Number of records, archived included."""
        ...

    def get(self, path: str) -> MemoryRecord | None: ...

    def paths(self) -> Iterable[str]: ...

    def records(self) -> Iterable[MemoryRecord]: ...

    def by_content_hash(self, content_hash: str) -> str | None:
        """The active path holding this content hash, if any."""
        ...

    def by_frame_key(self, key: str) -> tuple[str, ...]:
        """Active paths whose claim shares this frame key."""
        ...

    def inbound(self, href: str) -> tuple[str, ...]:
        """Paths whose links point at ``href`` (document form, as authored)."""
        ...

    def by_entity(self, entity: str) -> tuple[str, ...]:
        """Paths naming ``entity`` (``type:name``, as authored)."""
        ...
