"""The one piece of a store that lives outside its tree: the generated pages' merge driver.

Generated pages (listings, memory pages, the sitemap, the stylesheet, ``_headers``)
are marked ``merge=memhtml-generated`` in ``.gitattributes``, so two clones that both
published merge without a conflict and the next publish regenerates them from the
merged memories. The attribute does nothing unless git's configuration defines the
driver, and configuration is the one thing ``git clone`` never copies; so every
command that opens a checkout sets it in the repository's own config when it is
missing or not memhtml's, and ``doctor`` reports a checkout where it still is.

A store's ``.gitattributes`` is untrusted input: it travels with every pull, and
nothing stops it naming this driver for memory files. So the driver decides for
itself, from what git hands it (``%P``, the path the result is stored at; ``%A`` and
``%B``, this side's and the other side's file), and keeps this side's version only
of a generated page: a path ``publish`` owns (``site.is_generated_path``), and for an
``index.html`` only when both sides are pages ``publish`` wrote (its generator
``<meta>``). Anything else, a memory above all, gets git's own three-way text merge
(``git merge-file``, the algorithm git's built-in driver runs): merged when the
edits do not touch, conflict markers and a conflicted path when they do, exactly as
with no driver at all. Memory paths and generated paths never meet (an
``index.html`` is never a memory), so a memory's edits can never be dropped by it.

Earlier releases marked the pages ``merge=ours`` and defined git's generic ``ours``
driver as ``true`` (keep this side of any file), which let a committed
``*.html merge=ours`` drop the other side's edits of every memory in a plain
``git pull``. That definition is removed wherever it is exactly what memhtml set
(``merge.ours.driver = true`` in the repository's own config); a person's other
definitions, and any in their own global config, are theirs (``doctor`` names every
memory file git's attributes give a merge driver).
"""

from __future__ import annotations

from returns.io import IOResult, IOSuccess

from memhtml.contracts.services import GitService
from memhtml.store.errors import StoreError

MERGE_DRIVER = "memhtml-generated"
"""The merge driver memhtml's own attribute lines name, for generated pages only (the
layout's ``GITATTRIBUTE_LINES``)."""

DRIVER_KEY = f"merge.{MERGE_DRIVER}.driver"
NAME_KEY = f"merge.{MERGE_DRIVER}.name"
DRIVER_NAME = "memhtml: keep this clone's generated page (publish rebuilds it)"
LEGACY_DRIVER = ("merge.ours.driver", "true")
"""What earlier releases set: git's generic ``ours`` driver, as ``true``."""

_GENERATOR_META = '<meta name=\\"generator\\" content=\\"memhtml publish\\">'
"""``site_model.GENERATOR``'s ``<meta>``, as the script's double-quoted string."""
_SCRIPT = (
    'case "$4" in '
    ".memhtml/*) ;; "
    f'index.html|*/index.html) grep -qF "{_GENERATOR_META}" "$2" '
    f'&& grep -qF "{_GENERATOR_META}" "$3" && exit 0 ;; '
    "sitemap.xml|_headers|memhtml-site/memhtml.css|.site/memhtml.css) exit 0 ;; "
    "esac; "
    'exec git merge-file -L ours -L base -L theirs --marker-size="$5" "$2" "$1" "$3"'
)
"""The driver, a POSIX shell script (git runs drivers through ``sh``; Git for Windows
ships one): ``$1`` the ancestor, ``$2`` this side (where the result goes), ``$3`` the
other side, ``$4`` the path, ``$5`` the conflict-marker size. The paths are those of
``site.is_generated_path``; exit 0 keeps ``$2``; anything else is git's text merge,
whose exit status (the number of conflicts) tells git whether the path conflicts."""
DRIVER_COMMAND = f"sh -c '{_SCRIPT}' {MERGE_DRIVER} %O %A %B %P %L"
"""The ``merge.memhtml-generated.driver`` value. git substitutes ``%P`` shell-quoted
and the others with names of its own temporary files, so no path can inject a word."""


def merge_driver_missing(git: GitService) -> IOResult[bool, StoreError]:
    """True when git's configuration does not define the driver as memhtml's own."""
    value: IOResult[str | None, StoreError] = git.config_value(DRIVER_KEY)
    return value.map(lambda found: found != DRIVER_COMMAND)


def ensure_merge_driver(git: GitService) -> IOResult[tuple[str, ...], StoreError]:
    """Define the driver in the repository's own config when git does not read it as
    memhtml's (a fresh clone, an older definition), and remove the ``ours`` driver an
    earlier release set; what was done, as lines for a person (none: nothing to do).
    Reading first keeps the usual case one lookup and one read of the repository's
    own config file."""

    def define(missing: bool) -> IOResult[tuple[str, ...], StoreError]:
        if not missing:
            return IOSuccess(())
        key_set: IOResult[None, StoreError] = git.set_config(DRIVER_KEY, DRIVER_COMMAND)
        return key_set.bind(lambda _: git.set_config(NAME_KEY, DRIVER_NAME)).map(
            lambda _: (f"defined {DRIVER_KEY} in the repository's config",))

    def drop_legacy(done: tuple[str, ...]) -> IOResult[tuple[str, ...], StoreError]:
        key, value = LEGACY_DRIVER
        dropped: IOResult[bool, StoreError] = git.drop_config(key, value)
        return dropped.map(lambda removed: done + (
            (f"removed {key} = {value} (an earlier memhtml's) from the repository's "
             "config",) if removed else ()))

    return merge_driver_missing(git).bind(define).bind(drop_legacy)
