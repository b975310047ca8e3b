"""The one piece of a store that lives outside its tree: the ``ours`` merge driver.

Generated pages (listings, memory pages, the sitemap) are marked ``merge=ours`` in
``.gitattributes``, so two clones that both published merge without a conflict and the
next publish regenerates them from the merged memories. The attribute does nothing
unless git's configuration defines the driver, and configuration is the one thing
``git clone`` never copies; so every command that opens a checkout sets it in the
repository's own config when no level of git's configuration has it, and ``doctor``
reports a checkout where it is still missing.
"""

from __future__ import annotations

from returns.io import IOResult, IOSuccess

from memhtml.contracts.services import GitService
from memhtml.store.errors import StoreError
from memhtml.store.layout import MERGE_OURS_DRIVER


def merge_driver_missing(git: GitService) -> IOResult[bool, StoreError]:
    """True when no level of git's configuration defines the ``ours`` merge driver."""
    key, _ = MERGE_OURS_DRIVER
    value: IOResult[str | None, StoreError] = git.config_value(key)
    return value.map(lambda found: found is None)


def ensure_merge_driver(git: GitService) -> IOResult[bool, StoreError]:
    """Define the ``ours`` merge driver in the repository's own config when no level
    does (a fresh clone); True when it was set now. Reading first keeps the usual case
    one lookup, and leaves a person's own definition (any level, any value) alone."""
    key, value = MERGE_OURS_DRIVER

    def set_when(missing: bool) -> IOResult[bool, StoreError]:
        if not missing:
            return IOSuccess(False)
        configured: IOResult[None, StoreError] = git.set_config(key, value)
        return configured.map(lambda _: True)

    return merge_driver_missing(git).bind(set_when)
