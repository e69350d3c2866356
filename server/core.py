"""The core: one object that serves every front end (LSP, MCP, CLI).

It owns the settings, the workspace, the read-state of every session and the counters,
and it is plain Python: no pygls here, so every rule is testable in-process. Front ends
convert their params with `protocol.structure` (the LSP and MCP ones through `calls`),
call a method, and unstructure the result.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs

from .attachments.diagnostics import DiagnosticsStore
from .errors import ReadkeeperError
from .files.encodings import TextEncoding
from .files.fileio import OpenedFile, digest, open_path, peek, read_at_most
from .files.outputs import OutputFolders
from .files.paths import Workspace
from .protocol import (
    AttachmentsParams,
    ChangedResult,
    ChangesParams,
    ChangesResult,
    DiagnosticsParams,
    EditParams,
    EditResult,
    EstimateFile,
    EstimateResult,
    ForgetParams,
    NotebookEditParams,
    NotebookEditResult,
    NotebookResult,
    OutlineResult,
    ReadParams,
    ReadResult,
    StatsParams,
    TextFile,
    TextResult,
    UnchangedFile,
    UnchangedResult,
    WriteParams,
    WriteResult,
)
from .read import delta, readers
from .read.readers import outline_read
from .read.readers import text as text_reader
from .read.tokens import TokenCounter
from .settings import Settings, resolve_settings
from .state.readstate import ReadRecord, ReadStates, Scope, Source
from .state.snapshots import Snapshots
from .state.stats import Stats
from .watch.changes import ChangeNotices

if TYPE_CHECKING:
    from .watch.watcher import Watcher

# What a `file_unchanged` stub costs the agent, roughly: {"type":"file_unchanged",...}.
STUB_TOKENS = 12

P = TypeVar("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Buffer:
    """An editor's in-memory copy of a document."""

    text: str
    version: int | None
    # Whether it changed since the editor opened or last saved it. A buffer that did not
    # but differs from the disk is a clean one the editor has not reloaded yet.
    edited: bool = True


class Buffers(Protocol):
    """Where the core learns about open editor documents (the LSP front end)."""

    def get(self, real_path: str) -> Buffer | None:
        """The editor's copy of the document at `real_path`; None when it is not open."""
        ...


class NoBuffers:
    def get(self, real_path: str) -> Buffer | None:
        return None


class Readkeeper:
    """The core: what every front end (LSP, MCP, CLI) calls, one method per request. The
    methods block, and run on the front end's worker threads, several at a time."""

    def __init__(
        self,
        roots: list[str] | None = None,
        client_settings: Mapping[str, Any] | None = None,
        buffers: Buffers | None = None,
    ) -> None:
        self.workspace = Workspace()
        self.workspace.set_roots(roots or [])
        self.read_states = ReadStates()
        self.snapshots = Snapshots()  # what reads showed, for edits' disjoint merges
        self.stats = Stats()
        self.diagnostics = DiagnosticsStore()
        self._attachment_pool: ThreadPoolExecutor | None = None
        self.buffers: Buffers = buffers or NoBuffers()
        self.outputs = OutputFolders()  # rendered PDF pages, outside the workspace
        # The watcher and change notices (watch.py, changes.py); a front end starts it.
        self.notices = ChangeNotices(
            self.read_states,
            self.snapshots,
            self._get_settings,
            self.stats,
            lambda path: self.workspace.locate(path, grants=False),
        )
        self.watcher: Watcher | None = None
        self._watch_lock = threading.RLock()
        self._watch_wanted = False
        self._watch_callbacks: tuple[Callable[[str], None] | None, Progress | None] = (None, None)
        self._settings_lock = threading.Lock()
        self.settings = Settings()
        self.settings_warnings: list[str] = []  # what `configure` said of the settings
        self.tokens = TokenCounter(self.settings.token_encoding)
        self.configure(client_settings)

    # --- settings -----------------------------------------------------------------------

    def configure(self, client_settings: Mapping[str, Any] | None) -> list[str]:
        """Apply client settings (env still wins); returns warnings for the user."""
        settings, warnings = resolve_settings(client_settings)
        with self._settings_lock:
            self.settings = settings
            self.settings_warnings = warnings
            self.workspace.allowed = settings.allowed_paths
            if settings.token_encoding != self.tokens.encoding_name:
                self.tokens = TokenCounter(settings.token_encoding)
        self._restart_watcher_if_needed()
        return warnings

    # --- read ---------------------------------------------------------------------------

    def read(self, params: ReadParams) -> ReadResult:
        """`readkeeper/read`: what the session should see of a file now (its lines, a stub,
        a diff, an outline, a document), recorded in the session's read-state."""
        try:
            return self._read(params)
        except ReadkeeperError as exc:
            self.stats.error(params.session, exc.kind)
            raise

    def disk_text(self, real_path: str) -> str | None:
        """The text of a workspace file as the disk has it, or None (outside the
        workspace, over the read cap, not text, gone): for telling an editor buffer that
        was opened or saved as the disk has it from one holding unsaved changes."""
        try:
            with open_path(self.workspace, real_path, "") as opened:
                if opened.size > self.settings.max_size_bytes:
                    return None
                data = read_at_most(opened.fd, self.settings.max_size_bytes + 1)
            return text_reader.decode_text(data, real_path)[0]
        except (ReadkeeperError, OSError):
            return None

    def _read(self, params: ReadParams) -> ReadResult:
        settings = self.settings
        window = _window(params, settings)
        with open_path(self.workspace, params.file_path, params.session) as opened:
            path = opened.path
            # Images, PDFs and notebooks have their own readers, chosen by content.
            kind = readers.sniff(peek(opened.fd, readers.SNIFF_BYTES), path)
            if kind is not None:
                if params.symbol is not None:
                    raise outline_read.no_grammar(path)
                return self._read_document(kind, opened, window, params)
            if params.pages is not None or params.render:
                field = "pages" if params.pages is not None else "render"
                raise ReadkeeperError(
                    "bad_params",
                    f"{field} applies to PDFs, and {path} is a text file: read it by lines "
                    "with offset and limit instead.",
                    field=field,
                )
            if opened.size > settings.max_size_bytes:
                if not window.ranged:
                    raise _too_large(opened, settings)
                return self._read_large(opened, window, params)
            data = read_at_most(opened.fd, settings.max_size_bytes + 1)
        if len(data) > settings.max_size_bytes:  # grew while we looked
            raise _too_large(opened, settings, len(data))
        content_digest = digest(data)
        text, encoding = text_reader.decode_text(data, path)
        source: Source = "disk"
        version: int | None = None
        buffer = self.buffers.get(path)
        if buffer is not None and buffer.text != text:
            # Unsaved changes in the editor: the agent sees what the person sees.
            text, source, version = buffer.text, "buffer", buffer.version
            content_digest = digest(text.encode("utf-8", "surrogatepass"))
        if params.estimate:
            self.tokens.warm_up()  # what a read costs is the count, never a bound
            return _estimate(
                text_reader.view(
                    text, path, encoding, window, content_digest, settings, self.tokens
                ).file
            )
        self.snapshots.put(path, content_digest, text)
        held = self._held_whole(params, window, opened, text, content_digest, source, version)
        if held is not None:
            return held
        # Outline and symbol reads of source files (readers/outline_read.py).
        planned = outline_read.plan(params, path, text, content_digest, settings, self.tokens)
        if isinstance(planned, ReadParams):  # a symbol read: a ranged read of its lines
            params, window = planned, _window(planned, settings)
        elif planned is not None:
            outlined = _Outlined(planned, text, encoding, content_digest, source, version)
            return self._read_outline(params, window, opened, outlined)

        previous = self._seen_before(params, path, window, content_digest, "file", source)
        if previous is not None:
            return self._stub(params.session, previous, opened, version)

        view = text_reader.view(text, path, encoding, window, content_digest, settings, self.tokens)
        file = view.file
        if source == "buffer":
            file = attrs.evolve(file, unsaved=True, buffer_version=version)
        lines_held = None
        if file.partial:
            last = file.start_line + file.num_lines - 1
            lines_held = (
                f"Lines {file.start_line}-{last} of {file.total_lines:,}, unchanged since your "
                f"read (force=true sends them again); the rest starts at offset={last + 1}."
            )
        self._record_read(
            params,
            window,
            opened,
            content_digest,
            "file",
            file.partial,
            file.tokens,
            source=source,
            version=version,
            left_out=view.tokens_left_out,
            held=lines_held,
            whole=not file.partial and window.offset == 1 and not file.truncated_lines,
        )
        return TextResult(file)

    def _held_whole(
        self,
        params: ReadParams,
        window: text_reader.Window,
        opened: OpenedFile,
        text: str,
        content_digest: str,
        source: Source,
        version: int | None,
    ) -> UnchangedResult | ChangedResult | None:
        """A whole re-read of text the session holds all of (a complete read, a write, or
        its own edit of such): a stub when unchanged, else the diff when much smaller
        than the file (delta.py); None to read as usual."""
        if params.force or window.ranged or params.symbol is not None:
            return None
        previous = self.read_states.get(params.session, opened.path)
        if previous is None or not previous.holds_whole() or previous.source != source:
            return None
        if previous.digest == content_digest:
            whole = next(view for view in previous.views() if view.whole)
            return self._stub(params.session, previous, opened, version, answered=whole)
        before = self.snapshots.get(opened.path, previous.digest)
        if before is None:
            return None
        changed = delta.changed_view(before, text, opened.path, self.settings, self.tokens)
        if changed is None:
            return None
        self._record_read(
            params,
            window,
            opened,
            content_digest,
            "file",
            False,
            changed.tokens,
            source=source,
            version=version,
            whole=True,
        )
        return ChangedResult(changed)

    def _read_large(
        self, opened: OpenedFile, window: text_reader.Window, params: ReadParams
    ) -> ReadResult:
        if params.estimate:
            self.tokens.warm_up()  # what a read costs is the count, never a bound
        view, range_digest = text_reader.stream_range(opened, window, self.settings, self.tokens)
        if params.estimate:
            return _estimate(view.file)
        previous = self._seen_before(params, opened.path, window, range_digest, "range", "disk")
        if previous is not None:
            return self._stub(params.session, previous, opened)
        self._record_read(params, window, opened, range_digest, "range", False, view.file.tokens)
        return TextResult(view.file)

    def _read_outline(
        self,
        params: ReadParams,
        window: text_reader.Window,
        opened: OpenedFile,
        it: _Outlined,
    ) -> ReadResult:
        """A whole read of a big source file: its outline, recorded as a partial view (a
        re-read of the same outline stubs; an edit still needs the lines it changes)."""
        view = outline_read.VIEW
        previous = self._seen_before(
            params, opened.path, window, it.digest, "file", it.source, view
        ) or self._seen_before(params, opened.path, window, it.digest, "file", it.source)
        if previous is not None:  # the same outline, or these lines read with force
            return self._stub(params.session, previous, opened, it.version)
        file = outline_read.view(
            it.text, opened.path, it.encoding, it.planned, it.digest, self.settings, self.tokens
        )
        if it.source == "buffer":
            file = attrs.evolve(file, unsaved=True, buffer_version=it.version)
        self._record_read(
            params,
            window,
            opened,
            it.digest,
            "file",
            True,
            file.tokens,
            source=it.source,
            version=it.version,
            view=view,
            left_out=max(0, file.file_tokens - file.tokens),
            held=outline_read.held(file),
        )
        return OutlineResult(file)

    def _read_document(
        self,
        kind: readers.Kind,
        opened: OpenedFile,
        window: text_reader.Window,
        params: ReadParams,
    ) -> ReadResult:
        """An image, PDF or notebook, under the same read-state rules as text."""
        settings = self.settings
        if opened.size > settings.max_document_bytes:
            raise readers.too_large(opened.path, opened.size, settings)
        data = read_at_most(opened.fd, settings.max_document_bytes + 1)
        if len(data) > settings.max_document_bytes:  # grew while we looked
            raise readers.too_large(opened.path, len(data), settings)
        source: Source = "disk"
        version: int | None = None
        buffer = self.buffers.get(opened.path) if kind == "notebook" else None
        if buffer is not None and buffer.text.encode("utf-8", "surrogatepass") != data:
            # Unsaved changes in the editor: the agent sees what the person sees.
            data = buffer.text.encode("utf-8", "surrogatepass")
            source, version = "buffer", buffer.version
        content_digest = digest(data)
        view = readers.view_key(kind, params)

        previous = self._seen_before(
            params, opened.path, window, content_digest, "file", source, view
        )
        if previous is not None and not params.estimate:
            return self._stub(params.session, previous, opened, version)

        document = readers.read_document(
            kind,
            data,
            opened.path,
            params,
            window,
            content_digest,
            lambda: self._output_dir(params.session),
            settings,
            self.tokens,
        )
        result = document.result
        if params.estimate:
            return EstimateResult(
                EstimateFile(
                    file_path=opened.path,
                    tokens=document.tokens,
                    num_lines=0,
                    total_lines=None,
                    partial=document.partial,
                    note=f"A read with these parameters would send a {result.type} result of "
                    f"{document.tokens:,} tokens. Nothing was recorded.",
                )
            )
        if kind == "notebook" and len(data) <= readers.notebook.SNAPSHOT_MAX_BYTES:
            # What the agent saw, so a cell edit after another program's change can be
            # proved disjoint (edit/notebook.py).
            self.snapshots.put(opened.path, content_digest, data.decode("utf-8-sig"))
        if source == "buffer" and isinstance(result, NotebookResult):
            result = NotebookResult(attrs.evolve(result.file, unsaved=True, buffer_version=version))
        held = None
        if document.partial:
            shown = getattr(result.file, "note", None)
            held = "Unchanged since your read, which held only part of it" + (
                f" ({shown.rstrip('.')}). " if shown else ". "
            )
            held += "force=true sends it again."
        self._record_read(
            params,
            window,
            opened,
            content_digest,
            "file",
            document.partial,
            document.tokens,
            source=source,
            version=version,
            view=view,
            left_out=document.tokens_left_out,
            held=held,
        )
        return result

    def _seen_before(
        self,
        params: ReadParams,
        path: str,
        window: text_reader.Window,
        content_digest: str,
        scope: Scope,
        source: Source,
        view: str = "",
    ) -> ReadRecord | None:
        """The session's earlier read of this same content with the same parameters
        (after defaults) and settings: the condition for a `file_unchanged` stub
        (DESIGN.md, "Read-state: the rules"). Such a read showed exactly what this one
        would, even when a cap cut it. What an edit or write left never stubs: the
        agent never read it as a read shows it."""
        latest = self.read_states.get(params.session, path)
        if params.force or latest is None:
            return None
        if (latest.scope, latest.source, latest.digest) != (scope, source, content_digest):
            return None
        for previous in latest.views():
            if previous.origin != "read" or previous.caps != hash(self.settings):
                continue
            if previous.partial and previous.ranged != window.ranged:
                continue  # over the token cap a whole read is cut, a ranged one refused
            if previous.same_view(window.offset, window.limit, view):
                return previous
        return None

    def _stub(
        self,
        session: str,
        previous: ReadRecord,
        opened: OpenedFile,
        version: int | None = None,
        answered: ReadRecord | None = None,
    ) -> UnchangedResult:
        """Answer a re-read with `file_unchanged`. The read counts as a read: its record
        is renewed (same content and views, the file's stat as it is now). `answered` is
        the view the stub stands for when it is not the newest (a whole re-read of a file
        read whole, then in a range): its tokens are what the stub saved."""
        answered = answered or previous
        renewed = dataclasses.replace(
            previous,
            mtime_ns=opened.mtime_ns,
            size=opened.size,
            buffer_version=version,
            recorded_ns=time.time_ns(),
        )
        self.read_states.put(session, renewed)
        self.diagnostics.mark_seen(session, previous.path)
        saved = max(0, answered.tokens - STUB_TOKENS)
        self.stats.add(session, reads=1, dedup_hits=1, tokens_saved_by_stubs=saved)
        return UnchangedResult(UnchangedFile(previous.path, answered.held))

    def _output_dir(self, session: str) -> str:
        """The session's folder for rendered pages, which its agent may then read."""
        folder = self.outputs.for_session(session)
        self.workspace.grant(session, folder)
        return folder

    def _record_read(
        self,
        params: ReadParams,
        window: text_reader.Window,
        opened: OpenedFile,
        content_digest: str,
        scope: Scope,
        partial: bool,
        tokens: int,
        *,
        source: Source = "disk",
        version: int | None = None,
        view: str = "",
        left_out: int = 0,
        held: str | None = None,
        whole: bool = False,
    ) -> None:
        """What the session now has seen (its read-state) and what that cost it."""
        self.read_states.put(
            params.session,
            ReadRecord(
                path=opened.path,
                digest=content_digest,
                scope=scope,
                mtime_ns=opened.mtime_ns,
                size=opened.size,
                offset=window.offset,
                limit=window.limit,
                partial=partial,
                tokens=tokens,
                source=source,
                buffer_version=version,
                view=view,
                ranged=window.ranged,
                caps=hash(self.settings),
                held=held,
                whole=whole,
            ),
        )
        self.diagnostics.mark_seen(params.session, opened.path)
        self.stats.add(
            params.session, reads=1, tokens_returned=tokens, tokens_saved_by_budgets=left_out
        )
        self.stats.served(params.session, opened.path, tokens)

    # --- read-state and counters --------------------------------------------------------

    def forget(self, params: ForgetParams) -> dict[str, Any]:
        """`readkeeper/forget`: the agent no longer holds what it read (a compaction or a
        rewind), so drop the session's read-state and pending change notices, of `paths`
        or of everything (and then its permissions too)."""
        paths = None
        if params.paths is not None:
            paths = [os.path.realpath(self.workspace.absolute(p)) for p in params.paths]
        dropped = self.read_states.forget(params.session, paths)
        self.notices.forget(params.session, paths)
        if paths is None:
            self.workspace.forget_grants(params.session)
        return {"session": params.session, "forgotten": dropped}

    def stats_for(self, params: StatsParams) -> dict[str, Any]:
        """`readkeeper/stats`: the counters (the session's and the total), with the size of
        the session's read-state and the state of the watcher and the token table."""
        result = self.stats.snapshot(params.session)
        result["files_in_read_state"] = self.read_states.count(params.session)
        result["watcher"] = self.watcher_status()
        # Until "loaded", text reads' `tokens` may be upper bounds (tokens_upper_bound).
        result["token_table"] = self.tokens.state
        return result

    # --- edits and writes (edits.py) ----------------------------------------------------

    # The change modules are imported on first use: not needed to answer `initialize`.

    def edit(self, params: EditParams) -> EditResult:
        """`readkeeper/edit` of a text file (edits.py)."""
        from .edit import edits

        result = self._change(params.session, edits.edit, params)
        self.stats.add(params.session, edits=1, disjoint_merges=int(result.merged))
        return result

    def edit_cell(self, params: NotebookEditParams) -> NotebookEditResult:
        """`readkeeper/edit` of a notebook cell (`cell_id`/`new_source`/`edit_mode`)."""
        from .edit import notebook

        result = self._change(params.session, notebook.edit_cell, params)
        self.stats.add(params.session, edits=1, disjoint_merges=int(result.merged))
        return result

    def write(self, params: WriteParams) -> WriteResult:
        """`readkeeper/write`: create a file, or replace all of one (edits.py)."""
        from .edit import edits

        result = self._change(params.session, edits.write, params)
        self.stats.add(params.session, writes=1)
        return result

    def _change(self, session: str, apply: Callable[[Readkeeper, P], R], params: P) -> R:
        """Run an edit or write, counting its refusals (and stale ones apart)."""
        try:
            return apply(self, params)
        except ReadkeeperError as exc:
            self.stats.error(session, exc.kind)
            if exc.kind == "stale":
                self.stats.add(session, stale_edits_caught=1)
            raise

    # --- attachments --------------------------------------------------------------------

    @property
    def attachment_pool(self) -> ThreadPoolExecutor:
        """Threads for gathering attachment sources concurrently (made on first use)."""
        with self._settings_lock:
            if self._attachment_pool is None:
                self._attachment_pool = ThreadPoolExecutor(8, thread_name_prefix="attach")
            return self._attachment_pool

    def attachments(self, params: AttachmentsParams) -> dict[str, Any]:
        """`readkeeper/attachments`: the turn's context, fitted into the token budget
        (attachments/collect.py)."""
        from .attachments.collect import TYPES, gather

        unknown = sorted(set(params.types or ()) - set(TYPES))
        if unknown:
            raise ReadkeeperError(
                "bad_params",
                f"Unknown attachment types {unknown}; the types are {list(TYPES)}.",
                field="types",
            )
        if params.budget_tokens is not None and params.budget_tokens < 1:
            raise ReadkeeperError(
                "bad_params", "budget_tokens must be 1 or more.", field="budget_tokens"
            )
        fitted = gather(self, params)
        self.stats.attachments(params.session, fitted)
        return fitted.as_json()

    def did_change_diagnostics(self, params: DiagnosticsParams) -> int:
        """`readkeeper/didChangeDiagnostics`: take what the editor now reports; returns how
        many files it touched."""
        try:
            return self.diagnostics.update(params.items)
        except ValueError as exc:
            raise ReadkeeperError(
                "bad_params", f"Invalid diagnostics: {exc}.", field="items"
            ) from None

    def diagnostics_after_edit(
        self, session: str, path: str, since_ns: int
    ) -> dict[str, Any] | str | None:
        """What the editor reports for a file just edited (see `after_edit`); waits up to
        `edit_diagnostics_wait_ms`."""
        from .attachments.diagnostics import after_edit

        return after_edit(
            self.diagnostics,
            session,
            path,
            since_ns,
            wait=self.settings.edit_diagnostics_wait_ms / 1000,
            editor_has_it_open=self.buffers.get(path) is not None,
        )

    def close(self) -> None:
        """Stop background work (the server calls this on shutdown)."""
        if self._attachment_pool is not None:
            self._attachment_pool.shutdown(wait=False, cancel_futures=True)
        self.stop_watching()

    # --- the watcher and change notices (watch.py, changes.py) --------------------------

    def start_watching(
        self, warn: Callable[[str], None] | None = None, progress: Progress | None = None
    ) -> bool:
        """Start watching the workspace roots (in the background: this returns at once).
        False when the `watch` setting is off. `warn` gets the one-off warnings (e.g. the
        fallback to polling), `progress` the setup's ("begin"|"report"|"end", message)."""
        from .watch.watcher import WatchCallbacks, Watcher

        with self._watch_lock:
            self._watch_wanted = True
            self._watch_callbacks = (warn, progress)
            if self.watcher is not None or not self.settings.watch:
                return False
            callbacks = WatchCallbacks(self.notices.process, self.read_states.files)
            if warn is not None:
                callbacks.warn = warn
            callbacks.progress = progress
            self.watcher = Watcher(self.workspace.roots, self.settings, callbacks, self.stats.watch)
            self.watcher.start()
            return True

    def stop_watching(self) -> None:
        """Stop the watcher and every thread it started."""
        with self._watch_lock:
            self._watch_wanted = False
            watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()

    def roots_changed(self) -> None:
        """The workspace roots changed (workspace/didChangeWorkspaceFolders)."""
        with self._watch_lock:
            if self.watcher is not None:
                self.watcher.set_roots(self.workspace.roots)

    def changes_for(self, params: ChangesParams) -> ChangesResult:
        """`readkeeper/changes`: the changes to files the session read, each reported once."""
        return self.notices.take(params.session)

    def watcher_status(self) -> dict[str, Any]:
        """The watcher's state and counters, as `readkeeper/stats` shows them."""
        with self._watch_lock:
            watcher = self.watcher
        status: dict[str, Any] = {"state": "off"} if watcher is None else watcher.status()
        status.update(self.stats.watch.as_dict())
        return status

    def _get_settings(self) -> Settings:
        return self.settings

    def _restart_watcher_if_needed(self) -> None:
        """A watch setting changed: start again with it, in the background."""
        with self._watch_lock:
            watcher = self.watcher
            if not self._watch_wanted:
                return
            if watcher is not None and _watch_settings(watcher.settings) == _watch_settings(
                self.settings
            ):
                return
            if watcher is None and not self.settings.watch:
                return
            warn, progress = self._watch_callbacks

        def restart() -> None:
            with self._watch_lock:
                if self.watcher is not watcher:
                    return  # someone else restarted or stopped it meanwhile
                self.watcher = None
            if watcher is not None:
                watcher.stop()
            with self._watch_lock:
                if self._watch_wanted:
                    self.start_watching(warn, progress)

        threading.Thread(target=restart, name="readkeeper-watch-restart", daemon=True).start()


Progress = Callable[[str, str], None]


@dataclass(frozen=True)
class _Outlined:
    """A text read that answers with an outline (readers/outline_read.py)."""

    planned: outline_read.Outline
    text: str
    encoding: TextEncoding
    digest: str
    source: Source
    version: int | None


def _watch_settings(settings: Settings) -> tuple[Any, ...]:
    return (
        settings.watch,
        settings.watcher,
        settings.watch_exclude,
        settings.watch_debounce_ms,
        settings.watch_poll_interval_ms,
        settings.watch_force_polling,
    )


def _estimate(file: TextFile) -> EstimateResult:
    """What a read with these parameters would cost, without its content or a record."""
    return EstimateResult(
        EstimateFile(
            file_path=file.file_path,
            tokens=file.tokens,
            num_lines=file.num_lines,
            total_lines=file.total_lines,
            partial=file.partial,
            note=(
                f"A read with these parameters would send {file.num_lines:,} lines, "
                f"{file.tokens:,} tokens. Nothing was recorded: the read itself is not a stub."
            ),
        )
    )


def _window(params: ReadParams, settings: Settings) -> text_reader.Window:
    if params.offset is not None and params.offset < 0:
        raise ReadkeeperError(
            "bad_params",
            f"offset must be 1 or more (the first line is 1), got {params.offset}.",
            field="offset",
        )
    if params.limit is not None and params.limit < 1:
        raise ReadkeeperError(
            "bad_params", f"limit must be 1 or more, got {params.limit}.", field="limit"
        )
    return text_reader.Window(
        offset=max(1, params.offset or 1),
        limit=params.limit or settings.default_limit,
        ranged=params.offset is not None or params.limit is not None,
    )


def _too_large(opened: OpenedFile, settings: Settings, size: int | None = None) -> ReadkeeperError:
    size = size or opened.size
    return ReadkeeperError(
        "too_large",
        f"{opened.path} is {_human(size)} ({size} bytes), over the "
        f"{_human(settings.max_size_bytes)} limit for reading a file whole. "
        "Read it in ranges: offset=1, limit=500 "
        "(or search it first, e.g. grep, to find the lines you need).",
        file_path=opened.path,
        size=size,
        max_size_bytes=settings.max_size_bytes,
        tokens_estimate=(size + 3) // 4,
    )


def _human(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


__all__ = ["Buffer", "Buffers", "Readkeeper"]
