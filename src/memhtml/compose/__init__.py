"""The composition root: settings from flags, environment and config, turned into deps.

The only place that picks service implementations. Both edges (the CLI and the MCP
server) call ``open_store``; nothing below them reads configuration or chooses an
adapter.
"""

from memhtml.compose.settings import (
    CONFIG_FILE,
    ENV_STORE,
    Settings,
    SettingsError,
    discover_store,
    load_settings,
)
from memhtml.compose.wiring import open_store

__all__ = [
    "CONFIG_FILE",
    "ENV_STORE",
    "Settings",
    "SettingsError",
    "discover_store",
    "load_settings",
    "open_store",
]
