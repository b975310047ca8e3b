"""``memhtml export markdown``: write a store's active memories out as markdown files.

The conversion is pure (``memhtml.store.markdown_export``); this module only decides
where the files may go and writes them. Every path comes from the store, which is
input like any other, so each destination is resolved and checked to lie inside the
target directory before anything is written: a refusal writes nothing at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Annotated

from cyclopts import App, Parameter

from memhtml.cli.common import Common, open_common
from memhtml.cli.output import CliError, Reply, respond, store_value

export_app = App(name="export", help="Write memories out in another format.")

_COMMON = Common()


@dataclass(frozen=True, slots=True)
class ExportTargetNotEmpty:
    """The target directory already holds files, and ``--force`` was not given."""

    directory: str
    entries: int


@dataclass(frozen=True, slots=True)
class ExportTargetNotDirectory:
    """The target names something that is not a directory."""

    directory: str


@dataclass(frozen=True, slots=True)
class ExportPathOutside:
    """A memory's export path would resolve outside the target directory."""

    path: str
    directory: str


def _refuse(error: object, message: str) -> CliError:
    from memhtml.compose import error_code

    return CliError(message, code=error_code(error))


def _target(directory: Path, force: bool) -> Path:
    """The resolved target directory, refused when it is a file or holds entries
    (unless ``force``)."""
    if directory.exists() and not directory.is_dir():
        raise _refuse(ExportTargetNotDirectory(str(directory)),
                      f"{directory} exists and is not a directory; name a new or empty "
                      "directory to export into")
    if directory.is_dir() and not force:
        entries = sum(1 for _ in directory.iterdir())
        if entries:
            raise _refuse(ExportTargetNotEmpty(str(directory), entries),
                          f"{directory} is not empty ({entries} entries); name a new or "
                          "empty directory, or pass --force to write over the files the "
                          "export shares with it (others are left as they are)")
    return directory.resolve()


def destinations(root: Path, relative: list[str]) -> dict[str, Path]:
    """Each export path's file under ``root``, every one checked before any is used:
    a relative path of plain parts whose resolved location (symlinks followed) is
    inside ``root``."""
    out: dict[str, Path] = {}
    for rel in relative:
        parts = PurePosixPath(rel).parts
        plain = bool(parts) and not PurePosixPath(rel).is_absolute() and all(
            part not in {"", ".", ".."} and "\\" not in part and "\x00" not in part
            for part in parts)
        dest = root.joinpath(*parts).resolve() if plain else None
        if dest is None or not dest.is_relative_to(root) or dest == root:
            raise _refuse(ExportPathOutside(rel, str(root)),
                          f"the memory path {rel!r} would be written outside {root}; "
                          "nothing was exported (run `memhtml doctor` on the store)")
        out[rel] = dest
    return out


@export_app.command(name="markdown")
def export_markdown(directory: Path, /, *, force: bool = False,
                    at: Annotated[str | None, Parameter(name="--at")] = None,
                    common: Common = _COMMON) -> int:
    """Write every active memory as a markdown file under DIRECTORY. An imported note
    goes back at its own name in its store folder, written as it was (its frontmatter
    keys in their order, its headings, lists, quotes and links), with what the store
    set since; any other memory at its store path with .md for .html, with YAML
    frontmatter (name, description, type, created, updated, the other metadata that is
    set, tags, entities, aliases, and edges as [[wikilinks]] by rel) and the article
    as markdown. Markdown pages of the store (an imported MEMORY.md index) are written
    at their own paths with their links pointed at the exported files.
    `memhtml import markdown` reads such a folder back into the same memories.

    Parameters
    ----------
    directory
        Where the files go: a new or empty directory.
    force
        Write into a directory that already holds files, replacing those the export
        writes and leaving every other file alone.
    at
        Export the store as it was at this commit or ref.
    """

    def body() -> Reply:
        from memhtml.store.markdown_export import export_markdown as convert
        from memhtml.store.reads import markdown_pages, version_of

        _, store = open_common(common, writes=False)
        version = store_value(version_of(store, at))
        exported = convert(version.records(), store_value(markdown_pages(store, version)))
        root = _target(directory, force)
        files = destinations(root, sorted(exported.files))
        for rel, dest in files.items():
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(exported.files[rel], encoding="utf-8", newline="\n")
        payload = {"ok": True, "directory": str(root), "memories": exported.memories,
                   "pages": exported.pages, "files": sorted(files),
                   "edges": exported.edges, "dangling": exported.dangling}
        pages = f" and {exported.pages} index pages" if exported.pages else ""
        text = (f"exported {exported.memories} memories{pages} to {root} "
                f"({exported.edges} edges")
        text += f", {exported.dangling} to memories not exported)" if exported.dangling \
            else ")"
        return Reply(payload, text)

    return respond(common.json, body)
