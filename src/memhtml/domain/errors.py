"""The domain room's error values: one closed union."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias


@dataclass(frozen=True, slots=True)
class InvalidProfile:
    """A weight profile the composite could leave [0, 1] under."""

    reason: str


@dataclass(frozen=True, slots=True)
class ClusterRefused:
    """A proposed entity cluster that contradicts itself and is dropped, not applied."""

    members: tuple[str, ...]
    canonical: str
    reason: str


DomainError: TypeAlias = InvalidProfile | ClusterRefused
