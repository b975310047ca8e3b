"""The composition root: settings from flags, environment and config, turned into services.

The only place that picks service implementations. Both edges (the CLI and the MCP
server) call ``open_services`` and hand the ``Services`` value (or the ``Store`` it
builds) to the core; nothing below them reads configuration or chooses an adapter.
``value_of`` and ``perform`` run an IO result for a Python caller.

A repository that is not a store is refused before anything is read; once made one
(``require_store=False`` opens it for ``init_store``, as ``memhtml init`` does), it
opens on the branch it names, with no embedder unless one is configured:

>>> import tempfile
>>> from datetime import UTC, datetime
>>> from pathlib import Path
>>> from memhtml.adapters.clock import FixedClock
>>> from memhtml.compose import (
...     Settings, error_code, init_repository, open_services, perform, value_of)
>>> from memhtml.store import init_store
>>> tmp = tempfile.TemporaryDirectory()
>>> root = Path(tmp.name)
>>> _ = value_of(init_repository(root))
>>> refused = perform(open_services(Settings(store=root))).failure()
>>> error_code(refused)
'ERR_NOT_A_STORE'
>>> print(refused.reason)
/... is not a memhtml store: no .memhtml/store.toml on main. Run `memhtml init ...`
to make it one (on the branch checked out), or pass --store DIR (or set MEMHTML_STORE)
to name the store you meant
>>> clock = FixedClock(datetime(2026, 1, 6, 9, 0, tzinfo=UTC))
>>> made = value_of(open_services(Settings(store=root), clock=clock, require_store=False))
>>> _ = value_of(init_store(made.store().deps))
>>> services = value_of(open_services(Settings(store=root), clock=clock))
>>> services.settings.branch, services.embedder_name, services.embedder
('main', 'none', <Success: None>)
>>> tmp.cleanup()
"""

from typing import TYPE_CHECKING

from memhtml.compose.cloning import ClonedBranch, SeveralStores, choose_branch, clone_store
from memhtml.compose.run import MemhtmlError, error_code, explain, perform, value_of
from memhtml.compose.services import (
    Services,
    init_repository,
    is_repository,
    markdown_reader,
    open_services,
    pick_embedder,
    sync_policy,
)
from memhtml.compose.settings import (
    CONFIG_FILE,
    EMBEDDERS,
    ENV_STORE,
    Settings,
    SettingsError,
    discover_store,
    load_settings,
)
from memhtml.compose.stores import BranchRefused, record_branch
from memhtml.compose.vectors import Arm, Coverage, Hybrid

if TYPE_CHECKING:
    from memhtml.adapters.vector_cache import VectorFiles


def __getattr__(name: str) -> object:
    # The vector cache's disk adapter, for a caller that keeps a cache of its own
    # (``memhtml eval``'s scratch store). Imported on first use, as ``open_services``
    # imports it, so a command that never opens a store does not pay for it.
    if name == "VectorFiles":
        from memhtml.adapters.vector_cache import VectorFiles

        return VectorFiles
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CONFIG_FILE",
    "EMBEDDERS",
    "ENV_STORE",
    "Arm",
    "BranchRefused",
    "ClonedBranch",
    "Coverage",
    "Hybrid",
    "MemhtmlError",
    "Services",
    "Settings",
    "SettingsError",
    "SeveralStores",
    "VectorFiles",
    "choose_branch",
    "clone_store",
    "discover_store",
    "error_code",
    "explain",
    "init_repository",
    "is_repository",
    "load_settings",
    "markdown_reader",
    "open_services",
    "perform",
    "pick_embedder",
    "record_branch",
    "sync_policy",
    "value_of",
]
