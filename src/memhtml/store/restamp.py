"""``doctor --fix``'s restamp: every memory whose ``memhtml-content-hash`` no longer
matches its article gets the hash it has, in one commit.

The hash is a fingerprint of the article that memhtml stamps when it writes a file;
a file edited by hand and committed keeps the old stamp, which ``doctor`` reports as
``stale-hash``. Nothing reads the stamp to decide anything (duplicates are found by
the hash the article has, computed at parse), so restamping changes the one meta
line and nothing a search or a sleep run sees; it only makes the file say the truth
about itself again.
"""

from __future__ import annotations

from returns.io import IOResult

from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import PathChange
from memhtml.format import set_meta
from memhtml.head import HeadVersion
from memhtml.store.errors import StoreError
from memhtml.store.landing import Draft, Landed, land
from memhtml.store.session import Store

HASH_META = "memhtml-content-hash"


def stale_hashes(version: HeadVersion) -> list[MemoryRecord]:
    """The memories whose stamped content hash is not their article's, by path."""
    return sorted((r for r in version.records()
                   if r.stated_content_hash is not None
                   and r.stated_content_hash != r.content_hash),
                  key=lambda r: r.path)


def restamp(store: Store) -> IOResult[Landed, StoreError]:
    """Stamp each stale content hash with the article's own, in one commit (none when
    nothing is stale). A memory with an uncommitted edit is refused as every door
    refuses it: the person's next ``git commit -a`` would put the old line back."""

    def derive() -> IOResult[Draft, StoreError]:
        return store.head().map(drafted)

    def drafted(version: HeadVersion) -> Draft:
        stale = stale_hashes(version)
        changes = tuple(PathChange(r.path, set_meta(r.html, HASH_META, r.content_hash)
                                   .encode()) for r in stale)
        return Draft(
            parent=version.sha, changes=changes, ops=("restamp",),
            subject=f"{len(stale)} content hash(es) stamped again",
            body="Each file's memhtml-content-hash named an article it no longer holds "
                 "(an edit made by hand and committed); it now names the article the "
                 "file holds. Nothing else in the files changed.",
            before={r.path: r.html.encode() for r in stale})

    return land(store.deps, derive, guard_edits=True)
