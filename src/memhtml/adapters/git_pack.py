"""A commit's many new blobs written as one pack, not as a loose object each.

libgit2 writes each blob of a commit as a file of its own (``create_blob``): a file
created, compressed into and renamed for each, about 0.15 ms a blob, which a commit of
3,000 imported notes pays 3,000 times, and every later lookup of one opens its file
again. Its own pack writer (``PackBuilder``) packs only objects already in the
object database and searches for deltas while it does (about 1 s for 3,000 blobs,
more than writing them loose). So a commit with at least ``PACK_MIN_BLOBS`` new blobs
writes them here, in git's pack format (gitformat-pack: a version 2 pack of whole,
undeltified objects, and its version 2 index), into ``objects/pack``: the pack file
first, then its index, each written whole under a temporary name, flushed to disk
and renamed into place, so a reader sees the pack complete or not at all (git and
libgit2 take a pack only once its index is there). libgit2 finds a pack that
appeared after it last looked when a lookup misses, as git does.

Nothing else changes: the objects and their ids are what ``create_blob`` writes
(``git fsck`` and libgit2 read the pack back, a law checks the ids), and a commit
that loses its swap leaves unreachable objects for ``gc`` either way.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

import pygit2

PACK_MIN_BLOBS = 64
"""Fewest new blobs a commit writes as a pack; fewer are written loose (measured in
docs/benchmarks.md, "Markdown import at scale")."""
_BLOB = 3
"""The pack's type number for a blob."""
_LARGE = 0x80000000
"""An offset at or past this goes into the index's table of 8-byte offsets."""


def blob_id(data: bytes) -> bytes:
    """The raw (20-byte) object id git gives ``data`` as a blob."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).digest()


def _entry_header(size: int) -> bytes:
    """An undeltified object's header: its type and its size, 7 bits a byte after the
    first byte's 4, low bits first, the high bit saying another byte follows."""
    first = (_BLOB << 4) | (size & 0x0F)
    size >>= 4
    out = bytearray()
    while size:
        out.append(first | 0x80)
        first = size & 0x7F
        size >>= 7
    out.append(first)
    return bytes(out)


def pack_and_index(blobs: Sequence[bytes]) -> tuple[bytes, bytes, list[bytes]]:
    """A version 2 pack of ``blobs`` (each once), its version 2 index, and each blob's
    raw id in the order given."""
    ids = [blob_id(data) for data in blobs]
    unique = dict(zip(ids, blobs, strict=True))
    parts = [b"PACK", struct.pack(">II", 2, len(unique))]
    offset = 12
    placed: dict[bytes, tuple[int, int]] = {}
    for oid, data in unique.items():
        entry = _entry_header(len(data)) + zlib.compress(data)
        placed[oid] = (offset, zlib.crc32(entry))
        parts.append(entry)
        offset += len(entry)
    body = b"".join(parts)
    pack_sum = hashlib.sha1(body, usedforsecurity=False).digest()
    names = sorted(placed)
    fanout = [0] * 256
    for oid in names:
        fanout[oid[0]] += 1
    running = 0
    for byte in range(256):
        running += fanout[byte]
        fanout[byte] = running
    small: list[int] = []
    large: list[int] = []
    for oid in names:
        at = placed[oid][0]
        if at < _LARGE:
            small.append(at)
        else:
            small.append(_LARGE | len(large))
            large.append(at)
    index = b"".join([
        b"\xfftOc", struct.pack(">I", 2), struct.pack(">256I", *fanout), *names,
        struct.pack(f">{len(names)}I", *(placed[oid][1] for oid in names)),
        struct.pack(f">{len(small)}I", *small), struct.pack(f">{len(large)}Q", *large),
        pack_sum])
    index += hashlib.sha1(index, usedforsecurity=False).digest()
    return body + pack_sum, index, ids


def _objects_dir(repo: pygit2.Repository) -> Path:
    """The repository's object directory: under its git directory, or under the
    common one a linked worktree's ``commondir`` names."""
    git_dir = Path(repo.path)
    common = git_dir / "commondir"
    if common.is_file():
        git_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
    return git_dir / "objects"


def _placed(folder: Path, name: str, data: bytes) -> None:
    """``data`` as ``folder/name``: written whole under a temporary name, flushed,
    made read-only as git leaves a pack, and renamed into place."""
    temporary = folder / f"tmp_memhtml_{os.getpid()}_{secrets.token_hex(4)}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                 0o444)
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, folder / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_blob_pack(repo: pygit2.Repository, blobs: Sequence[bytes]
                    ) -> list[pygit2.Oid] | None:
    """``blobs`` written to ``repo`` as one pack; each one's id, in order. None when
    the pack directory is not there to write to (the caller writes them loose)."""
    folder = _objects_dir(repo) / "pack"
    if not folder.is_dir() or folder.is_symlink():
        return None
    pack, index, ids = pack_and_index(blobs)
    name = f"pack-{pack[-20:].hex()}"
    try:
        _placed(folder, f"{name}.pack", pack)
        _placed(folder, f"{name}.idx", index)
    except OSError:
        return None
    return [pygit2.Oid(raw=oid) for oid in ids]


__all__ = ["PACK_MIN_BLOBS", "blob_id", "pack_and_index", "write_blob_pack"]
