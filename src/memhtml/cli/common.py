"""What every command shares: the ``--store`` and ``--json`` options, and opening a store.

The options are one flattened dataclass, so each command lists them in its help
without repeating their declarations. Opening a store goes through the composition
root (``memhtml.compose``), which is where flags, ``MEMHTML_*`` variables and
``.memhtml/config.toml`` meet and where every service is picked; nothing here picks
an adapter of its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cyclopts import Parameter

from memhtml.cli.output import CliError, unwrap_io

if TYPE_CHECKING:
    from memhtml.compose import Services, Settings
    from memhtml.store import Store


@Parameter(name="*")
@dataclass(frozen=True)
class Common:
    """Options every command takes."""

    store: str | None = None
    """The store directory. Default: $MEMHTML_STORE, else the git repository around
    the current directory."""
    json: bool = False
    """Print machine-readable JSON on stdout instead of text."""


NO_STORE = ("no store found: pass --store DIR, set MEMHTML_STORE, or run inside a git "
            "repository (memhtml init DIR makes one)")


def store_root(common: Common) -> Path:
    """The store directory the options name, or a failure saying how to name one."""
    from memhtml.compose import discover_store

    root = discover_store(common.store, os.environ, Path.cwd())
    if root is None:
        raise CliError(NO_STORE)
    return root


def settings_for(common: Common, overrides: dict[str, str] | None = None) -> Settings:
    """Settings of the store the options name, flags over environment over config."""
    from returns.io import IOResult

    from memhtml.compose import load_settings

    loaded = load_settings(store_root(common), overrides=overrides or {})
    return unwrap_io(IOResult.from_result(loaded), lambda error: error.reason)


def open_cli_services(common: Common, *, embedder: str | None = None,
                      overrides: dict[str, str] | None = None) -> Services:
    """The composition root's services for the store the options name; a directory
    that is not a repository, or a setting that cannot be honoured, is a failure."""
    from memhtml.compose import open_services

    return unwrap_io(open_services(settings_for(common, overrides), embedder=embedder),
                     lambda error: error.reason)


def open_common(common: Common) -> tuple[Services, Store]:
    """Services and a store over them in one step, for the commands that need both."""
    services = open_cli_services(common)
    return services, services.store()
