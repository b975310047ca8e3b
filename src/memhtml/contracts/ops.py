"""Overlay ops: a session's pending changes, applied to a view before they are committed.

Paths are tree form; ``href`` values are document form, as a file spells them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from memhtml.contracts.vocabulary import EdgeRel


@dataclass(frozen=True, slots=True)
class Put:
    """Write ``html`` at ``path``, replacing whatever is there."""

    path: str
    html: str


@dataclass(frozen=True, slots=True)
class Archive:
    """Remove ``path`` and insert ``html`` at ``to`` as an archived record."""

    path: str
    to: str
    html: str


@dataclass(frozen=True, slots=True)
class LinkOp:
    """Add a ``<link rel="memhtml-{rel}" href>`` to the file at ``path``."""

    path: str
    rel: EdgeRel
    href: str


@dataclass(frozen=True, slots=True)
class UnlinkOp:
    """Cut a link from the file at ``path``."""

    path: str
    rel: EdgeRel
    href: str


@dataclass(frozen=True, slots=True)
class Label:
    """Add a ``memhtml-entity`` meta to the file at ``path``."""

    path: str
    entity: str


@dataclass(frozen=True, slots=True)
class Unlabel:
    """Remove one ``memhtml-entity`` value from the file at ``path``."""

    path: str
    entity: str


@dataclass(frozen=True, slots=True)
class Move:
    """Move the file at ``path`` to ``to``, content unchanged."""

    path: str
    to: str


@dataclass(frozen=True, slots=True)
class Unarchive:
    """Remove the archived ``path`` and insert ``html`` at the live path ``to``: the
    archive op's inverse, which ``memhtml restore`` applies."""

    path: str
    to: str
    html: str


OverlayOp: TypeAlias = Put | Archive | LinkOp | UnlinkOp | Label | Unlabel | Move | Unarchive
