"""Remembering a change: what an edit or write left becomes the session's read-state, a
snapshot for later merges, and the baseline of the file's diagnostics.

The record is partial (DESIGN.md, "Read-state: the rules"): the agent may edit again
without reading, and a change by anyone else is still caught, but its next read returns
the file whole, since the agent has not seen the file whole in that form. The exception
is content the agent holds all of (it wrote it, or edited a file it held whole): a
re-read of it is a stub, or a diff once it changes (delta.py).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from ..files.fileio import digest
from ..protocol import ReadStateInfo
from ..state.held import HeldDocument
from ..state.known import known_digest
from ..state.readstate import ReadRecord
from .seen_lines import after_edit
from .services import DiagnosticKey, EditServices
from .snippets import count_lines
from .unseen import known_after


@dataclass(frozen=True)
class Written:
    """A change that went to the file on disk: the bytes written and the file's stat
    after."""

    data: bytes
    stat: os.stat_result


# Where a change landed: on disk, or in the editor's buffer (the user saves it).
Landed = Written | Literal["buffer"]


def remember_change(
    core: EditServices,
    session: str,
    path: str,
    text: str,
    landed: Landed,
    origin: Literal["edit", "write"],
    reported: Counter[DiagnosticKey],
    *,
    whole: bool = False,
    before: str | None = None,
    document: HeldDocument | None = None,
    merged_over: bool = False,
    known: str | None = None,
) -> ReadStateInfo:
    """Record what the edit or write left as the session's read-state (see the module
    docstring for why it is partial), and keep it as a snapshot for later merges.

    `reported` is what the editor reported for the file before the change was made:
    taken then, because a report made while the change lands (before this runs) is
    the change's own, and must count as new. `whole`: the agent holds all of the new
    content (it wrote it, or edited content it held whole), so a re-read of it is a
    stub, or a diff once it changes (delta.py). `before`: the text the edit changed,
    to keep what a search-only session has seen at its new lines (seen_lines.py).
    `document`: the cells a notebook cell edit leaves seen (edit/notebook_seen.py).
    `merged_over`: the change was made over another program's change the agent never
    saw (a merge, an undo over one), and `known` is the content the agent last knew
    (None: not kept). The read-state is then that content with the agent's change
    applied (or, unknown, one that matches no file), never the file as it now is
    (unseen.py), and the file's stat is not recorded, so every later look compares the
    content."""
    prior = core.read_states.get(session, path) if origin == "edit" else None
    on_disk = landed if isinstance(landed, Written) else None
    in_buffer = on_disk is None
    content_digest = digest(
        text.encode("utf-8", "surrogatepass") if on_disk is None else on_disk.data
    )
    new_stat = on_disk.stat if on_disk else None
    recorded_digest: str = content_digest
    recorded_text: str | None = text
    if merged_over:
        knows = None if known is None or before is None else known_after(known, before, text)
        recorded_digest = known_digest(knows, content_digest)
        recorded_text = knows
        new_stat = None
        whole = False
    lines = count_lines(text)  # a count of 80 KB costs about 50 us: once
    # An edit over a damaged notebook's partial text view licenses no more than it did.
    notebook_text = not whole and prior is not None and prior.notebook_text
    core.read_states.put(
        session,
        ReadRecord(
            path=path,
            digest=recorded_digest,
            scope="file",
            mtime_ns=new_stat.st_mtime_ns if new_stat else 0,
            size=new_stat.st_size if new_stat else 0,
            offset=1,
            limit=None,
            partial=True,
            tokens=0,
            source="buffer" if in_buffer else "disk",
            origin=origin,
            view=after_edit(prior, before, text),
            whole=whole,
            shown_lines=lines,
            total_lines=lines,
            document=document,
            notebook_text=notebook_text,
        ),
    )
    if recorded_text is not None:
        core.snapshots.put(path, recorded_digest, recorded_text)
    # Diagnostics reported since `reported` was taken are this edit's.
    core.diagnostics.set_baseline(session, path, reported)
    return ReadStateInfo(
        digest=recorded_digest,
        total_lines=lines,
        source="buffer" if in_buffer else "disk",
        size=new_stat.st_size if new_stat else None,
        mtime_ns=new_stat.st_mtime_ns if new_stat else None,
        next_read="stub" if whole else "full",
    )
