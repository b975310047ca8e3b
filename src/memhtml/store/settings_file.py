"""Recording one setting in the store's committed config file, as a commit.

A store setting (the embedder that defines the vector space, say) describes the
corpus, so it travels with the repository: every clone that pulls the commit
searches the same way. The change is landed like any door's, by compare-and-swap
on the branch, and the checkout follows, so the file a person opens says what the
branch says.

The file is edited as text, one line, so its comments and the order of its other
keys stay as the person wrote them; the result is parsed again and must read back
with the new value and every other key unchanged, or nothing is committed.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass

from returns.io import IOFailure, IOResult, IOSuccess
from returns.result import Failure, Result, Success

from memhtml.contracts.services import PathChange, TreeEntry
from memhtml.store.checkout import file_blobs, git_blob_id
from memhtml.store.deps import StoreDeps
from memhtml.store.errors import Refused, StoreError
from memhtml.store.landing import Draft, Landed, land

_TABLE = re.compile(r"^\s*\[")


@dataclass(frozen=True, slots=True)
class SettingRecorded:
    """What ``record_setting`` did: the file and line, and the commit it landed as
    (None when the file already said so and nothing was committed)."""

    path: str
    key: str
    value: str
    commit: str | None


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string: quotes and backslashes escaped, and every
    control character (DEL included, which TOML forbids raw) as a ``\\u`` escape."""
    def escaped(char: str) -> str:
        if char in '"\\':
            return "\\" + char
        if ord(char) < 0x20 or ord(char) == 0x7F:
            return f"\\u{ord(char):04x}"
        return char

    return '"' + "".join(escaped(char) for char in value) + '"'


def _parsed(text: str) -> Result[dict[str, object], str]:
    try:
        return Success(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        return Failure(str(exc))


def with_setting(text: str, key: str, value: str) -> Result[str, str]:
    """``text`` (a TOML document) with the top-level ``key`` set to the string
    ``value``: its line replaced where it has one, else a line added before the first
    table. Every other line is kept byte for byte. A failure says why the file cannot
    be edited this way (it does not parse, or the edit would not read back)."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", key):
        return Failure(f"{key!r} is not a plain TOML key")

    def edit(before: dict[str, object]) -> Result[str, str]:
        line = f"{key} = {toml_string(value)}"
        # TOML ends a line at "\n" alone (str.splitlines would also split at U+0085
        # and friends, which a string value may hold); a "\r" before it stays put.
        lines = text.split("\n")
        end = len(lines) - 1 if lines[-1] == "" else len(lines)
        assignment = re.compile(rf"^\s*{re.escape(key)}\s*=")
        top = next((i for i in range(end) if _TABLE.match(lines[i])), end)
        where = next((i for i in range(top) if assignment.match(lines[i])), None)
        if where is not None:
            lines[where] = line + ("\r" if lines[where].endswith("\r") else "")
        else:
            # A file whose lines end in CRLF gets its new line in CRLF too.
            crlf = end > 0 and all(lines[i].endswith("\r") for i in range(end))
            lines.insert(top, line + ("\r" if crlf else ""))
            if lines[-1] != "":
                lines.append("")
        edited = "\n".join(lines)
        wanted = {**before, key: value}
        unclear = (f"{key} is written in a form this edit does not recognise; set it "
                   "by hand")
        return _parsed(edited).alt(lambda _: unclear).bind(
            lambda after: Success(edited) if after == wanted else Failure(unclear))

    return _parsed(text).alt(lambda reason: f"it is not valid TOML ({reason})").bind(
        lambda before: Success(text) if before.get(key) == value else edit(before))


def record_setting(deps: StoreDeps, path: str, key: str, value: str
                   ) -> IOResult[SettingRecorded, StoreError]:
    """Commit ``key = "value"`` into the config file at ``path`` on the store's branch.

    Refused, with nothing committed, when the checkout's copy of the file differs from
    the branch's (a person's edit would otherwise be reverted by their next commit),
    when the branch holds it as a symbolic link, or when it cannot be edited as TOML.
    """
    line = f'{key} = "{value}"'

    def refused(reason: str) -> IOResult[Draft, StoreError]:
        return IOFailure(Refused(f"cannot record {line} in {path}: {reason}"))

    def current(tip: str | None) -> IOResult[bytes | None, StoreError]:
        if tip is None:
            return IOSuccess(None)
        def blob(entries: tuple[TreeEntry, ...]) -> IOResult[bytes | None, StoreError]:
            if not entries:
                return IOSuccess(None)
            if entries[0].is_symlink:
                return IOFailure(Refused(f"{path} is a symbolic link on the branch"))
            read: IOResult[bytes | None, StoreError] = deps.git.read_blobs(
                [entries[0].blob_id]).map(lambda blobs: blobs.get(entries[0].blob_id))
            return read

        listed: IOResult[tuple[TreeEntry, ...], StoreError] = deps.git.entries_at(tip, [path])
        return listed.bind(blob)

    def checked(tip: str | None, data: bytes | None) -> IOResult[Draft, StoreError]:
        if deps.worktree is None:
            return draft(tip, data)
        # The checkout's copy as git sees it (its stat check and clean filters): a
        # CRLF checkout of the committed file is no change of the person's.
        held = None if data is None else git_blob_id(data)
        seen = file_blobs(deps.git, [path], {path: (held,)})
        return seen.bind(lambda files: against(
            files[path], deps.git.file_kind(path), held, tip, data))

    def against(local: str | bool | None, plain: bool | None, held: str | None,
                tip: str | None, data: bytes | None) -> IOResult[Draft, StoreError]:
        if plain is False:
            return refused("the checkout's copy is not a plain file")
        if local != held:
            return refused(
                "the checkout's copy has changes that are not committed; commit or "
                f"undo them first, or add the line {line} yourself")
        return draft(tip, data)

    def draft(tip: str | None, data: bytes | None) -> IOResult[Draft, StoreError]:
        try:
            text = "" if data is None else data.decode("utf-8")
        except UnicodeDecodeError:
            return refused("it is not UTF-8 text")
        edited = with_setting(text, key, value)
        if isinstance(edited, Failure):
            return refused(edited.failure())
        new = edited.unwrap().encode("utf-8")
        changes = () if new == data else (PathChange(path, new),)
        return IOSuccess(Draft(
            tip, changes, ("settings",), line,
            f"Record {line} in {path}, so every clone of the store uses it.",
            {path: data}))

    def derive() -> IOResult[Draft, StoreError]:
        return deps.tip().bind(lambda tip: current(tip).bind(lambda data: checked(tip, data)))

    def recorded(landed: Landed) -> SettingRecorded:
        return SettingRecorded(path, key, value, landed.commit if landed.paths else None)

    return land(deps, derive, guard_edits=True).map(recorded)
