"""Collecting a turn's attachments: three ordered phases, each gathered concurrently.

1. user input: the files the user attached or @-mentioned (read through the normal
   readers and budgets), and memory files above them;
2. thread: diagnostics the editor forwarded, change notices for files this session read;
3. main thread: memory files at the roots, the active editor's selection, git status,
   and a few facts about the environment.

A source that fails or runs past `attachments_timeout_ms` is reported in `dropped` with
its error; it never fails the request. Everything collected then goes to the budgeter."""

from __future__ import annotations

import datetime
import os
import platform
import time
from collections.abc import Callable, Sequence, Set
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import partial
from typing import Any

from readkeeper import hint_walks, quoting, render, words
from readkeeper.errors import ReadkeeperError
from readkeeper.files.paths import names_a_folder
from readkeeper.progress import step
from readkeeper.protocol import AttachmentsParams, ChangesParams, ReadParams, unstructure
from readkeeper.quoting import name
from readkeeper.read.tokens import estimate_tokens

from . import blind, cut_notes, diagnostics, gitstatus, gitstatus_stalls, gitstatus_workers, memory
from .budget import fit
from .model import (
    CHANGES,
    DIAGNOSTICS,
    ENVIRONMENT,
    GIT_STATUS,
    NEW_DIAGNOSTICS,
    USER,
    Attachment,
    Dropped,
    Fitted,
)
from .selection import selection
from .services import AttachmentServices

TYPES = ("file", "memory", "diagnostics", "changes", "selection", "git_status", "environment")

# Sources pre-cut their text by the cheap estimate (with this much slack) so that exact
# counting, which the budgeter then does, only ever sees about a cap's worth of text.
# The estimate overcounts ordinary text, so the exact count rarely has to cut again.
_ESTIMATE_SLACK = 1.0


@dataclass(frozen=True)
class Source:
    """One source of a phase, run on the attachment pool; its type and name label it
    in `dropped` when it fails or runs out of time (`timed`: run given when that is)."""

    type: str
    name: str
    # A source of several files (memory files) judges each alone: one it cannot attach
    # is a `Dropped` of its own, with its reason, beside the attachments of the others.
    run: Callable[..., Sequence[Attachment | Dropped]]
    timed: bool = False


def gather(core: AttachmentServices, params: AttachmentsParams) -> Fitted:
    """The session's attachments for one turn, fitted into the budget. Change notices
    that are dropped will be reported again, and a mention cut or dropped loses its
    read-state (the agent does not hold it as a read shows it)."""
    wanted = set(params.types) if params.types is not None else set(TYPES)
    settings = core.settings
    budget = params.budget_tokens or settings.attachments_budget_tokens
    kept = (core.workspace.absolute(p) + "/" * names_a_folder(p) for p in params.mentions or [])
    mentions = list(dict.fromkeys(kept))  # each once, read as `read` reads it: `a.txt/` kept
    phases = [
        _user_phase(core, params, mentions, wanted),
        _thread_phase(core, params, mentions, wanted),
        _main_phase(core, params, wanted),
    ]
    items: list[Attachment] = []
    dropped: list[Dropped] = []
    timeout = settings.attachments_timeout_ms / 1000
    for done, phase in enumerate(phases):
        step(f"gathering: {', '.join(s.type for s in phase) or 'nothing'}", done, len(phases))
        got, failed = _run_phase(core.attachment_pool, phase, timeout, wanted)
        items.extend(got)
        dropped.extend(failed)
    # A memory file above a mention may also sit at a root, and a mention may itself be
    # a memory file: each file is attached once (the mention, the user's own, wins).
    seen = {item.source for item in items if item.type == "file"}
    unique: list[Attachment] = []
    for item in items:
        if item.type == "memory":
            if item.source in seen:
                continue
            seen.add(item.source)
        unique.append(item)
    fitted = fit(unique, budget, core.tokens, dropped)  # their summaries' room set aside
    budgeted = fitted.dropped[len(dropped) :]  # what the budget dropped
    lost = [d.source for d in budgeted if d.type == "changes"]
    if lost:
        core.notices.restore(params.session, lost)
    # A mention cut or dropped was read, but the agent holds only part of it (or none):
    # its next read must be the file, not a stub.
    cut = [a.source for a in fitted.attachments if a.type == "file" and a.truncated]
    cut += [d.source for d in budgeted if d.type == "file"]
    if cut:
        core.read_states.forget(params.session, cut)
    return fitted


def _run_phase(
    pool: ThreadPoolExecutor, sources: Sequence[Source], timeout: float, wanted: Set[str] = set()
) -> tuple[list[Attachment], list[Dropped]]:
    cut_at = time.monotonic() + timeout  # what a `timed` source is given
    # (the core's pool runs each in the call's context: its walks' memo, files/reach.py)
    futures = [(source, pool.submit(source.run, *[cut_at] * source.timed)) for source in sources]
    wait([f for _, f in futures], timeout=timeout)
    items: list[Attachment] = []
    dropped: list[Dropped] = []
    for source, future in futures:
        # A source cut at the phase's time by its own hand (git status) is said the same.
        cut = future.exception() if future.done() else None
        if not future.done() or isinstance(cut, gitstatus_workers.NotRun):
            future.cancel()
            reason = cut_notes.timed_out(source, timeout, wanted == {source.type})
            if isinstance(cut, gitstatus_workers.NotRun) and cut.stopped:
                reason = cut_notes.worker_stopped(source)  # not a slow repository
            dropped.append(Dropped(source.type, source.name, reason))
            continue
        error = future.exception()
        if error is None:
            for got in future.result():
                if isinstance(got, Dropped):
                    dropped.append(got)
                else:
                    items.append(got)
        elif isinstance(error, ReadkeeperError):
            dropped.append(Dropped(source.type, source.name, f"{error.kind}: {error.message}"))
        else:
            dropped.append(Dropped(source.type, source.name, cut_notes.fault(error)))
    return items, dropped


# --- phase 1: the user's own input ---------------------------------------------------------


def _user_phase(
    core: AttachmentServices, params: AttachmentsParams, mentions: list[str], wanted: set[str]
) -> list[Source]:
    sources: list[Source] = []
    if "file" in wanted:
        for path in mentions:
            sources.append(Source("file", path, partial(_mention, core, params, path)))
    if "memory" in wanted and mentions:
        sources.append(
            Source(
                "memory",
                cut_notes.ABOVE_MENTIONS,
                lambda: memory.items(
                    core.settings,
                    memory.above(memory.real_paths(mentions, core.workspace), core.workspace),
                ),
            )
        )
    return sources


def _mention(core: AttachmentServices, params: AttachmentsParams, path: str) -> list[Attachment]:
    try:
        result = unstructure(core.read(ReadParams(file_path=path, session=params.session)))
    except ReadkeeperError as exc:
        if exc.kind == "too_large":
            # The user's input is cut, never dropped: a text too big to read whole is
            # read from its first line, and the cut's note names the line to go on at.
            lines = _first_lines(core, params, path, exc)
            return [_as_attachment(core, hint_walks.notes(lines, cut_notes.reads_of(path)))]
        if exc.kind != "pages_required":
            raise
        # A PDF too big to read whole: its first pages, and the note says where to go on.
        first = str(exc.data.get("suggested_pages"))
        read = ReadParams(file_path=path, pages=first, session=params.session)
        result = unstructure(core.read(read))
        result["file"] = cut_notes.first_pages(result["file"])
    return [_as_attachment(core, hint_walks.notes(result, cut_notes.reads_of(path)))]


def _first_lines(
    core: AttachmentServices, params: AttachmentsParams, path: str, refused: ReadkeeperError
) -> dict[str, Any]:
    """The first lines of a text too big to read whole, as many as the token cap lets
    through; anything else (an image over the pixel limit) is `refused` as read was."""
    fits: int | None = None
    while True:
        read = ReadParams(file_path=path, offset=1, limit=fits, session=params.session)
        try:
            first: dict[str, Any] = unstructure(core.read(read))
            return first
        except ReadkeeperError as exc:
            more = exc.data.get("largest_limit") if exc.kind == "token_limit" else None
            if not more or fits:
                raise refused from None  # the plain read's kind and next step
            fits = int(more)


def _as_attachment(core: AttachmentServices, result: dict[str, Any]) -> Attachment:
    file = result["file"]
    common: dict[str, Any] = {
        "type": "file",
        "priority": USER,
        "protected": True,
        "source": file["file_path"],
        "max_tokens": core.settings.mention_max_tokens,
    }
    path = file["file_path"]
    if result["type"] == "file_unchanged":
        # What the stub says the agent holds (the lines, how it got them).
        return Attachment(content=render.read(result), **common)
    if result["type"] == "text":
        content = file["content"]
        if file.get("note"):
            content += f"\n[{file['note']}]"
        return Attachment(
            content=content,
            file_path=path,
            first_line=file["start_line"],
            cut_note=cut_notes.file_lines(path, file["start_line"], file.get("total_lines")),
            **common,
        )
    if result["type"] in ("outline", "file_changed"):
        # A big source file's outline, or the diff to what the agent holds: as text,
        # a cut counted in the file's lines.
        cut = cut_notes.outline if result["type"] == "outline" else cut_notes.diff
        return Attachment(
            content=render.read(result), cut_note=cut(path, file["total_lines"]), **common
        )
    if result["type"] in ("pdf", "notebook"):
        # As text, a cut counted in the PDF's pages or the notebook's cells.
        part = cut_notes.pdf_pages if result["type"] == "pdf" else cut_notes.notebook_cells
        return Attachment(content=render.read(result), cut_note=part(path, file), **common)
    # An image: its reader already fitted it to the image budget; it is sent or dropped.
    return Attachment(content=result, tokens=int(file.get("tokens", 0)), **common)


# --- phase 2: the thread ---------------------------------------------------------------


def _thread_phase(
    core: AttachmentServices, params: AttachmentsParams, mentions: list[str], wanted: set[str]
) -> list[Source]:
    sources: list[Source] = []
    if "diagnostics" in wanted:
        # Asked for diagnostics alone with mentions: just those files' diagnostics.
        alone = mentions and wanted == {"diagnostics"}
        only = set(memory.real_paths(mentions, core.workspace)) if alone else None
        sources.append(Source("diagnostics", "editor", lambda: _diagnostics(core, params, only)))
    if "changes" in wanted:
        sources.append(Source("changes", "watcher", partial(_changes, core, params.session)))
    return sources


def _changes(core: AttachmentServices, session: str) -> list[Attachment]:
    """Files this session read that changed since, one item each. They are taken from
    the notices here; whichever the budget then drops is handed back (`restore`)."""
    taken = core.changes_for(ChangesParams(session=session))
    items = blind.watcher_note(taken.note, core.settings.changes_max_tokens)
    for change in taken.changes:
        where = f" to {name(change.new_path)}" if change.new_path else ""
        lines = [f"{name(change.file_path)} was {change.kind}{where} since you read it."]
        if change.diff:
            lines.append(cut_notes.diff_shown(change.diff))
        if change.note:
            lines.append(quoting.line(change.note))
        items.append(
            Attachment(
                type="changes",
                content="\n".join(lines),
                priority=CHANGES,
                source=change.file_path,
                max_tokens=core.settings.changes_max_tokens,
                truncated=change.truncated and bool(change.diff),  # no diff: none was cut
                rest_hint=(
                    f"Read the file again with {cut_notes.read_call(file_path=change.file_path)} "
                    "to see all of it."
                ),
                # A cut diff counted in the file's lines, as a mention's diff is.
                cut_note=(
                    cut_notes.diff(change.file_path, change.total_lines)
                    if change.diff and change.total_lines is not None
                    else None
                ),
            )
        )
    if taken.remaining:
        items.append(
            Attachment(
                type="changes",
                content=(
                    f"[{words.count(taken.remaining, 'more changed file')} not shown here; "
                    f"{cut_notes.attachments_call(types=['changes'])} lists them.]"
                ),
                priority=CHANGES,
                source="watcher",
                max_tokens=core.settings.changes_max_tokens,
            )
        )
    return items


def _diagnostics(
    core: AttachmentServices, params: AttachmentsParams, only: set[str] | None
) -> list[Attachment]:
    def version_of(path: str) -> int | None:
        buffer = core.buffers.get(path)
        return buffer.version if buffer is not None else None

    new, other = diagnostics.sections(core.diagnostics, params.session, version_of, only)
    # `diagnostics_offset` counts through the new ones, then the rest.
    new, left = diagnostics.skip(new, max(0, params.diagnostics_offset))
    other, _ = diagnostics.skip(other, left)
    cap = core.settings.diagnostics_max_tokens
    items = []
    before = max(0, params.diagnostics_offset)  # diagnostics ahead of this list
    for found, priority, title in (
        (new, NEW_DIAGNOSTICS, "New diagnostics (since you last read or edited these files):"),
        (other, DIAGNOSTICS, "Diagnostics:"),
    ):
        if not found:
            continue
        # Diagnostics run about 3 characters a token (paths, quotes, brackets): listing
        # that many keeps the budgeter's exact count from having to cut again.
        room = cap * 3 - len(title) - 200
        shown = diagnostics.listing(found, room, core.workspace.display)
        lines = [title, *shown.lines]
        total = sum(len(section.items) for section in found)
        if shown.omitted:
            files = words.count(shown.omitted_files, "file")
            rest = {"types": ["diagnostics"], "diagnostics_offset": before + total - shown.omitted}
            lines.append(
                f"[… {words.count(shown.omitted, 'more diagnostic')} in {files} not shown. "
                "For them, call "
                f"{cut_notes.attachments_call(**rest)}.]"
            )
        before += total
        items.append(
            Attachment(
                type="diagnostics",
                content="\n".join(lines),
                priority=priority,
                source="editor",
                max_tokens=cap,
                rest_hint=_ONE_FILE,
                truncated=bool(shown.omitted),
            )
        )
    return items


_ONE_FILE = (
    "For one file's diagnostics, call "
    f"{cut_notes.attachments_call(types=['diagnostics'], mentions=['<file>'])}."
)


def precut(lines: list[str], max_tokens: int, how_to_see_more: str) -> tuple[str, bool]:
    """The first lines that fit about `max_tokens` by the estimate, plus a count of the
    rest, and whether anything was cut: keeps exact counting off the 10,000-line case."""
    allowance = max_tokens * _ESTIMATE_SLACK
    used = 0.0
    for index, line in enumerate(lines):
        used += estimate_tokens(line) + 1
        if used > allowance:
            rest = (
                f"[… {words.count(len(lines) - index, 'more line')} not shown. {how_to_see_more}]"
            )
            return "\n".join([*lines[:index], rest]), True
    return "\n".join(lines), False


# --- phase 3: the main thread ----------------------------------------------------------


def _main_phase(
    core: AttachmentServices, params: AttachmentsParams, wanted: set[str]
) -> list[Source]:
    sources: list[Source] = []
    roots = list(core.workspace.roots)
    if "memory" in wanted:
        sources.append(
            Source(
                "memory",
                "memory files at the roots",
                lambda: memory.items(core.settings, memory.at_roots(core.workspace)),
            )
        )
    if "selection" in wanted and params.active_editor is not None:
        sources.append(Source("selection", "editor", lambda: [selection(core, params)]))
    if "git_status" in wanted:
        for root in roots:
            sources.append(Source("git_status", root, partial(_git, core, root), timed=True))
    if "environment" in wanted:
        sources.append(Source("environment", "readkeeper", lambda: [_environment(core)]))
    return sources


def _environment(core: AttachmentServices) -> Attachment:
    """Where the agent works: a few facts, the first thing a tight budget drops."""
    from readkeeper import __version__

    system = f"{platform.system()} {platform.release()} ({platform.machine()})"
    roots = ", ".join(map(name, core.workspace.roots)) or "none"
    lines = [
        f"OS: {system}",
        f"Shell: {os.environ.get('SHELL') or 'unknown'}",
        f"Workspace roots: {roots}",
        f"Date: {datetime.date.today().isoformat()}",
        f"readkeeper {__version__}",
    ]
    return Attachment(
        type="environment",
        content="\n".join(lines),
        priority=ENVIRONMENT,
        source="readkeeper",
        max_tokens=200,
    )


_GIT_OFF = "git status is off in restricted mode: the editor does not trust this workspace. "
_GIT_OFF += "Trust the workspace to get it."


def _git(core: AttachmentServices, root: str, deadline: float) -> list[Attachment]:
    if not core.trusted:
        raise ReadkeeperError("unsupported", _GIT_OFF)
    until = gitstatus_stalls.call_until(deadline, core.settings)
    try:  # ended by the phase's cut at `deadline`: one budget
        text = gitstatus.status(core.workspace, root, *gitstatus_stalls.given(core.settings), until)
    except gitstatus.NotARepository:
        return []
    core.ahead.git_status(root, text)  # the files it names may be read next
    cap = core.settings.git_status_max_tokens
    hint = "Ask the user to raise git_status_max_tokens for the full list."
    content, cut = precut(text.split("\n"), cap, hint)
    item = Attachment("git_status", content, GIT_STATUS, cap, root, truncated=cut, rest_hint=hint)
    return [item]
