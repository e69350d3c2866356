"""Memory files: the instructions people leave for agents (AGENTS.md, CLAUDE.md, ...).

Found at the workspace roots and, for files the user mentions, in every folder from the
mentioned file up to its root. Each is capped at `memory_max_lines` lines and
`memory_max_bytes` bytes; a cut says where to read on.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from readkeeper import quoting
from readkeeper.errors import ReadkeeperError
from readkeeper.files.beneath import looked_at
from readkeeper.files.fileio import open_regular, read_at_most
from readkeeper.files.paths import Location, Workspace, is_within
from readkeeper.files.reach import remembering, walk
from readkeeper.read.readers.text import decode_text, split_lines
from readkeeper.settings import Settings

from . import cut_notes
from .cut_notes import MemoryHeld
from .model import MEMORY, Attachment, Dropped

# How far a cut memory file is read to count its lines for the note, a chunk at a time.
COUNT_BYTES = 64 << 20
_COUNT_CHUNK = 1 << 20

NAMES = ("AGENTS.md", "CLAUDE.md", "QWEN.md", os.path.join(".github", "copilot-instructions.md"))


Found = Location | Dropped


def at_roots(workspace: Workspace) -> list[Found]:
    """The memory files at the top of each workspace root."""
    roots = workspace.roots
    return _existing((os.path.join(root, name) for root in roots for name in NAMES), workspace)


def above(paths: Iterable[str], workspace: Workspace) -> list[Found]:
    """Memory files in the folders from each path up to (not including) its root."""
    with remembering():  # every folder above each path is looked in: walked once
        return _above(paths, workspace)


def _above(paths: Iterable[str], workspace: Workspace) -> list[Found]:
    folders: dict[str, None] = {}  # each once, the nearest first for each mention
    roots = workspace.roots
    passed: str | None = None  # the first mention whose folders were not all looked in
    for path in paths:
        root = next((r for r in roots if is_within(path, r)), None)
        if root is None:
            continue
        real = _real(path, workspace)  # looked at only inside the roots
        folder = path if real is not None and os.path.isdir(real) else os.path.dirname(path)
        # Up to the root, or to a folder an earlier mention passed (every one above it
        # is in too): mentions in one folder share the folders above it. Round 45: 100
        # mentions beneath a chain 1,000 deep looked at each memory file 100 times;
        # round 46: listing the chain for each of them held 400 MB a call.
        while is_within(folder, root) and folder != root and folder not in folders:
            if len(folders) >= MAX_FOLDERS:
                passed = passed or path
                break
            folders[folder] = None
            folder = os.path.dirname(folder)
    there = (_there(folder, workspace) for folder in folders)
    found = _existing([candidate for found in there for candidate in found], workspace)
    if passed is not None:
        found.append(Dropped("memory", passed, _PASSED.format(most=MAX_FOLDERS)))
    return found


# The most folders above the mentions one call looks in for memory files: the deepest
# path's (a path names at most 2,048). Each is held by its path and looked up whole, so a
# hundred mentions in chains 2,000 deep held 880 MB and took 4 s (found beside round 47).
MAX_FOLDERS = 2_048
_PASSED = (
    "memory files above this mention and the ones after it were not all looked for: one "
    "call looks in at most {most:,} folders above its mentions. Mention fewer files at a "
    "time"
)


def _there(folder: str, workspace: Workspace) -> list[str]:
    """The memory files of `folder` with something at their first name (a file, a link,
    `.github`), each then judged by `_existing`: the folder is opened once, beneath its
    root, and the names looked at in it (each path looked up whole costs its depth: a
    mention beneath 2,000 folders looked up 30,000,000 names, round 46). Nothing, when
    the folder is not the workspace's (then none of its files is looked for)."""
    real = _real(folder, workspace)
    where = workspace.locate(real, grants=False) if real is not None else None
    if where is None:
        return []
    try:
        fd = where.anchor.open_folder(os.path.join(where.folder, where.name))
    except OSError:
        return []
    try:
        return [
            os.path.join(folder, name)
            for name in NAMES  # something at its first name: `.github` for the nested one
            if looked_at(fd, name.split(os.sep, 1)[0]) is not None
        ]
    finally:
        os.close(fd)


def _existing(candidates: Iterable[str], workspace: Workspace) -> list[Found]:
    """The candidates that are regular files in the workspace: a memory file (or a
    folder on its way, such as `.github`) that links out of the roots is not the
    workspace's own instruction, and is never read. One that is there and is not read
    (a link out of the workspace or to nothing, a folder or a FIFO by that name) is
    named in `dropped` with why: never skipped without a word."""
    found: dict[str, Found] = {}
    for candidate in candidates:
        if candidate in found:
            continue
        real = _real(candidate, workspace)
        where = workspace.locate(real, grants=False) if real is not None else None
        st = where.lstat() if where is not None else None
        if where is None or st is None:
            why = _not_read(candidate, workspace)
            if why is not None:
                found[candidate] = Dropped("memory", candidate, why)
        elif where.path in found:
            continue
        elif stat.S_ISREG(st.st_mode):
            found[where.path] = where
        else:
            found[where.path] = Dropped("memory", where.path, _NOT_REGULAR)
    return list(found.values())


_NOT_REGULAR = "not a regular file (a folder, a FIFO or a device by a memory file's name): not read"


def _not_read(candidate: str, workspace: Workspace) -> str | None:
    """Why `candidate`, which resolves to nothing in the workspace, is not read; None
    when there is no such entry. Only its own folder is looked in, and only when that
    folder is inside the roots (nothing outside them is looked at)."""
    folder = _real(os.path.dirname(candidate), workspace)
    if folder is None or workspace.locate(folder, grants=False) is None:
        return None  # its folder is not the workspace's: no memory file of it is looked for
    try:
        st = os.lstat(os.path.join(folder, os.path.basename(candidate)))
    except OSError:
        return None  # no such file: nothing to say
    if not stat.S_ISLNK(st.st_mode):
        return None  # it went away, or came, as it was looked at: the next call says
    # Where it links is not looked at (it is outside, or nowhere): one reason for both,
    # so the answer tells nothing of what lies outside the workspace.
    return (
        "a symbolic link that links out of the workspace or to nothing: not the "
        "workspace's own instructions, so never read"
    )


def real_paths(paths: Iterable[str], workspace: Workspace) -> list[str]:
    """The real paths of `paths` (mentions) that resolve inside the workspace, each
    looked at only there (os.path.realpath looked outside, and walked a deep mention once
    more: round 45)."""
    return [real for real in (_real(path, workspace) for path in paths) if real]


def _real(path: str, workspace: Workspace) -> str | None:
    """The real path of `path` when it stays inside the roots and allowed folders, found
    looking at nothing outside them (files/reach.py); None otherwise, or when a link on
    the way changes as it is looked at."""
    try:
        real = walk(path, workspace.reaches())
    except OSError:
        return None
    return real if isinstance(real, str) else None


def items(settings: Settings, found: list[Found]) -> list[Attachment | Dropped]:
    """The memory files `found`, each judged alone: one that cannot be attached (binary,
    unreadable, gone) is dropped with its own reason, and never takes the others along."""
    out: list[Attachment | Dropped] = []
    for where in found:
        if isinstance(where, Dropped):  # there, and not read: said with why
            out.append(where)
            continue
        try:
            text, held = load(where, settings.memory_max_lines, settings.memory_max_bytes)
        except ReadkeeperError as exc:  # binary, gone, no longer a regular file...
            out.append(Dropped("memory", where.path, f"{exc.kind}: {exc.message}"))
            continue
        except OSError as exc:
            out.append(Dropped("memory", where.path, f"cannot be read ({exc.strerror or exc})"))
            continue
        # The repository's words, not readkeeper's nor the user's: labelled, and fenced
        # so that no line of it can pose as another attachment or as readkeeper's.
        label = f"{quoting.name(os.path.basename(where.path))}, the repository's words:"
        cut = held.cap is not None
        note = f"\n[memory file cut: {held.says(where.path, held.lines, False)}]" if cut else ""
        shown = f"{label}\n{quoting.fence(quoting.marks(text))}{note}"
        out.append(
            Attachment(
                type="memory",
                content=shown,
                fenced=True,
                priority=MEMORY,
                source=where.path,
                file_path=where.path,
                max_tokens=settings.memory_max_tokens,
                truncated=cut,
                cut_note=cut_notes.memory_lines(where.path, held),
            )
        )
    return out


def load(where: Location, max_lines: int, max_bytes: int) -> tuple[str, MemoryHeld]:
    """(text, what it holds of the file, and the cap that cut it if one did) for a
    memory file, within both caps."""
    path = where.path
    with open_regular(where) as opened:
        data = read_at_most(opened.fd, max_bytes + 1)
        size = opened.size
        # The note counts the file's own lines: read on to count them, a chunk at a time
        # within a bound (a hostile 3 GB memory file is named by its size alone).
        newlines, ends_line, seen = data.count(b"\n"), data.endswith(b"\n"), len(data)
        while max_bytes < seen < COUNT_BYTES:
            chunk = read_at_most(opened.fd, min(_COUNT_CHUNK, COUNT_BYTES - seen))
            if not chunk:
                break
            newlines, ends_line = newlines + chunk.count(b"\n"), chunk.endswith(b"\n")
            seen += len(chunk)
    cut_by_bytes = len(data) > max_bytes
    counted = seen >= size
    partial = False
    if cut_by_bytes:
        data = data[:max_bytes]
        # Whole lines only: a byte cap may fall inside a line or a multi-byte character.
        end = data.rfind(b"\n") + 1
        partial = end == 0
        data = data[:end] if end else _whole_characters(data)
    text, _ = decode_text(data, path) if data else ("", None)
    lines = split_lines(text)
    cut_by_lines = len(lines) > max_lines
    lines = lines[:max_lines]
    partial = partial and not cut_by_lines
    if not (cut_by_bytes or cut_by_lines):
        return "\n".join(lines), MemoryHeld(len(lines), False, len(lines), size, None)
    total = newlines + (not ends_line) if counted else None
    cap = f"{max_lines:,} lines / {max_bytes:,} bytes per memory file"
    return "\n".join(lines), MemoryHeld(len(lines), partial, total, size, cap)


def _whole_characters(data: bytes) -> bytes:
    """`data` without the UTF-8 character a byte cap split at its end (as it is, when it
    is not UTF-8: its decoder judges it whole)."""
    for back in range(min(4, len(data))):
        try:
            (data[: len(data) - back] if back else data).decode("utf-8")
        except UnicodeDecodeError:
            continue
        return data[: len(data) - back]
    return data
