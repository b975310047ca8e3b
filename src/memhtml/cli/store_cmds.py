"""The write commands: init, write, correct, archive, link/unlink, label/unlabel, move,
restore, publish. Each is one door of ``memhtml.store``, so each success is one commit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memhtml.cli.choices import EmbedderName
from memhtml.cli.common import Common, open_common, with_vectors
from memhtml.cli.inputs import MemoryFields, write_input
from memhtml.cli.landed import landed_reply
from memhtml.cli.output import CliError, Reply, UsageError, respond, store_value, unwrap_io

if TYPE_CHECKING:
    from collections.abc import Callable

    from returns.io import IOResult

    from memhtml.store import Landed, Store, StoreError

_COMMON = Common()
_FIELDS = MemoryFields()


def _door(common: Common, call: Callable[[Store], IOResult[Landed, StoreError]],
          nothing: str = "nothing to commit") -> int:
    def body() -> Reply:
        services, store = open_common(common)
        services.preload_embedder()  # overlaps the door's own work
        landed = store_value(call(store))
        return with_vectors(services, store, landed, landed_reply(landed, nothing))

    return respond(common.json, body)


def init(directory: Path | None = None, /, *, branch: str = "",
         embedder: EmbedderName | None = None, common: Common = _COMMON) -> int:
    """Make a directory a store: a git repository (or the existing one), and on its
    branch one commit with the store marker (.memhtml/store.toml), the layout
    directories, .gitattributes for generated pages and .gitignore for .memhtml/.
    The store lives on the branch checked out, whatever its name, recorded as this
    clone's own (git config memhtml.branch): a pulled commit never moves it.

    Parameters
    ----------
    directory
        Where the store goes (default: --store, else the current directory).
    branch
        The store's branch (default: the one HEAD names; a new repository starts
        on main). In a repository with commits, HEAD must already be on it.
    embedder
        The embedder a new store records in .memhtml/config.toml, so search is
        hybrid from the first write (default: $MEMHTML_EMBEDDER when set, else
        local, the offline model shipped with memhtml, when its runtime is
        installed; none searches lexically and records nothing). An existing
        store's settings are left as they are.
    """
    import os

    def body() -> Reply:
        from memhtml.cli.common import open_cli_init
        from memhtml.compose import (
            CONFIG_FILE,
            ENV_STORE,
            init_repository,
            is_repository,
            record_branch,
        )
        from memhtml.compose.vectors import default_embedder, settings_file
        from memhtml.contracts import PathChange
        from memhtml.store import init_store

        if common.scope is not None:
            raise UsageError("init makes the store it is given; --scope names a store "
                             "that exists")
        root = (directory or (Path(common.store) if common.store else None)
                or (Path(os.environ[ENV_STORE]) if os.environ.get(ENV_STORE) else Path.cwd()))
        root = root.expanduser().resolve()
        if root.exists() and not root.is_dir():
            raise CliError(f"{root} is not a directory")
        if not is_repository(root):
            unwrap_io(init_repository(root), lambda e: e.reason)
        services = open_cli_init(Common(store=str(root), json=common.json), root, branch)
        on = services.settings.branch
        recorded = settings_file(embedder or default_embedder(os.environ))
        settings = None if recorded is None else PathChange(CONFIG_FILE.as_posix(), recorded)
        landed = store_value(init_store(services.store().deps, settings))
        # From here on every door of this clone writes ``on``, whatever a pull brings.
        unwrap_io(record_branch(services.git, on), lambda error: error.reason)
        reply = landed_reply(landed, "already a store")
        payload = {**reply.payload, "store": str(root), "branch": on} \
            if isinstance(reply.payload, dict) else reply.payload
        return Reply(payload, f"store at {root} (branch {on})\n{reply.text}",
                     notes=reply.notes)

    return respond(common.json, body)


def write(*, fields: MemoryFields = _FIELDS, allow_duplicate: bool = False,
          common: Common = _COMMON) -> int:
    """Write a new memory (one commit), from the fields or from --file. Refused, with
    nothing written, when a live memory already holds the claim (up to case and
    spacing; ERR_DUPLICATE_CLAIM names it) or when a --link target is no memory
    (ERR_DANGLING_LINKS names each), as over MCP.

    Examples: memhtml write --title "Deploy window" --claim "Deploys happen on Tuesdays."
    --type procedural --entity service:checkout-api --body "Never on a Friday."

    Parameters
    ----------
    allow_duplicate
        Write it even when a live memory already holds the same claim.
    """
    from memhtml import store as doors

    # The input is built inside the door's guarded body, so a bad --link or an
    # unreadable --file is reported like any other refusal.
    return _door(common, lambda store: doors.write(store, write_input(fields),
                                                   allow_duplicate=allow_duplicate))


def correct(path: str, /, *, fields: MemoryFields = _FIELDS, common: Common = _COMMON) -> int:
    """Correct a memory: write a new one that supersedes PATH, and archive PATH (one
    commit). Takes the same inputs as write, each optional: what is not given is kept
    from PATH (title, type, entities, tags, links, body, importance, ...; a new claim
    alone replaces only the claim). The new file goes beside the old one, and every
    link to the old one points at it.

    Parameters
    ----------
    path
        The memory being corrected (tree path, e.g. areas/inbox/x.html).
    """
    from memhtml import store as doors

    return _door(common, lambda store: doors.correct(
        store, path, write_input(fields, None, correcting=True)))


def archive(path: str, /, *, common: Common = _COMMON) -> int:
    """Archive a memory: move it under archive/YYYY/, set its status, and rewrite every
    link to it (one commit).

    Parameters
    ----------
    path
        The memory to archive.
    """
    from memhtml import store as doors

    return _door(common, lambda store: doors.archive(store, path))


def link(path: str, rel: str, target: str, /, *, common: Common = _COMMON) -> int:
    """Add an edge from PATH to the memory at TARGET, which must exist
    (ERR_DANGLING_LINKS otherwise).

    Parameters
    ----------
    path
        The memory the edge starts at.
    rel
        The edge rel (relates_to, supports, caused_by, part_of, about_person, ...).
    target
        The memory the edge points at, /areas/x/y.html or areas/x/y.html.
    """
    from memhtml import store as doors

    return _door(common, lambda store: doors.link(store, path, rel, target))


def unlink(path: str, rel: str, target: str, /, *, common: Common = _COMMON) -> int:
    """Remove an edge from PATH to TARGET.

    Parameters
    ----------
    path
        The memory the edge starts at.
    rel
        The edge rel.
    target
        The memory the edge points at.
    """
    from memhtml import store as doors

    return _door(common, lambda store: doors.unlink(store, path, rel, target),
                 "no such edge")


def label(path: str, entity: str, /, *, common: Common = _COMMON) -> int:
    """Add an entity (type:name) to a memory.

    Parameters
    ----------
    path
        The memory to label.
    entity
        The entity, e.g. person:ines-marechal.
    """
    from memhtml import store as doors

    return _door(common, lambda store: doors.label(store, path, entity), "already labelled")


def unlabel(path: str, entity: str, /, *, common: Common = _COMMON) -> int:
    """Remove an entity from a memory.

    Parameters
    ----------
    path
        The memory to unlabel.
    entity
        The entity to remove.
    """
    from memhtml import store as doors

    return _door(common, lambda store: doors.unlabel(store, path, entity), "no such entity")


def move(path: str, to: str, /, *, common: Common = _COMMON) -> int:
    """Move a memory to another path, rewriting every link to it (one commit).

    Parameters
    ----------
    path
        The memory to move.
    to
        The new tree path; ending in / keeps the file name.
    """
    from memhtml import store as doors

    return _door(common, lambda store: doors.move(store, path, to), "already there")


def restore(path: str, /, *, at: str | None = None, common: Common = _COMMON) -> int:
    """Bring a memory back live as one commit. An archived one returns to its original
    path, status active, every link to it pointed back; a deleted one (git rm, or a
    deletion another clone's sync brought in) is put back as the branch last held it,
    or as --at holds it. A live memory is refused.

    Parameters
    ----------
    path
        The archive path, or the original path (its latest archive is taken), or a
        deleted memory's path (sync names each one it took out).
    at
        For a deleted memory: restore the version this commit or ref holds instead of
        the last one.
    """
    from memhtml import store as doors

    return _door(common, lambda store: doors.restore(store, path, at))


def publish(*, base_url: str = "", common: Common = _COMMON) -> int:
    """Publish the store as a static site, one commit: an index.html for every
    directory, a readable page for every memory that passes the check (refused files
    are listed, unlinked), a sitemap.xml, a stylesheet and a _headers file carrying
    the pages' Content-Security-Policy for static hosts. Open index.html in a browser.

    Parameters
    ----------
    base_url
        A prefix for the sitemap's locations (https://example.org/memory).
    """
    from memhtml.cli.progress import progress
    from memhtml.store import publish as publish_door

    def body() -> Reply:
        _, store = open_common(common)
        with progress("publishing", 3, common.json) as bar:
            steps: list[str] = []

            def step(name: str) -> None:
                if steps:
                    bar.advance()
                steps.append(name)
                bar.describe(name)

            landed = store_value(publish_door(store, base_url, step))
        reply = landed_reply(landed, "the site is up to date")
        worktree = store.deps.worktree
        if worktree is None:
            return reply
        index = (worktree / "index.html").as_uri()
        payload = {**reply.payload, "index": index} if isinstance(reply.payload, dict) \
            else reply.payload
        return Reply(payload, f"{reply.text}\nopen {index}", notes=reply.notes)

    return respond(common.json, body)
