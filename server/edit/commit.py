"""Committing a change to a file: where it really is, holding it while the change is
decided, loading it exactly, and the retried commit under the file's lock.

Text edits and writes (edits.py) and notebook cell edits (notebook.py) all commit through
`committed`: our own changes of one file take turns under its lock (locks.py), and an
attempt whose file changed between its decision and its commit is made again. The commit
itself (atomic replacement that loses no other program's write) is atomic.py.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from .. import quoting
from ..errors import ReadkeeperError
from ..files import atomic
from ..files.beneath import Moved
from ..files.encodings import NotText, TextEncoding, decode, detect
from ..files.fileio import digest, is_directory, moved, read_at_most, special_file
from ..files.locks import lock_for
from ..files.paths import ALLOWED_SETTING, Location, Workspace, names_a_folder
from ..files.reach import LeadsOut
from ..files.vcs import refuse_metadata
from ..hints import call
from ..read.readers import SNIFF_BYTES, cap_for, sniff, whole_cap
from ..read.room import refuse_long_path
from ..read.tokens import TokenCounter
from ..settings import Settings
from ..state.readstate import ReadRecord, ReadStates
from . import journal
from .notebook_seen import check_text_change
from .refusals import (
    busy,
    deleted,
    folder_path,
    kept_changing,
    not_read,
    not_text,
    os_error,
    read_only,
    root_replaced,
    set_id,
)
from .services import EditServices

# Times a commit is retried when the file changes under it; each retry re-decides (and
# usually ends as `stale`), so this only bounds a file rewritten continuously.
COMMIT_ATTEMPTS = 5

_Result = TypeVar("_Result")


def committed(path: str, attempt: Callable[[], _Result | None]) -> _Result:
    """The result of the first `attempt` that commits (returns a result), made under the
    file's lock so that our own changes of one file take turns. An attempt returns None
    when the file changed between its decision and its commit, and the next one decides
    again; a file rewritten on every attempt is refused as `stale`."""
    with lock_for(path):
        for _ in range(COMMIT_ATTEMPTS):
            result = attempt()
            if result is not None:
                return result
    raise kept_changing(path)


# --- where the file is ---------------------------------------------------------------------


def resolve_for_change(workspace: Workspace, file_path: str, verb: str) -> tuple[str, Location]:
    """The absolute path as given and where it really is (symlinks followed, so a write
    through a link updates its target), or `bad_params`/`outside_workspace`.

    Only the roots and `allowed_paths` count: a read the user allowed when asked does
    not extend to changing the file. Version-control metadata is never changed
    (files/vcs.py).
    """
    if not file_path or "\x00" in file_path:
        raise ReadkeeperError(
            "bad_params",
            "file_path must be a non-empty path without NUL characters.",
            field="file_path",
        )
    candidate = workspace.absolute(file_path)
    if names_a_folder(file_path):
        raise folder_path(file_path, candidate, "file_path")
    advice = (
        f"readkeeper does not {verb} files there. Ask the user to add its folder to "
        f"{ALLOWED_SETTING}, or {verb} a file inside the workspace."
    )
    real = workspace.real_of(candidate, grants=False, advice=advice)
    where = workspace.locate(real, grants=False)
    if where is None:  # the roots changed meanwhile
        raise workspace.outside(candidate, LeadsOut(), advice)
    refuse_metadata(candidate, where.path, where.anchor.path, verb)
    return candidate, where


def read_record(
    read_states: ReadStates, workspace: Workspace, session: str, real: str, verb: str
) -> ReadRecord | None:
    """The session's record of `real`; refused `stale` when it was read before its
    workspace folder was replaced (`rm -rf ws && git clone ... ws`): whatever the
    content now, the agent read a file of the old tree."""
    record = read_states.get(session, real)
    if record is not None:
        folder = workspace.replaced_since(real, record.recorded_ns)
        if folder is not None:
            raise root_replaced(real, folder, verb)
    return record


def record_to_edit(core: EditServices, session: str, where: Location, named: str) -> ReadRecord:
    """The session's record of the text file an edit changes (`where`, as the agent
    `named` it); refused when the file is gone (`stale` if the session had read it, else
    `not_found`), is a folder, or was never read by the session (`unread`)."""
    workspace = core.workspace
    record = read_record(core.read_states, workspace, session, where.path, "edit")
    found = entry(where)
    if found is None:
        raise deleted(where.path, "edit") if record is not None else workspace.not_found(named)
    if stat.S_ISDIR(found.st_mode):
        raise is_directory(where.path, to_write=True)
    if record is None:
        raise unread(where, core.settings, not_read(where.path, session), core.tokens)
    check_text_change(record, where.path, "edit")
    return record


def unread(
    where: Location, settings: Settings, refusal: ReadkeeperError, counter: TokenCounter
) -> ReadkeeperError:
    """The refusal of a change to a file the session never read: `refusal` (`not_read`,
    naming the read that licenses the change), unless no read would: a file readkeeper
    does not change whatever was read (not text, too large, not decoded back exactly,
    read-only, set-id) gets that refusal instead, so the error never sends the agent
    after a read that leads nowhere (a binary file's read is refused too; a file whose
    path is too long to read, round 37: read/room.py)."""
    try:
        refuse_long_path(counter, where.path, settings)
    except ReadkeeperError as exc:
        return exc
    try:
        with hold_for_change(where) as held:
            load(held, settings)
    except ReadkeeperError as exc:
        if exc.kind != "stale":
            return exc
    return refusal


def entry(where: Location) -> os.stat_result | None:
    """What is at the path now, or None; a symlink planted since it was resolved is
    refused (it could lead out of the workspace)."""
    try:
        found = where.lstat()
    except Moved:
        raise moved(where.path) from None
    except OSError as exc:
        raise os_error(where.path, exc) from None
    if found is not None and stat.S_ISLNK(found.st_mode):
        raise moved(where.path)
    special = special_file(where.path, found.st_mode) if found is not None else None
    if special is not None:
        raise special
    return found


# --- holding and replacing it --------------------------------------------------------------


# A file with none of these is marked read-only for everyone: root could write it (the
# permission check does not apply to it), but the mark is the user's word, so readkeeper
# never does, as whatever user.
_WRITE_BITS = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


@contextmanager
def hold_for_change(where: Location) -> Iterator[atomic.Held]:
    """`atomic.hold`, with readkeeper's errors: busy, and set-id files refused."""
    path = where.path
    # Before the open, which a user other than root cannot make on such a file: the
    # refusal says why, whoever readkeeper runs as.
    found = entry(where)
    if found is not None and stat.S_ISREG(found.st_mode) and not found.st_mode & _WRITE_BITS:
        raise read_only(path, found.st_mode)
    try:
        with atomic.hold(where) as held:
            if held.mode & (stat.S_ISUID | stat.S_ISGID):
                raise set_id(path, held.mode)
            if not held.mode & _WRITE_BITS:
                raise read_only(path, held.mode)
            yield held
    except atomic.Busy:
        raise busy(path) from None
    except OSError as exc:
        raise os_error(path, exc) from None


def replace(
    held: atomic.Held, data: bytes, expected: bytes, cap: tuple[int, str] | None
) -> os.stat_result | None:
    """`atomic.replace`, with readkeeper's error for what the system refuses; what it
    wrote is noted for `readkeeper/undo` (journal.py). A change that would grow the file
    past the cap its edits are held to (`load`) is refused: made, it would leave a file
    readkeeper no longer reads or edits whole (round 29: a damaged notebook's edit took
    it past max_document_bytes, and every read, edit and write after was refused).
    `cap`: that limit and its setting, as `load` found them (`Loaded.cap`); None: no cap
    (an undo puts back bytes the file held)."""
    if cap is not None:
        check_growth(held.opened.path, len(expected), len(data), cap)
    try:
        new_stat = atomic.replace(held, data, expected)
    except OSError as exc:
        raise os_error(held.opened.path, exc) from None
    if new_stat is not None:
        journal.note(held.opened.path, expected, data)
    return new_stat


def check_new(path: str, data: bytes, settings: Settings) -> None:
    """Refuse to make a file of `data` past the cap its edits would be held to (`load`):
    made, it could be neither read whole, edited nor written smaller (round 30: a write
    made a 5,000-byte file over a 4,096-byte cap, and every call on it after was refused
    `too_large`)."""
    check_growth(path, 0, len(data), cap_for(data[:SNIFF_BYTES], path, settings))


def check_buffer(path: str, before: str, after: str, cap: tuple[int, str]) -> None:
    """`replace`'s rule for an editor's unsaved buffer (counted as UTF-8): a change that
    would grow it past the cap its edits are held to is refused, the buffer as it was
    (round 31: an edit sent the editor a change leaving 291,590 bytes, over 262,144,
    where the same change on disk was refused)."""
    size = len(after.encode("utf-8", "surrogatepass"))
    check_growth(path, len(before.encode("utf-8", "surrogatepass")), size, cap)


def check_growth(path: str, before: int, after: int, cap: tuple[int, str]) -> None:
    """The one rule of a change's size: `too_large` when it would take `path` from
    `before` bytes to `after`, past the limit of `cap` (its setting too), and grow it (a
    change that leaves it smaller, or as large, goes on: the file is no further from
    being read whole)."""
    limit, setting = cap
    if after > limit and after > before:
        raise _too_large(path, after, limit, setting, after=True)


# --- loading it exactly --------------------------------------------------------------------


@dataclass(frozen=True)
class Loaded:
    """A file's bytes as they are on disk, and the text they decode to and back from
    exactly."""

    data: bytes
    text: str
    encoding: TextEncoding
    cap: tuple[int, str]  # the most bytes its edits may leave, and the setting saying so


# The files a read shows drawn from their bytes, not as them, and why no edit changes
# them: a PDF whose every byte is text (no NUL) decodes as text all the same.
_DRAWN = {
    "pdf": "it is a PDF: a read shows its pages' text, drawn from it, not its bytes",
    "image": "it is an image",
}


def load(held: atomic.Held, settings: Settings) -> Loaded:
    """The held file's bytes and text; refused when too large, not text, or not decoded
    back to the same bytes."""
    path = held.opened.path
    limit, setting = whole_cap(held.opened.fd, path, settings)
    data = read_at_most(held.opened.fd, limit + 1) if held.opened.size <= limit else b""
    if held.opened.size > limit or len(data) > limit:
        raise _too_large(path, max(held.opened.size, len(data)), limit, setting)
    document = sniff(data[:SNIFF_BYTES], path)
    if document in _DRAWN:
        # What a read showed is drawn from the file (a PDF's pages' text, an image), not
        # its bytes: an edit would change bytes the agent never saw (a PDF's stream,
        # breaking its lengths), where text matched its old_string by chance.
        raise not_text(path, _DRAWN[document])
    try:
        encoding = detect(data, complete=True)
        text = decode(data, encoding)
    except NotText as exc:
        raise not_text(path, exc.reason) from None
    except UnicodeDecodeError as exc:
        raise not_text(path, f"it is not valid {exc.encoding} at byte {exc.start}") from None
    try:
        exact = encoding.bom + text.encode(encoding.name) == data
    except UnicodeEncodeError:
        exact = False
    if not exact:
        raise ReadkeeperError(
            "unsupported",
            f"{quoting.name(path)} decodes as {encoding.label}, but not back to the same bytes, so "
            "readkeeper will not edit it (the edit would change bytes you never touched). "
            "Change it with a command that works on bytes, or ask the user to convert it "
            "to UTF-8.",
            file_path=path,
            encoding=encoding.label,
        )
    return Loaded(data, text, encoding, (limit, setting))


def _too_large(
    path: str, size: int, limit: int, setting: str, after: bool = False
) -> ReadkeeperError:
    what = (
        "notebooks (the limit for reading one)"
        if setting == "max_document_bytes"
        else "files readkeeper edits (the limit for reading a file whole)"
    )
    if after:  # the change was not made: the file is as it was
        return ReadkeeperError(
            "too_large",
            f"The change was not made: it would leave {quoting.name(path)} {size:,} bytes, "
            f"over the {limit:,}-byte limit for {what}, past which readkeeper could no "
            f"longer read or edit it whole. Make a change that leaves it within "
            f"{limit:,} bytes, or ask the user to raise {setting} "
            f"(READKEEPER_{setting.upper()}).",
            file_path=path,
            size=size,
            **{setting: limit},
        )
    return ReadkeeperError(
        "too_large",
        f"{quoting.name(path)} is {size:,} bytes, over the {limit:,}-byte limit for {what}. "
        f"Ask the user to raise {setting} (READKEEPER_{setting.upper()}), then read it "
        "whole and edit it; until then, find what to change with "
        f"{call('grep', pattern='<what you look for>', path=path)} and tell the user.",
        file_path=path,
        size=size,
        **{setting: limit},
    )


def digests(text: str, loaded: Loaded | None) -> tuple[str, ...]:
    """Digests a read of this content may have recorded: of the bytes on disk, and of
    the text as UTF-8 (how a read of an editor buffer records it)."""
    if loaded is not None and loaded.encoding == TextEncoding("utf-8"):
        return (digest(loaded.data),)  # the same bytes either way
    as_utf8 = digest(text.encode("utf-8", "surrogatepass"))
    if loaded is None:
        return (as_utf8,)
    return (digest(loaded.data), as_utf8)


# The BOM as a character: what a decoder gives for the bytes of a BOM inside the text.
_BOM_CHARACTER = "\ufeff"


def encode(
    text: str, encoding: TextEncoding, path: str, field: str, original: bytes | None = None
) -> bytes:
    """`text` as bytes in the file's encoding (with its BOM); refused, naming the first
    character it cannot hold, when the encoding has no such character, and refused when
    it would put a NUL byte into an `original` that had none (a text file would turn
    binary for every other tool). A file that keeps a BOM keeps one: a U+FEFF the new
    text starts with is that BOM, unless the `original` text began with one too."""
    if original is not None and encoding.bom and text.startswith(_BOM_CHARACTER):
        own = _BOM_CHARACTER.encode(encoding.name)
        if not original.startswith(encoding.bom + own):
            text = text[1:]
    try:
        data = encoding.bom + text.encode(encoding.name)
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start]
        line = exc.object.count("\n", 0, exc.start) + 1
        if encoding.name.startswith("utf"):  # only a lone surrogate fails here
            advice = "Remove it (a lone surrogate is not a character any file can hold)."
        else:
            advice = (
                f"Use characters {encoding.name} has (or an escape the language allows), "
                "or ask the user to convert the file to UTF-8."
            )
        raise ReadkeeperError(
            "unsupported",
            f"{quoting.name(path)} "
            f"is {encoding.label}, which cannot hold {bad!r} (U+{ord(bad):04X}, line "
            f"{line} of the result). {advice}",
            file_path=path,
            encoding=encoding.label,
            field=field,
        ) from None
    if original is not None and b"\x00" in data and b"\x00" not in original:
        raise ReadkeeperError(
            "unsupported",
            f"{quoting.name(path)} "
            f"is {encoding.label} and has no NUL byte; the {field} would add one "
            "(a NUL character, or a character this encoding stores with NUL bytes), which "
            "turns the file into binary for every other program. Leave out the NUL "
            "character, or ask the user to convert the file to UTF-8.",
            file_path=path,
            encoding=encoding.label,
            field=field,
        )
    return data
