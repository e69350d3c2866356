"""Memory files: the instructions people leave for agents (AGENTS.md, CLAUDE.md, ...).

Found at the workspace roots and, for files the user mentions, in every folder from the
mentioned file up to its root. Each is capped at `memory_max_lines` lines and
`memory_max_bytes` bytes; a cut says where to read on.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from readkeeper import quoting, words
from readkeeper.errors import ReadkeeperError
from readkeeper.files.fileio import open_regular, read_at_most
from readkeeper.files.paths import Location, Workspace, is_within
from readkeeper.read.readers.text import decode_text, split_lines
from readkeeper.settings import Settings

from .cut_notes import read_call
from .model import MEMORY, Attachment, Dropped

NAMES = ("AGENTS.md", "CLAUDE.md", "QWEN.md", os.path.join(".github", "copilot-instructions.md"))


def at_roots(workspace: Workspace) -> list[Location]:
    """The memory files at the top of each workspace root."""
    roots = workspace.roots
    return _existing((os.path.join(root, name) for root in roots for name in NAMES), workspace)


def above(paths: Iterable[str], workspace: Workspace) -> list[Location]:
    """Memory files in the folders from each path up to (not including) its root."""
    candidates: list[str] = []
    roots = workspace.roots
    for path in paths:
        root = next((r for r in roots if is_within(path, r)), None)
        if root is None:
            continue
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        while is_within(folder, root) and folder != root:
            candidates.extend(os.path.join(folder, name) for name in NAMES)
            folder = os.path.dirname(folder)
    return _existing(candidates, workspace)


def _existing(candidates: Iterable[str], workspace: Workspace) -> list[Location]:
    """The candidates that are regular files in the workspace: a memory file (or a
    folder on its way, such as `.github`) that links out of the roots is not the
    workspace's own instruction, and is never read."""
    found: dict[str, Location] = {}
    for candidate in candidates:
        try:
            where = workspace.locate(os.path.realpath(candidate), grants=False)
        except OSError:  # a link on the way changing as it is looked at
            continue
        if where is None or where.path in found:
            continue
        st = where.lstat()
        if st is not None and stat.S_ISREG(st.st_mode):
            found[where.path] = where
    return list(found.values())


def items(settings: Settings, found: list[Location]) -> list[Attachment | Dropped]:
    """The memory files `found`, each judged alone: one that cannot be attached (binary,
    unreadable, gone) is dropped with its own reason, and never takes the others along."""
    out: list[Attachment | Dropped] = []
    for where in found:
        try:
            text, cut = load(where, settings.memory_max_lines, settings.memory_max_bytes)
        except ReadkeeperError as exc:  # binary, gone, no longer a regular file...
            out.append(Dropped("memory", where.path, f"{exc.kind}: {exc.message}"))
            continue
        except OSError as exc:
            out.append(Dropped("memory", where.path, f"cannot be read ({exc.strerror or exc})"))
            continue
        # The repository's words, not readkeeper's nor the user's: labelled, and fenced
        # so that no line of it can pose as another attachment or as readkeeper's.
        label = f"{quoting.name(os.path.basename(where.path))}, the repository's words:"
        shown = f"{label}\n{quoting.fence(text)}" + (f"\n{cut}" if cut else "")
        out.append(
            Attachment(
                type="memory",
                content=shown,
                fenced=True,
                priority=MEMORY,
                source=where.path,
                file_path=where.path,
                max_tokens=settings.memory_max_tokens,
                truncated=cut is not None,
            )
        )
    return out


def load(where: Location, max_lines: int, max_bytes: int) -> tuple[str, str | None]:
    """(text, the note saying where it was cut, if it was) for a memory file, within
    both caps."""
    path = where.path
    with open_regular(where) as opened:
        data = read_at_most(opened.fd, max_bytes + 1)
        size = opened.size
    cut_by_bytes = len(data) > max_bytes
    if cut_by_bytes:
        data = data[:max_bytes]
        # Whole lines only: a byte cap may fall inside a line or a multi-byte character.
        data = data[: data.rfind(b"\n") + 1] or data
    text, _ = decode_text(data, path) if data else ("", None)
    lines = split_lines(text)
    cut_by_lines = len(lines) > max_lines
    lines = lines[:max_lines]
    if not (cut_by_bytes or cut_by_lines):
        return "\n".join(lines), None
    rest = {"file_path": path, "offset": len(lines) + 1}
    note = (
        f"[memory file cut at {words.count(len(lines), 'line')} ({max_lines} lines / "
        f"{max_bytes} bytes "
        f"per memory file; the file has {size} bytes). "
        f"Read the rest with {read_call(**rest)}]"
    )
    return "\n".join(lines), note
