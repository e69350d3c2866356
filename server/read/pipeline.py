"""One read, from the agent's params to its answer, for every kind of file.

`read` serves `readkeeper/read` in one pass, each step written once:
- resolve and open: the path, beneath its root's descriptor, refused outside the
  workspace (files/fileio.py);
- sniff: the first bytes choose the reader: text, or an image, PDF or notebook
  (readers/__init__.py);
- load: the bytes, within the byte cap of the kind (a text file over it is only read
  by ranges, streamed, never held);
- buffer: an editor buffer with unsaved changes stands in for the disk, so the agent
  sees what the person sees;
- stub check: a re-read of what the session holds is a stub or a diff (stub_rule.py);
- reader: the numbered lines, an outline, or the document's reader;
- record: what the session now holds, and what it cost (stub_rule.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar

import attrs

from ..errors import ReadkeeperError, shown_name
from ..files import held_bytes
from ..files.encodings import TextEncoding
from ..files.fileio import OpenedFile, digest, open_path, peek, read_at_most
from ..hints import again
from ..progress import step
from ..protocol import (
    NotebookFile,
    NotebookResult,
    OutlineFile,
    OutlineResult,
    ReadParams,
    ReadResult,
    TextFile,
    TextResult,
)
from ..settings import Settings
from ..state.buffers import Buffer, Buffers
from . import damaged, held_document, held_range, options, partial_seen, readers, room
from .estimates import document_estimate, text_estimate
from .loop_guard import costly_step
from .readers import outline_cache, outline_read
from .readers import text as text_reader
from .readers.text_stream import stream_range
from .readers.worker import cancelled
from .services import ReadServices
from .stub_rule import (
    Content,
    Request,
    Shown,
    held_lines,
    held_whole,
    proven_unchanged,
    record,
    seen_before,
    stub,
)
from .text_too_large import first_fit, too_large, unsaved_too_large

# The views a re-read of a text file may match: the outline of its read whole, or lines.
TEXT_VIEWS = (outline_read.VIEW, "")

F = TypeVar("F", TextFile, OutlineFile, NotebookFile)


def read(services: ReadServices, params: ReadParams) -> ReadResult:
    """`readkeeper/read`: what the session should see of a file now (its lines, a stub,
    a diff, an outline, a document), recorded in the session's read-state; a refusal
    is counted in the session's errors."""
    path = services.workspace.absolute(params.file_path) if params.file_path else ""
    with (
        services.stats.journal.call(params.session, "read", path) as tally,
        held_bytes.call(path or params.file_path, cancelled),
    ):
        try:
            result = _read(services, params)
        except ReadkeeperError as exc:
            services.stats.error(params.session, exc.kind)
            raise
        tally.kind = result.type
        tally.path = getattr(result.file, "file_path", "") or tally.path
        return result


def disk_text(services: ReadServices, real_path: str) -> str | None:
    """The text of a workspace file as the disk has it, or None (outside the
    workspace, over the read cap, not text, gone): for telling an editor buffer that
    was opened or saved as the disk has it from one holding unsaved changes."""
    try:
        with open_path(services.workspace, real_path, "") as opened:
            cap, _ = readers.whole_cap(opened.fd, real_path, services.settings)
            if opened.size > cap:
                return None
            data = read_at_most(opened.fd, cap + 1)
        return text_reader.decode_text(data, real_path)[0]
    except (ReadkeeperError, OSError):
        return None


def disk_has(services: ReadServices, real_path: str, text: str) -> bool:
    """Whether the workspace file at `real_path` holds exactly `text` in UTF-8: for an
    editor buffer of a file over the read cap (`disk_text` gives None), compared a piece
    at a time (never a second copy of a document of millions of characters)."""
    try:
        with open_path(services.workspace, real_path, "") as opened:
            if not len(text) <= opened.size <= 4 * len(text):  # UTF-8: 1 to 4 bytes each
                return False
            for start in range(0, len(text), 1 << 18):
                piece = text[start : start + (1 << 18)].encode("utf-8", "surrogatepass")
                if read_at_most(opened.fd, len(piece)) != piece:
                    return False
            return not read_at_most(opened.fd, 1)
    except (ReadkeeperError, OSError):
        return False


def _read(services: ReadServices, params: ReadParams) -> ReadResult:
    settings = services.settings
    window = window_for(params, settings)
    with open_path(services.workspace, params.file_path, params.session) as opened:
        path = opened.path
        room.refuse_long_path(services.tokens, path, settings)
        window = dataclasses.replace(window, room=room.of_read(params, path))
        request = Request(params, window, opened)
        # Images, PDFs and notebooks have their own readers, chosen by content.
        head = peek(opened.fd, readers.SNIFF_BYTES)
        kind = readers.sniff(head, path)
        options.check(kind or "text", params, path)
        if kind is not None:
            return _document(services, kind, request)
        if opened.size > settings.max_size_bytes:
            # Read from the disk in ranges only: not while the editor holds unsaved
            # changes (nor its refusal naming a ranged read that would be refused).
            buffer = services.buffers.get(path)  # refused here when the editor's is lost
            if buffer is not None and buffer.edited:
                raise unsaved_too_large(path, opened.size, settings, buffer.version)
            if not window.ranged:
                raise too_large(path, opened.size, settings, first_fit(services, request))
            return _range(services, request)
        unchanged = proven_unchanged(services, request, TEXT_VIEWS, text=True)
        if unchanged is not None:
            return unchanged
        if outline_read.likely_outlined(params, path, opened.size, head, settings):
            costly_step()  # an outline: on a worker thread from the start, read once there
        data = _load(opened, settings.max_size_bytes, lambda size: too_large(path, size, settings))
    return _text(services, request, data)


def _load(opened: OpenedFile, cap: int, refuse: Callable[[int], ReadkeeperError]) -> bytes:
    """The file's bytes, refused (`refuse(size)`) over `cap`."""
    if opened.size > cap:
        raise refuse(opened.size)
    data = read_at_most(opened.fd, cap + 1)
    if len(data) > cap:  # grew while we looked
        raise refuse(len(data))
    return data


def _editor_copy(buffers: Buffers, path: str, disk: str | bytes) -> Buffer | None:
    """The editor's buffer of `path` when it holds unsaved changes, that is when it
    differs from the disk (`disk`: the file's decoded text, or a document's bytes)."""
    buffer = buffers.get(path)
    if buffer is None:
        return None
    copy = buffer.text if isinstance(disk, str) else _utf8(buffer.text)
    return None if copy == disk else buffer


def _from_buffer(buffer: Buffer) -> Content:
    """The content of an editor buffer shown in place of the disk."""
    return Content(digest(_utf8(buffer.text)), source="buffer", version=buffer.version)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _unsaved(file: F, content: Content) -> F:
    """`file` flagged as the editor's unsaved buffer when that is what it shows."""
    if content.source != "buffer":
        return file
    return attrs.evolve(file, unsaved=True, buffer_version=content.version)


# --- text -----------------------------------------------------------------------------


def _text(services: ReadServices, request: Request, data: bytes) -> ReadResult:
    """A text file held whole (within `max_size_bytes`): its lines, an outline, a stub
    or a diff."""
    settings, counter = services.settings, services.tokens
    params, path = request.params, request.opened.path
    symbol = params.symbol
    text, encoding = text_reader.decode_text(data, path)
    content = Content(_content_digest(data, text, settings))
    buffer = _editor_copy(services.buffers, path, text)
    if buffer is not None:
        # Unsaved changes in the editor: the agent sees what the person sees.
        text, content = buffer.text, _from_buffer(buffer)
    if params.estimate:
        counter.warm_up()  # what a read costs is the count, never a bound
        window = request.window
        view = text_reader.view(text, path, encoding, window, content.digest, settings, counter)
        return text_estimate(view.file)
    services.snapshots.put(path, content.digest, text)
    held = held_whole(services, request, text, content)
    if held is not None:
        return held
    # Outline and symbol reads of source files (readers/outline_read.py).
    planned = outline_read.plan(params, path, text, content.digest, settings, counter)
    if isinstance(planned, outline_read.SymbolRead):  # a ranged read of a symbol's lines
        window = window_for(planned.params, settings, symbol=True)
        window = dataclasses.replace(window, room=request.window.room)  # the caller's call
        request = Request(planned.params, window, request.opened)
    elif planned is not None:
        costly_step()  # a parse and a walk: not on the event loop
        step(f"outlining {shown_name(path)}")
        return _outline(services, request, planned, text, encoding, content)

    previous = seen_before(services, request, content)
    if previous is not None:
        return stub(services, request, previous, content.version)
    moved = held_range.answer(services, request, symbol, text, content)
    if moved is not None:
        return moved

    window = request.window
    view = text_reader.view(text, path, encoding, window, content.digest, settings, counter)
    file = outline_read.noted(_unsaved(view.file, content), planned)
    whole = not file.partial and window.offset == 1 and file.num_lines == file.total_lines
    first = file.start_line - 1
    shown = Shown(
        file.tokens,
        partial=file.partial,
        left_out=view.tokens_left_out,
        held=held_lines(file.start_line, file.num_lines, file.total_lines)
        if file.partial
        else None,
        whole=whole and not file.truncated_lines,
        num_lines=file.num_lines,
        total_lines=file.total_lines,
        # Only a view of part of the file is looked for again in a changed file.
        lines_digest=None
        if whole
        else held_range.lines_digest(
            text_reader.leading_lines(text, first + file.num_lines)[first:]
        ),
        symbol=symbol,
    )
    if not whole:
        known = partial_seen.known_after_read(
            services, request.params.session, path, content.digest, text, first, file.num_lines
        )
        if known is not None:
            content = dataclasses.replace(content, digest=known.digest, known=True)
            file = attrs.evolve(file, note=partial_seen.note(path, file.note))
    record(services, request, content, shown)
    return TextResult(file)


def _content_digest(data: bytes, text: str, settings: Settings) -> str:
    """`digest(data)`; of a text long enough to be outlined, hashed once for both the
    content digest and the outline's keys (`outline_cache.digest_known`)."""
    if len(data) * 5 // 16 < settings.outline_over_tokens // 2:
        return digest(data)
    return outline_cache.digest_known(text, data)[:32]


def _outline(
    services: ReadServices,
    request: Request,
    planned: outline_read.Outline,
    text: str,
    encoding: TextEncoding,
    content: Content,
) -> ReadResult:
    """A whole read of a big source file: its outline, recorded as a partial view (a
    re-read of the same outline stubs; an edit still needs the lines it changes)."""
    previous = seen_before(services, request, content, TEXT_VIEWS)
    if previous is not None:  # the same outline, or these lines read with force
        return stub(services, request, previous, content.version)
    path, settings = request.opened.path, services.settings
    file = outline_read.view(
        text,
        path,
        encoding,
        planned,
        content.digest,
        settings,
        services.tokens,
        request.window.room,
    )
    file = _unsaved(file, content)
    shown = Shown(
        file.tokens,
        partial=True,
        view=outline_read.VIEW,
        left_out=max(0, file.file_tokens - file.tokens),
        held=outline_read.held(file),
        total_lines=file.total_lines,
    )
    known = partial_seen.known_after_read(
        services, request.params.session, path, content.digest, text, 0, 0
    )
    if known is not None:
        content = dataclasses.replace(content, digest=known.digest, known=True)
    record(services, request, content, shown)
    return OutlineResult(file)


def _range(services: ReadServices, request: Request) -> ReadResult:
    """Lines of a text file too large to hold, streamed; its record is of the lines
    shown (scope "range"), never of the whole file."""
    params = request.params
    unchanged = proven_unchanged(services, request, ("",))
    if unchanged is not None:
        return unchanged
    if params.estimate:
        services.tokens.warm_up()  # what a read costs is the count, never a bound
    view, range_digest = stream_range(
        request.opened, request.window, services.settings, services.tokens
    )
    if params.estimate:
        return text_estimate(view.file)
    content = Content(range_digest, scope="range")
    previous = seen_before(services, request, content)
    if previous is not None:
        return stub(services, request, previous)
    shown = Shown(
        view.file.tokens,
        partial=False,
        num_lines=view.file.num_lines,
        total_lines=view.file.total_lines,
    )
    record(services, request, content, shown)
    return TextResult(view.file)


# --- images, PDFs and notebooks -------------------------------------------------------


def _document(services: ReadServices, kind: readers.Kind, request: Request) -> ReadResult:
    """An image, PDF or notebook, under the same read-state rules as text."""
    settings = services.settings
    params, path = request.params, request.opened.path
    view = readers.view_key(kind, params)
    unchanged = proven_unchanged(services, request, (view,))
    if unchanged is not None:
        return unchanged
    data = _load(
        request.opened,
        settings.max_document_bytes,
        lambda size: readers.too_large(path, size, settings),
    )
    content = Content(digest(data))
    disk = data
    buffer = _editor_copy(services.buffers, path, data) if kind == "notebook" else None
    if buffer is not None:
        # Unsaved changes in the editor: the agent sees what the person sees.
        data, content = _utf8(buffer.text), _from_buffer(buffer)

    previous = seen_before(services, request, content, (view,))
    if previous is not None and not params.estimate:
        return stub(services, request, previous, content.version)

    try:
        document = readers.read_document(
            kind,
            data,
            path,
            params,
            request.window,
            content.digest,
            lambda: services.outputs.for_session(params.session),
            settings,
            services.tokens,
        )
    except ReadkeeperError as exc:  # a damaged notebook: read as text (its view marked so)
        as_text = dataclasses.replace(request, notebook_text=True)
        return damaged.as_text(kind, path, disk, exc, lambda: _text(services, as_text, disk))
    if document.output_dir is not None:
        # Rendered pages: the session may read the files it was handed, unasked.
        services.workspace.grant(params.session, document.output_dir)
    result = document.result
    if params.estimate:
        return document_estimate(path, document)
    if document.snapshot is not None:
        # What the agent saw, for a cell edit's disjoint merge (edit/notebook.py).
        services.snapshots.put(path, content.digest, document.snapshot)
    if isinstance(result, NotebookResult):
        result = NotebookResult(_unsaved(result.file, content))
    shown = Shown(
        document.tokens,
        partial=document.partial,
        view=view,
        left_out=document.tokens_left_out,
        document=held_document.held(result, params.include_images),
    )
    record(services, request, content, shown)
    return result


# --- what was asked, and the refusals of text -----------------------------------------


def window_for(params: ReadParams, settings: Settings, symbol: bool = False) -> text_reader.Window:
    """The lines a read asks for, after the defaults; `bad_params` for an offset or
    limit that cannot be."""
    if params.offset is not None and params.offset < 1:
        raise ReadkeeperError(
            "bad_params",
            f"offset must be 1 or more (the first line is 1), got {params.offset}. "
            f"From the top: {again(offset=1)}.",  # the same read, its other params kept
            field="offset",
        )
    if params.limit is not None and params.limit < 1:
        raise ReadkeeperError(
            "bad_params", f"limit must be 1 or more, got {params.limit}.", field="limit"
        )
    return text_reader.Window(
        offset=params.offset or 1,
        limit=params.limit or settings.default_limit,
        ranged=params.offset is not None or params.limit is not None,
        defaulted=params.offset is not None and params.limit is None,
        symbol=symbol,
    )
