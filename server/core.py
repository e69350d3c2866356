"""The core: one object that serves every front end (LSP, MCP, CLI).

A facade: it builds the services (workspace, settings, read-states, snapshots, counters,
the watcher and its notices) and hands each request to what serves it (read/pipeline.py,
edit/, attachments/, watch/control.py) through narrow interfaces (`ReadServices`, ...).
Plain Python (no pygls): every rule is testable in-process. Front ends structure their
params (`calls`), call a method, unstructure the result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar, copy_context
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

from .attachments.diagnostics import DiagnosticsStore
from .edit.journal import Journal
from .errors import ReadkeeperError, library_words, names_cut, shown_name
from .files import held_bytes, pending, user_cache
from .files.narrowed import Narrowed
from .files.outputs import OutputFolders
from .files.paths import Workspace
from .protocol import (
    AttachmentsParams,
    AttachmentsResult,
    ChangesParams,
    ChangesResult,
    DiagnosticsParams,
    EditBatchParams,
    EditParams,
    EditResult,
    ForgetParams,
    ForgetResult,
    NotebookEditParams,
    NotebookEditResult,
    ReadParams,
    StatsParams,
    StatsResult,
    WriteParams,
    WriteResult,
)
from .protocol.batch import ReadManyParams
from .protocol.convert import check_budget_tokens
from .protocol.search import GlobParams, GrepParams, ListParams
from .read import count_cache
from .read.ahead import Ahead
from .read.tokens import TokenCounter
from .search.ahead import ListingAhead, when_set_up
from .search.mtimes import FileTimes
from .settings import Settings, resolve_settings
from .state.buffers import Buffer, Buffers, NoBuffers
from .state.readstate import ReadStates
from .state.sessions import Sessions
from .state.shown_lines import ShownLines
from .state.snapshots import Snapshots
from .state.stats import Stats
from .watch.blind import Where, noted
from .watch.control import Progress, WatchControl

if TYPE_CHECKING:
    from .protocol import ReadResult
    from .watch.changes import ChangeNotices
    from .watch.watcher import Watcher

P = TypeVar("P")
R = TypeVar("R")

# The workspace of the call running in this context, when it is narrower than the
# editor's (an attached agent's roots): see `Readkeeper.serving`.
_SERVING: ContextVar[Narrowed | None] = ContextVar("readkeeper_serving", default=None)
A = ParamSpec("A")


class _CallPool(ThreadPoolExecutor):
    """Threads that run each task in the context of the call that submitted it, so an
    attachment gathered for an attached agent is read beneath its roots too."""

    def submit(self, fn: Callable[A, R], /, *args: A.args, **kwargs: A.kwargs) -> Future[R]:
        context = copy_context()
        return super().submit(lambda: context.run(fn, *args, **kwargs))


class Readkeeper:
    """The core: what every front end (LSP, MCP, CLI) calls, one method per request. The
    methods block, and run on the front end's worker threads, several at a time."""

    def __init__(
        self,
        roots: list[str] | None = None,
        client_settings: Mapping[str, Any] | None = None,
        buffers: Buffers | None = None,
    ) -> None:
        # What a killed readkeeper left in users' folders goes first (files/pending.py).
        pending.sweep_once()
        self._workspace = Workspace()
        self._workspace.set_roots(roots or [])
        self.sessions = Sessions()  # the sessions kept, least recently used first
        self.read_states = ReadStates()
        self.snapshots = Snapshots()  # what reads showed, for edits' disjoint merges
        self.shown_lines = ShownLines()  # the lines each session saw: what anchors name
        self.journal = Journal()  # each session's last change, for undo
        self.stats = Stats()
        self.diagnostics = DiagnosticsStore()
        self._attachment_pool: ThreadPoolExecutor | None = None
        self.buffers: Buffers = buffers or NoBuffers()
        self.outputs = OutputFolders()  # rendered PDF pages, outside the workspace
        self._notices: ChangeNotices | None = None  # watch/: a front end starts the watcher
        self.watching = WatchControl(
            self._workspace, self._get_settings, lambda: self.notices, self.read_states, self.stats
        )
        self.file_times = FileTimes(lambda: self.watching.watcher)  # glob's, while it hears
        self._settings_lock = threading.Lock()
        # False when untrusted: user-only settings held, git status off (set before configure).
        self.trusted = True
        self.settings = Settings()
        self.settings_warnings: list[str] = []  # what `configure` said of the settings
        self.tokens = TokenCounter(self.settings.token_encoding)
        self.configure(client_settings)
        # Reads made between calls, of the files likely read next (read/ahead.py).
        self.ahead = Ahead(self, lambda: self._workspace, lambda: self.watching.watcher)
        self.ahead.jobs.append(ListingAhead(self.file_times, lambda: self._workspace))

    @property
    def workspace(self) -> Workspace:
        """The roots the running call may reach: the editor's, or within `serving` the
        narrower ones of an attached agent."""
        return _SERVING.get() or self._workspace

    @contextmanager
    def serving(self, narrowed: Narrowed) -> Iterator[None]:
        """Within the block (and the attachment threads it starts), every path this
        core resolves is permitted and opened beneath `narrowed`'s roots."""
        token = _SERVING.set(narrowed)
        try:
            yield
        finally:
            _SERVING.reset(token)

    # --- settings -----------------------------------------------------------------------

    def configure(self, client_settings: Mapping[str, Any] | None) -> list[str]:
        """Apply client settings (env still wins); returns warnings for the user."""
        settings, warnings = resolve_settings(client_settings, trusted=self.trusted)
        with self._settings_lock:
            self.settings = settings
            self.settings_warnings = warnings
            self._workspace.set_allowed(settings.allowed_paths)
            if settings.token_encoding != self.tokens.encoding_name:
                self.tokens = TokenCounter(settings.token_encoding)
        self.watching.settings_changed()
        return warnings

    # --- read (read/pipeline.py) --------------------------------------------------------

    def read(self, params: ReadParams) -> ReadResult:
        """`readkeeper/read`: what the session should see of a file now (its lines, a stub,
        a diff, an outline, a document), recorded in the session's read-state."""
        from .read import anchors

        return anchors.read(self, params)

    def load(self) -> None:
        """Load, on a front end's thread once `initialize` is answered, what the core loads
        on first use: the read pipeline, the token index, the watcher's modules."""
        self.tokens.prepare()  # on a thread of its own
        from .read import pipeline  # noqa: F401

        self.watching.load()

    def disk_text(self, real_path: str) -> str | None:
        """The text of a workspace file as the disk has it, or None (see
        `pipeline.disk_text`): tells a clean editor buffer from one with unsaved changes."""
        from .read import pipeline

        return pipeline.disk_text(self, real_path)

    def read_many(self, params: ReadManyParams) -> dict[str, Any]:
        """`readkeeper/readMany`: several reads in one call (read/many.py)."""
        from .read.many import read_many

        return read_many(self, params)

    # --- search, glob and list (search/) -------------------------------------------------

    def grep(self, params: GrepParams) -> dict[str, Any]:
        """`readkeeper/grep`: a regular-expression search; the lines shown count as seen."""
        from .search.grep import grep

        with self.stats.journal.call(params.session, "grep", params.path or ""):
            return grep(self, params, self.file_times.suspects)

    def glob(self, params: GlobParams) -> dict[str, Any]:
        """`readkeeper/glob`: files by pattern, newest first."""
        from .search.listing import glob

        with self.stats.journal.call(params.session, "glob", params.path or ""):
            return glob(self, params, self.file_times)

    def list_folder(self, params: ListParams) -> dict[str, Any]:
        """`readkeeper/list`: a folder's entries with kinds and sizes."""
        from .search.listing import list_folder

        with self.stats.journal.call(params.session, "list", params.path or ""):
            return list_folder(self, params)

    # --- read-state and counters --------------------------------------------------------

    def enter(self, session: str) -> None:
        """A call of `session` begins (`calls.run`): it becomes the most recent session,
        and one that no longer fits (state/sessions.py) is forgotten whole, its counters
        too (the total keeps them)."""
        for gone in self.sessions.enter(session):
            self.forget(ForgetParams(session=gone))
            self.stats.forget(gone)

    def forget(self, params: ForgetParams) -> ForgetResult:
        """`readkeeper/forget`: the agent no longer holds what it read (a compaction or a
        rewind), so drop the session's read-state, pending change notices and what it
        saw of the editor's diagnostics, of `paths` or of everything (and then its
        permissions too)."""
        paths = None
        if params.paths is not None:
            paths = [self.workspace.known(p, params.session) for p in params.paths]
            if isinstance(self.workspace, Narrowed):
                paths = self.workspace.forgettable(paths, params.session)
        dropped = self.read_states.forget(params.session, paths)
        self.shown_lines.forget(params.session, paths)
        self.notices.forget(params.session, paths)
        self.diagnostics.forget(params.session, paths)
        if paths is None:
            self.workspace.forget_grants(params.session)
            self.sessions.leave(params.session)
            self.journal.forget(params.session)
        return ForgetResult(session=params.session, forgotten=dropped)

    def stats_for(self, params: StatsParams) -> StatsResult:
        """`readkeeper/stats`: the session's and all counters, and the state of what serves."""
        from .search.rg import sandbox_state as rg_sandbox_state

        snapshot = self.stats.snapshot(params.session)
        result = StatsResult(
            total=snapshot["total"],
            files_in_read_state=self.read_states.count(params.session),
            watcher=self.watcher_status(),
            token_table=self.tokens.state,
            ahead=self.ahead.status(),
            sandbox=rg_sandbox_state(),
        )
        if "session" in snapshot:
            result["session"] = snapshot["session"]
        result["caches"], result["file_bytes"] = count_cache.hit_counts(), held_bytes.status()
        if self.tokens.counter_name:
            result["token_counter"] = self.tokens.counter_name
        result["settings_warnings"] = list(self.settings_warnings)
        later, builds = self.read_states.later.status(), self.file_times.builds.status()
        result["workers"] = {"later": later, "glob_builds": builds}  # and watcher, ahead
        if params.history:  # every session's calls: the picture shows the agents side by side
            result["history"] = self.stats.journal.snapshot()
        return cast(StatsResult, names_cut(result))  # roots a client named, paths in history

    # --- edits and writes (edit/: imported on first use, not needed for `initialize`) ---

    def edit(self, params: EditParams) -> EditResult:
        """`readkeeper/edit` of a text file (edit/edits.py)."""
        from .edit import edits

        result = self.change(params.session, edits.edit, params)
        self.stats.add(params.session, edits=1, disjoint_merges=int(result.merged))
        return result

    def edit_batch(self, params: EditBatchParams) -> EditResult:
        """`readkeeper/edit` of several places of a file at once, all or none (edit/batch.py)."""
        from .edit import batch

        result = self.change(params.session, batch.edit_batch, params)
        self.stats.add(params.session, edits=1, disjoint_merges=int(result.merged))
        return result

    def edit_cell(self, params: NotebookEditParams) -> NotebookEditResult:
        """`readkeeper/edit` of a notebook cell (`cell_id`/`new_source`/`edit_mode`)."""
        from .edit import notebook

        result = self.change(params.session, notebook.edit_cell, params)
        self.stats.add(params.session, edits=1, disjoint_merges=int(result.merged))
        return result

    def write(self, params: WriteParams) -> WriteResult:
        """`readkeeper/write`: create a file, or replace all of one (edit/edits.py)."""
        from .edit import edits

        result = self.change(params.session, edits.write, params)
        self.stats.add(params.session, writes=1)
        return result

    def change(
        self, session: str, apply: Callable[[Readkeeper, P], R], params: P, keeps: bool = True
    ) -> R:
        """Run an edit, write or undo, counting its refusals (and stale ones apart) and
        journaling the call; what it writes becomes the session's last change
        (edit/journal.py)."""
        keeps = keeps and not getattr(params, "dry_run", False)
        kind = "write" if apply.__name__ == "write" else "edit"
        path = self._journal_path(getattr(params, "file_path", ""))
        try:
            with (
                self.journal.recording(session, apply.__name__, keeps),
                self.stats.journal.call(session, kind, path) as tally,
                held_bytes.call(path),
            ):
                result = apply(self, params)
                tally.path = getattr(result, "file_path", "") or tally.path
                return result
        except ReadkeeperError as exc:
            self.stats.error(session, exc.kind)
            if exc.kind == "stale":
                self.stats.add(session, stale_edits_caught=1)
            raise

    # --- attachments --------------------------------------------------------------------

    @property
    def attachment_pool(self) -> ThreadPoolExecutor:
        """Threads for gathering attachment sources concurrently (made on first use): 32,
        as git status mostly waits (8 starved 3-4 of 10 concurrent calls, round 30)."""
        with self._settings_lock:
            if self._attachment_pool is None:
                self._attachment_pool = _CallPool(32, thread_name_prefix="attach")
            return self._attachment_pool

    def attachments(self, params: AttachmentsParams) -> AttachmentsResult:
        """`readkeeper/attachments`: the turn's context, fitted into the token budget
        (attachments/collect.py)."""
        from .attachments.collect import TYPES, gather

        unknown = sorted(set(params.types or ()) - set(TYPES))
        if unknown:
            raise ReadkeeperError(
                "bad_params",
                f"Unknown attachment types {', '.join(map(shown_name, unknown))}; the types "
                f"are {list(TYPES)}.",
                field="types",
            )
        check_budget_tokens(params.budget_tokens)
        with self.stats.journal.call(params.session, "attachments"):
            fitted = gather(self, params)
            self.stats.attachments(params.session, fitted)
        sent = fitted.as_json(self.tokens.count)  # the drops listed within what is left
        return AttachmentsResult(
            attachments=sent["attachments"],
            dropped=sent["dropped"],
            used_tokens=sent["used_tokens"],
            budget_tokens=sent["budget_tokens"],
        )

    def did_change_diagnostics(self, params: DiagnosticsParams) -> int:
        """`readkeeper/didChangeDiagnostics`: take what the editor now reports; returns how
        many files it touched."""
        try:
            return self.diagnostics.update(params.items, within=self.workspace.holds)
        except ValueError as exc:
            raise ReadkeeperError(
                "bad_params", f"Invalid diagnostics: {library_words(exc)}.", field="items"
            ) from None
        finally:
            for kind, count in self.diagnostics.take_dropped().items():
                self.stats.client_state_dropped(kind, count)

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
        self.ahead.close()
        self.read_states.later.close()
        self.file_times.builds.close()
        self.watching.close()
        user_cache.flush()  # the outlines and counts made, on disk for the next server

    # --- the watcher and change notices (watch/control.py) -----------------------------

    @property
    def watcher(self) -> Watcher | None:
        """The running watcher, if any."""
        return self.watching.watcher

    def start_watching(
        self, warn: Callable[[str], None] | None = None, progress: Progress | None = None
    ) -> bool:
        """Start watching the roots, in the background; then their listings (search/ahead.py)."""
        return self.watching.start(warn, when_set_up(progress, self.ahead.poke))

    def roots_changed(self) -> None:
        """The workspace roots changed (workspace/didChangeWorkspaceFolders)."""
        self.watching.roots_changed()

    @property
    def notices(self) -> ChangeNotices:
        """Every session's change notices (watch/changes.py), made on first use: by the
        watcher's start, after `initialize` is answered."""
        with self._settings_lock:
            if self._notices is None:
                from .watch.changes import ChangeNotices

                self._notices = ChangeNotices(
                    *(self.read_states, self.snapshots, self._get_settings, self.stats),
                    lambda path: self._workspace.locate(path, grants=False),
                    lambda text: self.tokens.count_now(text),
                    self.outputs.holds,
                )
            return self._notices

    def changes_for(self, params: ChangesParams, within: Where = None) -> ChangesResult:
        """`readkeeper/changes` (of paths `within` takes), noted by watch/blind.py."""
        taken = self.notices.take(params.session, within)
        return noted(taken, self.watcher_status(), self.settings.watch_poll_interval_ms)

    def watcher_status(self) -> dict[str, Any]:
        """The watcher's state and counters, as `readkeeper/stats` shows them."""
        return self.watching.status()

    def _journal_path(self, path: str | None) -> str:
        """`path` as the journal names it: absolute (from the first root), as asked."""
        try:
            return self.workspace.absolute(path) if path else ""
        except (ReadkeeperError, ValueError, OSError):
            return path or ""

    def _get_settings(self) -> Settings:
        return self.settings


__all__ = ["Buffer", "Buffers", "Readkeeper"]
