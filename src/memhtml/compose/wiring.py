"""Turn settings into a ``Store``: open the repository, pick the clock and author."""

from __future__ import annotations

from returns.io import IOResult

from memhtml.adapters.clock import SystemClock
from memhtml.adapters.git import PygitService
from memhtml.compose.settings import Settings, SettingsError
from memhtml.contracts.services import Clock, Signature
from memhtml.store import Store, StoreDeps


def open_store(settings: Settings, clock: Clock | None = None) -> IOResult[Store, SettingsError]:
    """The store at ``settings.store``: a checkout (``.git`` inside) or a bare repository.

    State (snapshots, vectors, config) lives in ``<store>/.memhtml``; for a checkout,
    commits are mirrored into its working tree for files the user has not modified.
    """
    root = settings.store
    is_checkout = (root / ".git").exists()
    opened = PygitService.open(root / ".git" if is_checkout else root)

    def wire(git: PygitService) -> Store:
        return Store(
            StoreDeps(
                git=git,
                clock=clock or SystemClock(),
                author=Signature(settings.author_name, settings.author_email),
                branch=settings.branch,
                state_dir=root / ".memhtml",
                worktree=root if is_checkout else None,
            )
        )

    return opened.map(wire).alt(
        lambda error: SettingsError(f"no git repository at {root}: {error.reason}")
    )
