"""Settings: command-line flags over environment variables over ``.memhtml/config.toml``.

Precedence is the usual one, most specific first: a flag the caller passed wins,
then a ``MEMHTML_*`` variable, then the store's own config file, then the default.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path

from returns.result import Failure, Result, Success

ENV_STORE = "MEMHTML_STORE"
CONFIG_FILE = Path(".memhtml") / "config.toml"
_ENV_PREFIX = "MEMHTML_"


@dataclass(frozen=True, slots=True)
class SettingsError:
    """A store that cannot be found, or a config file that cannot be read."""

    reason: str


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the edges configure. Field names double as config keys
    (``branch = "main"``) and, upper-cased, as ``MEMHTML_`` variables."""

    store: Path
    branch: str = "main"
    author_name: str = "memhtml"
    author_email: str = "memhtml@localhost"
    embed_url: str | None = None
    """An OpenAI-compatible embeddings endpoint (``http://127.0.0.1:11434/v1``)."""
    embed_model: str | None = None
    embed_key_env: str = "MEMHTML_EMBED_API_KEY"
    """The name of the variable holding the endpoint's key: the key itself is never
    written into a config file."""
    embedder: str = "none"
    """``none``, ``hashing``, ``local`` or ``openai``: which vector space search uses."""


def discover_store(explicit: str | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """The store directory: the flag, else ``MEMHTML_STORE``, else the git repository
    around ``cwd`` (its working tree root, or the bare repository itself)."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    if env.get(ENV_STORE):
        return Path(env[ENV_STORE]).expanduser().resolve()
    here = cwd.resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def _coerce(name: str, value: object) -> Result[object, SettingsError]:
    if not isinstance(value, str):
        return Failure(SettingsError(f"config key {name!r} must be a string, not {value!r}"))
    return Success(value)


def load_settings(
    store: Path, env: Mapping[str, str] | None = None, overrides: Mapping[str, str] | None = None
) -> Result[Settings, SettingsError]:
    """Settings for ``store``: defaults, then its config file, then the environment,
    then ``overrides`` (the caller's flags). An unreadable config file is an error,
    not a silent default, and so is an unknown key (a typo would otherwise be ignored)."""
    environ = os.environ if env is None else env
    settings = Settings(store=store)
    known = {f.name for f in fields(Settings)} - {"store"}
    path = store / CONFIG_FILE
    layers: list[Mapping[str, object]] = []
    if path.is_file():
        try:
            layers.append(tomllib.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            return Failure(SettingsError(f"cannot read {path}: {exc}"))
        unknown = sorted(set(layers[0]) - known)
        if unknown:
            return Failure(SettingsError(f"unknown keys in {path}: {', '.join(unknown)}"))
    layers.append({
        name: environ[_ENV_PREFIX + name.upper()]
        for name in known
        if _ENV_PREFIX + name.upper() in environ
    })
    layers.append(dict(overrides or {}))
    for layer in layers:
        for name, value in layer.items():
            if name not in known:
                return Failure(SettingsError(f"unknown setting {name!r}"))
            match _coerce(name, value):
                case Success(coerced):
                    settings = replace(settings, **{name: coerced})
                case Failure(error):
                    return Failure(error)
    return Success(settings)
