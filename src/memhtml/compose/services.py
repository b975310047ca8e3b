"""The composition root: one ``Services`` value, picked from ``Settings``.

This is the only module that chooses an implementation of a service Protocol (the
pygit2 repository, the system clock, an embedder, the vector files, the
fence-language detector of ``compose.detection``). Both edges (the CLI and the MCP
server) open a ``Services`` and hand it, or the ``Store`` it builds, to the core; the
core only ever sees the Protocols.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Never

from returns.io import IOFailure, IOResult, IOSuccess
from returns.pipeline import is_successful
from returns.result import Failure, Result, Success
from returns.unsafe import unsafe_perform_io

from memhtml.compose.settings import (
    CONFIG_FILE,
    EMBEDDERS,
    USER_CONFIG_HINT,
    Settings,
    SettingsError,
)
from memhtml.compose.stores import (
    AGENT,
    branch_without_store,
    init_branch,
    person,
    store_branch,
)
from memhtml.compose.vectors import Arm, Coverage, TopUp, coverage_of, top_up, vector_arm
from memhtml.contracts.journals import Journals
from memhtml.contracts.local_state import LocalState
from memhtml.contracts.services import (
    Clock,
    GitService,
    LanguageModel,
    QueryEmbedder,
    RemoteService,
    Repository,
    Signature,
    StatePlane,
    VectorSpace,
)

if TYPE_CHECKING:
    from memhtml.adapters.git import PygitService
    from memhtml.contracts.vectors import VectorCacheFault, VectorCacheStore
    from memhtml.contracts.view import HeadView
    from memhtml.mdindex import CorpusReader
    from memhtml.store import Store, StoreDeps
    from memhtml.store.deps import Detector
    from memhtml.store.snapshot import SnapshotCache

STATE_DIR = "memhtml"
"""This clone's own state, under the git directory (``.git/memhtml`` of a checkout,
``<repo>/memhtml`` of a bare repository): git never transfers it, so a clone or a
pull cannot supply a cache, and a file committed under ``.memhtml/`` is never read
as state."""
VECTORS_DIR = "vectors"
STATE_DB = "state.db"
"""The sleep run's state (corroboration counters, consolidation watermarks, the access
log) in ``<git-dir>/memhtml/``: data no commit can give back, never a tracked file."""
LANGUAGE_MODELS = ("none", "openai", "anthropic")


@dataclass(frozen=True)
class Services:
    """Everything outside the pure core that one process talks to.

    Built once per process by ``open_services``; the fields are the Protocols the
    core takes, so a test can build one from doubles just as well.
    """

    settings: Settings
    """The settings the services were built from; ``branch`` is the store's branch as
    found when it was opened (the marker's, unless one was configured)."""
    git: GitService
    clock: Clock
    author: Signature
    """Who door commits are authored by: the person (the ``author_*`` settings, else
    git's identity), else memhtml."""
    vectors: VectorCacheStore
    """This clone's vector cache (on disk: ``VectorFiles``), one set per vector space."""
    embedder: Result[QueryEmbedder | None, SettingsError]
    """The configured embedder (None: search is lexical only, ``embedder = "none"``),
    or why it cannot be built. Kept as a result so a store whose embedder is not
    usable on this machine still reads and writes; only the vector arm does without."""
    embedder_name: str
    detect: Detector | None
    """The fence-language guess writes use (``compose.detection``): the content
    classifier of the ``local`` extra, else the lexer race pinned to one Pygments."""
    state_dir: Path | None
    """This clone's own state (snapshots, vectors); None keeps none."""
    git_dir: Path | None
    worktree: Path | None
    """The checkout to keep up to date after each commit; None for a bare repository."""
    journals: Journals | None
    """The checkout's marks of writes in flight, on disk under the git directory; None
    without a checkout."""
    language_model: LanguageModel | None = None
    """The curation run's model (``llm`` and its keys); None with ``llm = "none"`` or
    when the settings cannot build one (then ``language_model_error`` says why)."""
    language_model_error: SettingsError | None = None
    """Why the configured model cannot be built (a missing ``llm_model`` or ``llm_url``,
    a bad timeout or extra body). Kept apart so a store whose model settings are wrong
    still reads and writes; a run that would ask the model refuses with it."""
    state: StatePlane | None = None
    """This clone's sleep state; None keeps none (and the read doors log no access).
    The database opens on its first call, so a command that never asks costs nothing."""
    agent: Signature = AGENT
    """memhtml itself: the committer of every commit and the author of a sleep run's,
    which no person wrote."""
    remote: RemoteService | None = None
    """Fetch and push for ``sync``, against the remotes this clone's git config names;
    None where a process has no repository on disk to run git in."""

    def store_deps(self) -> StoreDeps:
        from memhtml.store import StoreDeps

        return StoreDeps(git=self.git, clock=self.clock, author=self.author,
                         branch=self.settings.branch, worktree=self.worktree,
                         git_dir=self.git_dir, detect=self.detect, state=self.state,
                         journals=self.journals, snapshots=self.snapshots(),
                         local=self.local_state())

    def snapshots(self) -> SnapshotCache | None:
        """This clone's snapshots, on disk under ``state_dir`` (a damaged text read
        again from this repository); None without a state directory."""
        from memhtml.adapters.snapshot_files import SnapshotFiles

        return None if self.state_dir is None else SnapshotFiles(self.state_dir,
                                                                 blob_reader(self.git))

    def local_state(self) -> LocalState | None:
        """This clone's own directory on disk; None without one."""
        from memhtml.adapters.local_state_files import LocalStateFiles

        return None if self.state_dir is None else LocalStateFiles(self.state_dir)

    def store(self) -> Store:
        """A fresh store handle over these services (it caches its own head)."""
        from memhtml.store import Store

        return Store(self.store_deps())

    def embedder_space(self, resolve: bool) -> IOResult[VectorSpace | None, SettingsError]:
        """The embedder's vector space; None with no embedder. An endpoint of unknown
        width is asked once when ``resolve``, else has no space yet (None)."""
        return IOResult.from_result(self.embedder).bind(
            lambda embedder: space_of(embedder, resolve))

    def coverage(self, view: HeadView
                 ) -> IOResult[Coverage | None, SettingsError | VectorCacheFault]:
        """How much of ``view`` the configured embedder's cache covers (None with no
        embedder), or why the embedder or its cache cannot be used here."""

        def measured(embedder: QueryEmbedder | None
                     ) -> IOResult[Coverage | None, SettingsError | VectorCacheFault]:
            space: IOResult[VectorSpace | None, SettingsError | VectorCacheFault] = space_of(
                embedder, resolve=False)
            return space.bind(lambda found: coverage_of(self.vectors, embedder,
                                                        self.embedder_name, found, view))

        chosen: IOResult[QueryEmbedder | None, SettingsError | VectorCacheFault] = \
            IOResult.from_result(self.embedder)
        return chosen.bind(measured)

    def vector_arm(self, view: HeadView, query: str) -> IOResult[Arm, Never]:
        """The vector arm for ``query`` over ``view``, or why search stays lexical."""

        def armed(embedder: QueryEmbedder | None
                  ) -> IOResult[Arm, SettingsError | VectorCacheFault]:
            space: IOResult[VectorSpace | None, SettingsError | VectorCacheFault] = space_of(
                embedder, resolve=False)
            return space.bind(lambda found: vector_arm(
                self.vectors, embedder, found, view, query, self.changed_paths))

        chosen: IOResult[QueryEmbedder | None, SettingsError | VectorCacheFault] = \
            IOResult.from_result(self.embedder)
        return chosen.bind(armed).lash(
            lambda error: IOSuccess(Arm(None, f"{error.reason}; searched lexically")))


    def changed_paths(self, old: str, new: str) -> tuple[str, ...] | None:
        """The paths two commits' trees differ on, or None when git cannot say: what
        carries a vector set's coverage claim from one commit to another."""
        found = self.git.changed_paths(old, new)
        return unsafe_perform_io(found.unwrap()) if is_successful(found) else None

    def preload_embedder(self) -> None:
        """Start loading the offline model now, on a thread of its own, when this
        command will embed (a write door: ``top_up``); a no-op for any other
        embedder, which has nothing to load."""
        from memhtml.adapters.embedders import LocalEmbedder

        embedder = self.embedder.value_or(None)
        if isinstance(embedder, LocalEmbedder):
            embedder.preload()

    def top_up(self, view: HeadView, paths: Collection[str] = ()) -> IOResult[TopUp, Never]:
        """Embed what a door just landed at ``paths`` (and every other missing memory
        when few are missing) into the configured embedder's cache: ``top_up``. A
        note, never a failure, when it cannot: the door's commit stands."""

        def topped(embedder: QueryEmbedder | None
                   ) -> IOResult[TopUp, SettingsError | VectorCacheFault]:
            space: IOResult[VectorSpace | None, SettingsError | VectorCacheFault] = space_of(
                embedder, resolve=False)
            return space.bind(lambda found: top_up(self.vectors, embedder, found, view, paths,
                                                   self.changed_paths))

        chosen: IOResult[QueryEmbedder | None, SettingsError | VectorCacheFault] = \
            IOResult.from_result(self.embedder)
        return chosen.bind(topped).lash(
            lambda error: IOSuccess(TopUp(note=f"vectors not embedded ({error.reason})")))


def blob_reader(git: Repository) -> Callable[[str], bytes | None]:
    """One blob by id, read now through the ``Repository`` port (``None`` when git
    cannot): how the snapshot cache reads again a text found damaged after the load.
    Built here, where IO may be run."""

    def read(blob_sha: str) -> bytes | None:
        found = git.read_blobs([blob_sha])
        return unsafe_perform_io(found.unwrap()).get(blob_sha) if is_successful(found) \
            else None

    return read


def space_of(embedder: QueryEmbedder | None, resolve: bool
             ) -> IOResult[VectorSpace | None, SettingsError]:
    if embedder is None:
        # Before the import: the adapter module (HTTP client and all) costs a cold
        # search without an embedder 14 ms it has no use for.
        return IOSuccess(None)
    from memhtml.adapters.embedders import OpenAICompatibleEmbedder

    if not isinstance(embedder, OpenAICompatibleEmbedder) or embedder.known_width:
        return IOSuccess(embedder.space)
    if not resolve:
        return IOSuccess(None)
    resolved: IOResult[VectorSpace | None, SettingsError] = embedder.resolve_space().alt(
        lambda e: SettingsError(f"embedder {e.model_id}: {e.reason}"))
    return resolved


def pick_embedder(settings: Settings, vectors: VectorCacheStore, name: str | None = None,
                  env: Mapping[str, str] | None = None
                  ) -> Result[QueryEmbedder | None, SettingsError]:
    """The embedder ``name`` (default: the settings') names; None for ``none``.

    An endpoint's width is taken from a file set already saved for its model, so a
    query does not cost a probe call.
    """
    chosen = name or settings.embedder
    if chosen == "none":
        return Success(None)
    if chosen == "hashing":
        from memhtml.adapters.embedders import HashingEmbedder

        return Success(HashingEmbedder())
    if chosen == "local":
        from memhtml.adapters.embedders import LocalEmbedder

        return Success(LocalEmbedder())
    if chosen == "openai":
        from memhtml.adapters.embedders import OpenAICompatibleEmbedder

        if not settings.embed_url or not settings.embed_model:
            wanted = (("embed_url", settings.embed_url,
                       f"set it in {USER_CONFIG_HINT} or MEMHTML_EMBED_URL; a store's own "
                       f"config cannot name it"),
                      ("embed_model", settings.embed_model,
                       f"set it in the store's {CONFIG_FILE.as_posix()}, {USER_CONFIG_HINT} "
                       f"or MEMHTML_EMBED_MODEL"))
            return Failure(SettingsError("the openai embedder needs " + "; ".join(
                f"{key} ({where})" for key, value, where in wanted if not value)))
        from memhtml.contracts.vectors import widest_space

        environ = os.environ if env is None else env
        saved = widest_space(vectors.saved_spaces(), settings.embed_model)
        return Success(OpenAICompatibleEmbedder(
            settings.embed_url, settings.embed_model,
            api_key=environ.get(settings.embed_key_env),
            dimension=saved.dimension if saved else None))
    return Failure(SettingsError(f"unknown embedder {chosen!r} ({', '.join(EMBEDDERS)})"))


def pick_language_model(settings: Settings, clock: Clock,
                        env: Mapping[str, str] | None = None,
                        state_dir: Path | None = None
                        ) -> Result[LanguageModel | None, SettingsError]:
    """The model the ``llm*`` settings name; None for ``llm = "none"``; or what is
    missing or wrong, every problem named at once. No model id or address is built
    in. ``env`` replaces ``os.environ`` as where the key is read, at each call;
    ``state_dir`` is where ``llm_structured = auto`` remembers what the endpoint
    takes (None: nothing is remembered)."""
    chosen = settings.llm
    if chosen == "none":
        return Success(None)
    if chosen not in LANGUAGE_MODELS:
        return Failure(SettingsError(
            f"unknown llm {chosen!r} ({', '.join(LANGUAGE_MODELS)})"))
    from memhtml.adapters.llm import (
        STRUCTURED_MEMORY_FILE,
        STRUCTURED_SETTINGS,
        HttpLanguageModel,
        url_problem,
    )
    from memhtml.llm import OPENAI_TOKEN_FIELDS

    missing = [key for key, value in (("llm_url", settings.llm_url),
                                      ("llm_model", settings.llm_model)) if not value]
    problems: list[str] = []
    if missing:
        them = "it" if len(missing) == 1 else "them"
        variables = " or ".join(f"MEMHTML_{key.upper()}" for key in missing)
        problems.append(f"llm = {chosen} needs {' and '.join(missing)}: set {them} in "
                        f"{USER_CONFIG_HINT} or {variables} (a store's own config cannot "
                        f"name {them})")
    if settings.llm_url and (bad_url := url_problem(settings.llm_url)) is not None:
        problems.append(bad_url)
    timeout = _positive_seconds(settings.llm_timeout)
    if timeout is None:
        problems.append(f"llm_timeout must be a positive number of seconds, not "
                        f"{settings.llm_timeout!r}")
    extra = _json_object(settings.llm_extra_body)
    if isinstance(extra, str):
        problems.append(extra)
    token_field = settings.llm_token_field
    if token_field not in OPENAI_TOKEN_FIELDS:
        problems.append(f"llm_token_field must be {' or '.join(OPENAI_TOKEN_FIELDS)}, not "
                        f"{token_field!r}")
    structured = next((form for form in STRUCTURED_SETTINGS
                       if form == settings.llm_structured), None)
    if structured is None:
        problems.append(f"llm_structured must be {', '.join(STRUCTURED_SETTINGS)}, not "
                        f"{settings.llm_structured!r}")
    if problems or timeout is None or isinstance(extra, str) or structured is None \
            or not settings.llm_url or not settings.llm_model:
        return Failure(SettingsError("; ".join(problems)))
    return Success(HttpLanguageModel(
        "anthropic" if chosen == "anthropic" else "openai", settings.llm_url,
        settings.llm_model, settings.llm_key_env or None, timeout, extra, clock,
        token_field="max_tokens" if token_field == "max_tokens" else "max_completion_tokens",
        structured=structured,
        memory=None if state_dir is None else state_dir / STRUCTURED_MEMORY_FILE,
        environ=env))


def _positive_seconds(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def _json_object(text: str | None) -> dict[str, object] | str:
    """``llm_extra_body`` as a mapping, or why it is not a JSON object."""
    from memhtml.llm import parse_json

    if text is None or not text.strip():
        return {}
    parsed = parse_json(text)
    if not is_successful(parsed):
        return f"llm_extra_body is {parsed.failure()}"
    value = parsed.unwrap()
    if not isinstance(value, dict):
        return f"llm_extra_body must be a JSON object, not {type(value).__name__}"
    return value


def open_services(settings: Settings, *, clock: Clock | None = None,
                  embedder: str | None = None, require_store: bool = True,
                  env: Mapping[str, str] | None = None) -> IOResult[Services, SettingsError]:
    """The services for the store ``settings`` names: a checkout (``.git`` inside) or
    a bare repository. ``clock`` replaces the system clock (the demo, tests);
    ``embedder`` replaces the configured embedder for this process; ``env`` replaces
    ``os.environ`` where git's identity variables are read.

    Every command but ``init`` passes through here, so this is where a repository
    that is not a store is refused (``NotAStore``), before anything is read or
    written, and where the branch every door writes is chosen: this clone's own record
    (``store_branch``), never a committed file's, never a sleep run's.
    ``require_store=False`` is for making one: the branch is then the configured one,
    else the recorded one, else the one HEAD names."""
    root = settings.store

    def branch_of(git: PygitService) -> IOResult[str, SettingsError]:
        if require_store:
            return store_branch(git, settings.branch, root)
        return branch_without_store(git, settings.branch)

    return _opened(root).bind(lambda git: branch_of(git).map(
        lambda branch: _wire(replace(settings, branch=branch), git, clock, embedder,
                             os.environ if env is None else env)))


def open_for_init(settings: Settings, branch: str = "", *, clock: Clock | None = None,
                  env: Mapping[str, str] | None = None) -> IOResult[Services, SettingsError]:
    """The services ``init`` makes a store with: on ``branch`` (``--branch``), else the
    configured branch, else the branch HEAD names, HEAD pointed at it when it was
    unborn (see ``init_branch``). Refused (``InitRefused``) when HEAD is detached or on
    another branch."""
    root = settings.store

    def chosen(git: PygitService) -> IOResult[Services, SettingsError]:
        is_bare = not (root / ".git").exists()
        return init_branch(git, branch or settings.branch, is_bare).map(
            lambda name: _wire(replace(settings, branch=name), git, clock, None,
                               os.environ if env is None else env))

    return _opened(root).bind(chosen)


def _opened(root: Path) -> IOResult[PygitService, SettingsError]:
    from memhtml.adapters.git import PygitService

    is_checkout = (root / ".git").exists()
    opened: IOResult[PygitService, SettingsError] = PygitService.open(
        root / ".git" if is_checkout else root).alt(
        lambda error: SettingsError(f"no git repository at {root}: {error.reason}"))
    return opened


def _wire(settings: Settings, git: PygitService, clock: Clock | None, embedder: str | None,
          env: Mapping[str, str]) -> Services:
    from memhtml.adapters.clock import SystemClock
    from memhtml.adapters.git_remote import GitRemotes
    from memhtml.adapters.journal_files import JournalFiles
    from memhtml.adapters.state_db import SqliteStatePlane
    from memhtml.adapters.vector_cache import VectorFiles
    from memhtml.compose.detection import fence_detector

    root = settings.store
    is_checkout = (root / ".git").exists()
    state_dir = Path(git.path) / STATE_DIR
    vectors = VectorFiles(state_dir / VECTORS_DIR)
    chosen_clock = clock or SystemClock()
    model = pick_language_model(settings, chosen_clock, state_dir=state_dir)
    return Services(
        settings=settings, git=git.with_committer(AGENT), clock=chosen_clock,
        author=person(settings, git, env),
        vectors=vectors, embedder=pick_embedder(settings, vectors, embedder),
        embedder_name=embedder or settings.embedder, detect=fence_detector(),
        state_dir=state_dir, git_dir=Path(git.path), worktree=root if is_checkout else None,
        journals=JournalFiles(Path(git.path)) if is_checkout else None,
        state=SqliteStatePlane(state_dir / STATE_DB), remote=GitRemotes(git.path),
        language_model=model.unwrap() if is_successful(model) else None,
        language_model_error=None if is_successful(model) else model.failure())


def init_repository(root: Path, *, bare: bool = False) -> IOResult[GitService, SettingsError]:
    """A new, empty git repository at ``root`` (made when missing)."""
    from memhtml.adapters.git import PygitService

    made: IOResult[GitService, SettingsError] = PygitService.init(root, bare=bare).alt(
        lambda error: SettingsError(f"git init failed: {error.reason}"))
    return made


def is_repository(root: Path) -> bool:
    """True for a checkout (``.git`` inside) or a bare repository."""
    return (root / ".git").exists() or ((root / "HEAD").is_file() and (root / "objects").is_dir())


def markdown_reader(root: Path) -> IOResult[CorpusReader, SettingsError]:
    """A reader over a markdown directory on disk, for the indexer and the import."""
    from memhtml.adapters.mdfs import DirectoryReader

    if not root.is_dir():
        return IOFailure(SettingsError(f"{root} is not a directory"))
    return IOSuccess(DirectoryReader(root))


def sync_policy(settings: Settings) -> Result[tuple[str, float] | None, SettingsError]:
    """The remote and the interval the MCP server syncs with, None when ``sync_remote``
    is unset, or why ``sync_seconds`` cannot be used."""
    if not settings.sync_remote:
        return Success(None)
    seconds = _positive_seconds(settings.sync_seconds)
    if seconds is None:
        return Failure(SettingsError(f"sync_seconds must be a positive number of seconds, "
                                     f"not {settings.sync_seconds!r}"))
    return Success((settings.sync_remote, seconds))
