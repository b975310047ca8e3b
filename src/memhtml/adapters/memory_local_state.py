"""The local-state port in memory: the twin of ``LocalStateFiles``, held to the same
contract (``tests/contract/test_local_state_contract.py``). ``plant`` stands for an
entry something other than memhtml put in the directory; ``blocked`` for a
directory that cannot be made (a file in its place, no permission)."""

from __future__ import annotations

from pathlib import Path

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.local_state import OddEntry


class MemoryLocalState:
    """``LocalState`` with no disk: whether the directory was made, and what was planted."""

    def __init__(self, root: Path = Path(".git/memhtml"), *, blocked: str | None = None
                 ) -> None:
        self._root = root
        self.blocked = blocked
        self.made = False
        self._planted: dict[Path, str] = {}

    @property
    def root(self) -> Path:
        return self._root

    def prepare(self) -> IOResult[None, str]:
        if self.blocked is not None:
            return IOFailure(f"cannot create {self._root}: {self.blocked}")
        self.made = True
        return IOSuccess(None)

    def odd_entries(self) -> tuple[OddEntry, ...]:
        return tuple(OddEntry(path, what) for path, what in sorted(self._planted.items()))

    def plant(self, relative: str, what: str) -> None:
        """Put an entry memhtml never makes at ``relative`` under the root."""
        self._planted[self._root / relative] = what
