"""Settings: flags over environment over the store's config over the user's config.

Two kinds of setting, because a store is a git repository that people clone and
pull, and whatever it carries is untrusted input:

- **store settings** (``embedder``, ``embed_model``, the vector ones,
  ``sleep_archive_share``) describe the corpus and may travel with it, committed in
  ``<store>/.memhtml/config.toml``;
- **local settings** (``branch``, ``embed_url``, ``embed_key_env``, ``author_name``,
  ``author_email``, the ``llm*`` and ``sync*`` keys and ``transcripts_dir``) choose where
  this clone writes, send data off this machine, pick what of it is read, name a secret
  or say who the user is. They come only from flags, ``MEMHTML_*`` variables or the
  user's own ``$XDG_CONFIG_HOME/memhtml/config.toml`` (``~/.config/memhtml/config.toml``):
  a clone that named an endpoint and a key variable would otherwise receive every
  memory, and the key, the first time its reader ran ``memhtml embed``; and a pushed
  ``branch`` would move every later write of every clone that pulled it.

Precedence, most specific last wins: defaults < user config < store config (store
keys only) < environment < flags. The user's file is trusted, so a typo there is an
error; the store's file is not, so anything wrong in it is a warning and is ignored
rather than a refusal that would lock the reader out of the store.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Literal, TypeAlias

from returns.methods import unwrap_or_failure
from returns.result import Failure, Result, Success

from memhtml.contracts.vocabulary import OWN_SCOPE

ENV_STORE = "MEMHTML_STORE"
CONFIG_FILE = Path(".memhtml") / "config.toml"
EMBEDDERS = ("none", "hashing", "local", "openai")
"""The embedders a store may record (``embedder``); ``none`` searches lexically."""
"""The store's own config file, relative to the store (committed, untrusted)."""
USER_CONFIG_FILE = Path("memhtml") / "config.toml"
"""The user's config file, relative to ``$XDG_CONFIG_HOME`` (default ``~/.config``)."""
USER_CONFIG_HINT = "~/.config/memhtml/config.toml"
_ENV_PREFIX = "MEMHTML_"

Kind = Literal["store", "local"]
_STORE: Mapping[str, Kind] = {"kind": "store"}
_LOCAL: Mapping[str, Kind] = {"kind": "local"}
SCOPE_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
"""A scope's name: short, lower case, safe in a path, a flag and a JSON field."""
StoreLayer: TypeAlias = tuple[dict[str, str], tuple[str, ...]]
"""The store keys a store's file sets, and the warnings for what it tried to set."""


@dataclass(frozen=True, slots=True)
class SettingsError:
    """A store that cannot be found, or a config file of the user's that cannot be read."""

    reason: str


@dataclass(frozen=True, slots=True)
class ScopeSetting:
    """One other store this one reads: ``[scopes]`` in the user's config file."""

    name: str
    path: Path
    """Absolute, ``~`` expanded, as the user wrote it (resolved when opened)."""
    writable: bool = False
    """Whether ``--scope NAME`` (MCP ``scope``) may write to it; reads never ask."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the edges configure. Field names double as config keys
    (``branch = "main"``) and, upper-cased, as ``MEMHTML_`` variables. Each field is a
    store setting (may be committed with the store) or a local one (flags,
    environment and the user's config file only); see the module docstring."""

    store: Path
    branch: str = field(default="", metadata=_LOCAL)
    """Local setting: the branch memories are read from and written to, for this
    process. Empty (the default): the branch this clone recorded (``init`` and ``clone``
    record it in the repository's git config, ``memhtml.branch``), found when the store
    is opened. Local because a committed one, pushed by any collaborator, would move
    where every clone that pulled it writes."""
    author_name: str | None = field(default=None, metadata=_LOCAL)
    """Local setting: the commit author's name (who the user is). None (the default):
    git's own identity (``GIT_AUTHOR_NAME``, else ``user.name``), else ``memhtml``."""
    author_email: str | None = field(default=None, metadata=_LOCAL)
    """Local setting: the commit author's email. None (the default): git's own
    (``GIT_AUTHOR_EMAIL``, else ``user.email``), else ``memhtml@localhost``."""
    embed_url: str | None = field(default=None, metadata=_LOCAL)
    """Local setting: an OpenAI-compatible embeddings endpoint
    (``http://127.0.0.1:11434/v1``). Every memory and every query is sent there, so
    a store's own config file cannot name it."""
    embed_model: str | None = field(default=None, metadata=_STORE)
    """Store setting: the model id that names the vector space."""
    embed_key_env: str = field(default="MEMHTML_EMBED_API_KEY", metadata=_LOCAL)
    """Local setting: the name of the variable holding the endpoint's key (the key
    itself is never written into a config file). Local because a store naming it
    could pick any variable of the reader's environment to be sent as a token."""
    embedder: str = field(default="none", metadata=_STORE)
    """Store setting: ``none``, ``hashing``, ``local`` or ``openai``, the embedder
    that defines the vector space search uses."""
    vector_weight: str = field(default="1", metadata=_STORE)
    """Store setting: the vector arm's weight in the hybrid's fusion (the lexical arm's
    is 1), a number 0 or more; what ``memhtml eval beir --weight`` found best for the
    store's embedder on a judged split. An unusable value searches with 1, the spec's
    plain fusion, and says so."""
    vector_coverage_floor: str = field(default="0.95", metadata=_STORE)
    """Store setting: below this share of memories holding a vector, a sleep run's
    preflight warns (below 0.5 it refuses). A number in [0.5, 1]."""
    retention_grace_days: str = field(default="30", metadata=_STORE)
    """Store setting: days from a memory's ``memhtml-created`` during which a sleep
    run's retention-triage never archives it, whatever it scores. A number of days, 0
    or more (0: no grace); anything else refuses the run, which then archives nothing."""
    sleep_archive_share: str = field(default="0.1", metadata=_STORE)
    """Store setting: the most of the live memories one sleep run may archive with
    nothing standing for them (no keeper, no canonical) before ``sleep merge`` refuses
    it, naming each. A number in [0, 1]; a store that means to forget more in one night
    raises it."""
    llm: str = field(default="none", metadata=_LOCAL)
    """Local setting: the language model a sleep run's model phases ask: ``none``,
    ``openai`` (chat completions, also what local servers speak) or ``anthropic`` (the
    Messages API). Local because choosing a model sends memories to it."""
    llm_url: str | None = field(default=None, metadata=_LOCAL)
    """Local setting: the model endpoint's API base (``https://api.anthropic.com/v1``,
    ``http://127.0.0.1:8080/v1``). No address is built in: every memory a phase batches
    goes there."""
    llm_model: str | None = field(default=None, metadata=_LOCAL)
    """Local setting: the model id sent with each request. None is built in, because
    which model answers is the user's choice and cost."""
    llm_key_env: str = field(default="MEMHTML_LLM_API_KEY", metadata=_LOCAL)
    """Local setting: the name of the variable holding the model endpoint's key, read
    at each call (local for the reason ``embed_key_env`` is)."""
    llm_timeout: str = field(default="120", metadata=_LOCAL)
    """Local setting: seconds one model request may take, a positive number."""
    llm_extra_body: str | None = field(default=None, metadata=_LOCAL)
    """Local setting: a JSON object whose fields every request body also carries (a
    provider's thinking or routing switches, which are per model and not built in)."""
    llm_token_field: str = field(default="max_completion_tokens", metadata=_LOCAL)
    """Local setting: the field an ``openai`` body caps the output with,
    ``max_completion_tokens`` (OpenAI's current name) or ``max_tokens`` (what some
    local servers know instead; they ignore the other and leave the answer uncapped)."""
    llm_structured: str = field(default="auto", metadata=_LOCAL)
    """Local setting: how an ``openai`` body asks for structured output:
    ``json_schema`` (OpenAI's strict response format), ``json_object`` (with the schema,
    as llama-cpp-python takes it), ``prompt`` (the schema and an example answer in the
    prompt, for a server that constrains nothing), or ``auto`` (the default): the first,
    then the next whenever the endpoint answers that a form is not supported, and the
    one that worked is remembered for that endpoint and model in this clone's state
    (``.git/memhtml/llm-structured.json``), never in the store. Local because it is a
    property of the endpoint, which is."""
    transcripts_dir: str | None = field(default=None, metadata=_LOCAL)
    """Local setting: the directory of agent-session transcripts (one ``<session>.jsonl``
    file each) a sleep run's trace-consolidation distils into memories; an absolute
    path, ``~`` expanded. Local because it picks which files of this machine are read
    and sent to a model: a store's config naming a directory would have a clone's
    reader send that directory's files at the next run."""
    sync_remote: str | None = field(default=None, metadata=_LOCAL)
    """Local setting: the git remote the MCP server shares the store through (``origin``).
    None (the default): the server never talks to a remote. Local because pushing sends
    every memory to that remote."""
    sync_seconds: str = field(default="30", metadata=_LOCAL)
    """Local setting: with ``sync_remote``, how stale (in seconds) the last pull may be
    before a call pulls again, and how long a write waits so that the writes after it
    go out in the same push."""


def _keys(kind: Kind) -> frozenset[str]:
    return frozenset(f.name for f in fields(Settings) if f.metadata.get("kind") == kind)


STORE_KEYS = _keys("store")
"""Settings a store's committed config file may set."""
LOCAL_KEYS = _keys("local")
"""Settings only flags, ``MEMHTML_*`` variables or the user's config file may set."""
TABLE_KEYS = frozenset({"scopes"})
"""Local settings that are tables of the user's file, read by ``user_scopes``:
``scopes``, the other stores this one reads (``[scopes]``: ``team = "~/memory/team"``,
or ``[scopes.team]`` with ``path`` and ``writable = true``). Local because they pick
what is read and where writes may go: a store's committed file naming a scope would
have every clone read, and answer an agent from, a folder of the reader's machine it
chose. No ``MEMHTML_*`` variable or flag sets them."""
KNOWN_KEYS = STORE_KEYS | LOCAL_KEYS


@dataclass(frozen=True, slots=True)
class LoadedSettings:
    """Settings together with what was ignored on the way (one line each), for the
    edge to show on stderr."""

    settings: Settings
    warnings: tuple[str, ...] = ()


def discover_store(explicit: str | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """The store directory: the flag, else ``MEMHTML_STORE``, else the git repository
    around ``cwd`` (its working tree root, or the bare repository itself)."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    if env.get(ENV_STORE):
        return Path(env[ENV_STORE]).expanduser().resolve()
    here = cwd.resolve()
    chain = (here, *here.parents)
    # A checkout around cwd wins over anything shaped like a bare repository inside
    # it: such a folder is tracked content somebody committed, and taking it for the
    # store would read that content as this clone's config and state.
    for candidate in chain:
        if (candidate / ".git").exists():
            return candidate
    for candidate in chain:
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def user_config_path(env: Mapping[str, str]) -> Path | None:
    """The user's config file: ``$XDG_CONFIG_HOME/memhtml/config.toml``, else
    ``$HOME/.config/memhtml/config.toml``; None when ``env`` names no home at all.
    A relative ``XDG_CONFIG_HOME`` is ignored, as the XDG spec asks."""
    xdg = env.get("XDG_CONFIG_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / USER_CONFIG_FILE
    home = env.get("HOME") or env.get("USERPROFILE")
    return Path(home) / ".config" / USER_CONFIG_FILE if home else None


def _read_toml(path: Path) -> Result[dict[str, object], str]:
    """The table in ``path``; an empty one when there is no file; why it cannot be read."""
    try:
        if not path.exists():
            return Success({})
        if not path.is_file():
            # A FIFO or a device would block or never end; only a regular file is read.
            return Failure(f"cannot read {path}: not a regular file")
        return Success(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return Failure(f"cannot read {path}: {exc}")


UserLayer: TypeAlias = tuple[dict[str, str], tuple[ScopeSetting, ...]]
"""The string keys of the user's file, and its scopes."""


def _checked_user_table(path: Path, table: dict[str, object]
                        ) -> Result[UserLayer, SettingsError]:
    scopes = _scopes_of(path, table.pop("scopes", {}))
    if isinstance(scopes, SettingsError):
        return Failure(scopes)
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        return Failure(SettingsError(f"unknown keys in {path}: {', '.join(unknown)}"))
    wrong = sorted(f"{name} must be a string, not {type(value).__name__}"
                   for name, value in table.items() if not isinstance(value, str))
    if wrong:
        return Failure(SettingsError(f"in {path}: {'; '.join(wrong)}"))
    return Success(({name: str(value) for name, value in table.items()}, scopes))


_SCOPE_KEYS = frozenset({"path", "writable"})


def _scopes_of(path: Path, table: object) -> tuple[ScopeSetting, ...] | SettingsError:
    """``[scopes]`` of the user's file: ``name = "path"`` (read only) or a table with
    ``path`` and ``writable``; every problem named at once, since the file is the
    user's to fix."""
    if not isinstance(table, dict):
        return SettingsError(f"in {path}: scopes must be a table ([scopes], name = "
                             f"\"~/path\"), not {type(table).__name__}")
    problems: list[str] = []
    found: list[ScopeSetting] = []
    for name, value in sorted(table.items()):
        entry = value if isinstance(value, dict) else {"path": value}
        where = f"scope {name!r}"
        if not SCOPE_NAME.fullmatch(name):
            problems.append(f"{where}: a name is a lower-case letter, then up to 31 "
                            f"letters, digits, - or _")
            continue
        if name == OWN_SCOPE:
            problems.append(f"{where}: {OWN_SCOPE} names this store itself; pick another "
                            f"name")
            continue
        extra = sorted(set(entry) - _SCOPE_KEYS)
        if extra:
            problems.append(f"{where}: unknown keys {', '.join(map(repr, extra))} (a scope "
                            f"has path and writable)")
            continue
        where_to, writable = entry.get("path"), entry.get("writable", False)
        if not isinstance(where_to, str) or not where_to.strip():
            problems.append(f"{where}: path must be a directory's path as a string")
            continue
        if not isinstance(writable, bool):
            problems.append(f"{where}: writable must be true or false")
            continue
        try:
            folder = Path(where_to).expanduser()
        except RuntimeError as exc:  # ~user with no such user
            problems.append(f"{where}: path {where_to!r}: {exc}")
            continue
        if not folder.is_absolute():
            problems.append(f"{where}: path {where_to!r} must be absolute (or start with ~): "
                            f"a relative one would name another folder in each directory")
            continue
        found.append(ScopeSetting(name, folder, writable))
    if problems:
        return SettingsError(f"in {path}: " + "; ".join(problems))
    return tuple(found)


def _user_layer(path: Path | None) -> Result[UserLayer, SettingsError]:
    """The user's file, every key known and a string (``scopes`` a table of them): it
    is trusted, so a mistake in it is the user's to fix and is not passed over."""
    if path is None:
        return Success(({}, ()))
    return _read_toml(path).alt(SettingsError).bind(
        lambda table: _checked_user_table(path, table))


def _store_keys(path: Path, table: dict[str, object], user_path: Path | None
                ) -> StoreLayer:
    warnings: list[str] = []
    # Key names are the file's own text: repr() keeps control characters out of the
    # reader's terminal.
    unknown = sorted(repr(name) for name in set(table) - KNOWN_KEYS - TABLE_KEYS)
    if unknown:
        warnings.append(f"ignored unknown keys in {path}: {', '.join(unknown)}")
    local = sorted(set(table) & (LOCAL_KEYS | TABLE_KEYS))
    if local:
        warnings.append(
            f"ignored {', '.join(local)} in {path}: settings that choose the branch this "
            f"clone writes, send data off this machine, name secrets or say who you are "
            f"come only from flags, MEMHTML_* variables or {user_path or USER_CONFIG_HINT}")
    kept: dict[str, str] = {}
    for name in sorted(set(table) & STORE_KEYS):
        value = table[name]
        if isinstance(value, str):
            kept[name] = value
        else:
            warnings.append(
                f"ignored {name} in {path}: must be a string, not {type(value).__name__}")
    return kept, tuple(warnings)


def _store_layer(path: Path, user_path: Path | None
                 ) -> StoreLayer:
    """The store keys of the store's file, and a warning for everything else in it.

    Nothing here fails: the file came with a clone, and a key a newer memhtml added,
    or one planted to redirect data, must not lock the reader out of the store."""
    def unreadable(reason: str) -> StoreLayer:
        return {}, (f"{reason}; its settings are ignored",)

    outside = _leaves_store(path)
    if outside is not None:
        return unreadable(outside)
    return unwrap_or_failure(_read_toml(path).map(
        lambda table: _store_keys(path, table, user_path)).alt(unreadable))


MARKER_FILE = Path(".memhtml") / "store.toml"
"""The committed marker ``memhtml init`` writes (``memhtml.store.layout.MARKER``)."""
TRAVELLING_ENTRIES = frozenset({CONFIG_FILE.name, MARKER_FILE.name, "sleep", "state"})
"""What ``.memhtml/`` holds on purpose and may carry in a clone: the store's settings,
its marker, the sleep run's reports and ledgers, the exported access log. None of it
is state."""


def _leaves_store(config: Path) -> str | None:
    """Why the store's config file must not be read: ``.memhtml`` or the file itself is
    a symbolic link (a repository can commit one pointing anywhere on this machine)."""
    for part in (config.parent, config):
        if part.is_symlink():
            return f"{part} is a symbolic link, which a repository could point anywhere"
    return None


def _stray_state(folder: Path) -> tuple[str, ...]:
    """A warning naming what sits in the working tree's ``.memhtml/`` besides what
    travels with a store: snapshots, vectors or anything else there (committed by
    whoever made the repository, or left by an older release) are never read as
    state."""
    if folder.is_symlink():
        return (f"ignored {folder}: a symbolic link, which a repository could point "
                "anywhere; nothing behind it is read",)
    try:
        names = sorted(entry.name for entry in folder.iterdir()
                       if entry.name not in TRAVELLING_ENTRIES)
    except OSError:
        return ()
    if not names:
        return ()
    shown = ", ".join(repr(name) for name in names[:10]) + (" ..." if len(names) > 10 else "")
    return (f"ignored {shown} in {folder}: this clone's state (snapshots, vectors) lives "
            "under the git directory (.git/memhtml), and nothing a repository carries is "
            "read as state",)


def load_settings(
    store: Path, env: Mapping[str, str], overrides: Mapping[str, str] | None = None
) -> Result[LoadedSettings, SettingsError]:
    r"""Settings for ``store``, with what was ignored: defaults, then the user's config
    file (any key), then the store's ``.memhtml/config.toml`` (store keys only), then
    ``MEMHTML_*`` variables of ``env``, then ``overrides`` (the caller's flags).

    The user's file failing to parse, or holding an unknown key or a non-string
    value, is an error naming it. The store's file never is: an unreadable file,
    a local or unknown key, or a value of the wrong type is ignored with a warning.

    A store's file may choose the embedder but not the branch; a variable beats the
    file, and an unknown flag is an error (``env`` here names no home, so no user
    file is read):

    >>> import tempfile
    >>> from pathlib import Path
    >>> from memhtml.compose import load_settings
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = Path(tmp.name)
    >>> (store / ".memhtml").mkdir()
    >>> _ = (store / ".memhtml" / "config.toml").write_text(
    ...     'embedder = "hashing"\nbranch = "elsewhere"\n')
    >>> loaded = load_settings(store, {"MEMHTML_AUTHOR_NAME": "Ada"}).unwrap()
    >>> loaded.settings.embedder, loaded.settings.branch, loaded.settings.author_name
    ('hashing', '', 'Ada')
    >>> print(loaded.warnings[0])
    ignored branch in ...config.toml: settings that choose the branch this clone writes, ...
    >>> load_settings(store, {"MEMHTML_EMBEDDER": "none"}).unwrap().settings.embedder
    'none'
    >>> load_settings(store, {}, {"colour": "red"})
    <Failure: SettingsError(reason='unknown setting colour')>
    >>> tmp.cleanup()
    """
    flags = dict(overrides or {})
    unknown = sorted(set(flags) - KNOWN_KEYS)
    if unknown:
        return Failure(SettingsError(f"unknown setting {', '.join(unknown)}"))
    user_path = user_config_path(env)
    committed, warnings = _store_layer(store / CONFIG_FILE, user_path)
    warnings = (*warnings, *_stray_state(store / CONFIG_FILE.parent))
    from_env = {name: env[_ENV_PREFIX + name.upper()]
                for name in sorted(KNOWN_KEYS) if _ENV_PREFIX + name.upper() in env}

    def layered(user: UserLayer) -> LoadedSettings:
        keys, _scopes = user
        settings = Settings(store=store)
        for layer in (keys, committed, from_env, flags):
            # Every key is a known field and every value a string (checked above).
            settings = replace(settings, **layer)  # type: ignore[arg-type]
        return LoadedSettings(settings, warnings)

    return _user_layer(user_path).map(layered)


def user_scopes(env: Mapping[str, str]) -> Result[tuple[ScopeSetting, ...], SettingsError]:
    r"""The scopes of the user's config file (``[scopes]``), sorted by name; none
    without a file. A mistake in the table is an error naming every problem (the file
    is the user's own, as ``load_settings`` treats it).

    >>> import tempfile
    >>> from pathlib import Path
    >>> from memhtml.compose.settings import user_scopes
    >>> tmp = tempfile.TemporaryDirectory()
    >>> (Path(tmp.name) / "memhtml").mkdir()
    >>> _ = (Path(tmp.name) / "memhtml" / "config.toml").write_text(
    ...     '[scopes]\nteam = "/srv/team"\n[scopes.shared]\npath = "/srv/shared"\n'
    ...     'writable = true\n')
    >>> [(s.name, str(s.path), s.writable) for s in
    ...  user_scopes({"XDG_CONFIG_HOME": tmp.name}).unwrap()]
    [('shared', '/srv/shared', True), ('team', '/srv/team', False)]
    >>> tmp.cleanup()
    """
    return _user_layer(user_config_path(env)).map(lambda layer: layer[1])
