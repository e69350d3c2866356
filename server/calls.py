"""One dispatch for every front end: a method name and raw JSON params in, JSON out.

The LSP handlers, the MCP tools and the editor's attach socket all go through here, so
the way a request's params are typed, which core call serves it, and what its result
looks like are written once. A front end adds only what is its own (the LSP one asks
the editor to allow a path outside the workspace, and lends the core its event loop for
`workspace/applyEdit`). Everything here blocks: front ends run it off their event loop,
except a call `quick` says is quick. Bad input raises `ReadkeeperError` (kind
`bad_params` naming the field).
"""

from __future__ import annotations

import json
import logging
import os
import stat
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from .errors import ReadkeeperError, too_deep
from .files import cache_writes
from .files.beneath import Moved
from .files.fileio import moved
from .files.guesses import one_call
from .files.reach import remembering
from .protocol import (
    AttachmentsParams,
    ChangesParams,
    EditBatchParams,
    EditFilesParams,
    EditParams,
    ForgetParams,
    NotebookEditParams,
    ReadParams,
    StatsParams,
    WriteParams,
    structure,
    unstructure,
)
from .protocol.batch import ReadManyParams
from .protocol.files import MkdirParams, MoveParams, PatchParams, StatParams, UndoParams
from .protocol.search import GlobParams, GrepParams, ListParams
from .state import dropped as session_dropped
from .state import journal, sessions

if TYPE_CHECKING:  # the front ends import this module before they make a core
    from .core import Readkeeper

log = logging.getLogger("readkeeper")

# A notebook cell edit names a cell instead of old_string/new_string.
NOTEBOOK_EDIT_FIELDS = frozenset({"cell_id", "new_source", "edit_mode"})
# A batch names its edits in a list instead (edit/batch.py).
BATCH_EDIT_FIELDS = frozenset({"edits", "anchor_edits"})


@attrs.frozen
class Method:
    """A request every front end serves: its params type and the core call behind it."""

    name: str
    params: type[Any]
    run: Callable[[Readkeeper, Any], Any]  # typed params -> JSON-ready result


def _read(core: Readkeeper, params: ReadParams) -> Any:
    return unstructure(core.read(params))


def _edit(
    core: Readkeeper,
    params: EditParams | NotebookEditParams | EditBatchParams | EditFilesParams,
) -> Any:
    if isinstance(params, EditFilesParams):
        return _edit_files(core, params)
    if isinstance(params, NotebookEditParams):
        return unstructure(core.edit_cell(params))
    since = time.time_ns()  # the diagnostics that count are those reported after this
    if isinstance(params, EditBatchParams):
        return with_diagnostics(core, params.session, unstructure(core.edit_batch(params)), since)
    return with_diagnostics(core, params.session, unstructure(core.edit(params)), since)


def _edit_files(core: Readkeeper, params: EditFilesParams) -> Any:
    from .edit.multi import edit_files  # the change modules load on first use

    since = time.time_ns()
    result = core.change(params.session, edit_files, params)
    core.stats.add(params.session, edits=1)
    for one in result["files"]:
        with_diagnostics(core, params.session, one, since)
    return result


def _undo(core: Readkeeper, params: UndoParams) -> Any:
    from .edit.undo import undo

    return core.change(params.session, undo, params, keeps=False)


def _write(core: Readkeeper, params: WriteParams) -> Any:
    since = time.time_ns()
    return with_diagnostics(core, params.session, unstructure(core.write(params)), since)


def _stat(core: Readkeeper, params: StatParams) -> Any:
    from .search.info import file_info

    return file_info(core, params)


def _move(core: Readkeeper, params: MoveParams) -> Any:
    from .edit.moves import move

    return core.change(params.session, move, params)


def _mkdir(core: Readkeeper, params: MkdirParams) -> Any:
    from .edit.moves import mkdir

    return core.change(params.session, mkdir, params)


def _patch(core: Readkeeper, params: PatchParams) -> Any:
    from .edit.patch import patch

    since = time.time_ns()
    result = core.change(params.session, patch, params)
    if params.dry_run:
        return result
    core.stats.add(params.session, edits=1)
    return with_diagnostics(core, params.session, result, since)


def _attachments(core: Readkeeper, params: AttachmentsParams) -> Any:
    return core.attachments(params)


def _changes(core: Readkeeper, params: ChangesParams) -> Any:
    return unstructure(core.changes_for(params))


def _forget(core: Readkeeper, params: ForgetParams) -> Any:
    return core.forget(params)


def _stats(core: Readkeeper, params: StatsParams) -> Any:
    return core.stats_for(params)


METHODS: dict[str, Method] = {
    method.name: method
    for method in (
        Method("read", ReadParams, _read),
        Method("edit", EditParams, _edit),
        Method("write", WriteParams, _write),
        Method("attachments", AttachmentsParams, _attachments),
        Method("changes", ChangesParams, _changes),
        Method("forget", ForgetParams, _forget),
        Method("stats", StatsParams, _stats),
        Method("readMany", ReadManyParams, lambda core, params: core.read_many(params)),
        Method("grep", GrepParams, lambda core, params: core.grep(params)),
        Method("glob", GlobParams, lambda core, params: core.glob(params)),
        Method("list", ListParams, lambda core, params: core.list_folder(params)),
        Method("stat", StatParams, _stat),
        Method("move", MoveParams, _move),
        Method("mkdir", MkdirParams, _mkdir),
        Method("patch", PatchParams, _patch),
        Method("undo", UndoParams, _undo),
    )
}


def method_named(name: str) -> Method:
    """The method `name` (with or without the `readkeeper/` prefix), or `unsupported`."""
    method = METHODS.get(name.removeprefix("readkeeper/"))
    if method is None:
        raise ReadkeeperError(
            "unsupported",
            f"There is no method {name!r}; the methods are {sorted(METHODS)}.",
            method=name,
        )
    return method


def params_for(name: str, raw: Any) -> Any:
    """`raw` typed as `name`'s params (an edit naming a notebook cell gets the cell
    edit's params), or a `bad_params` error naming the field."""
    try:
        return _params_for(name, raw)
    except RecursionError:  # structure() bounds the nesting first: never, but never a fault
        raise too_deep(name) from None


def _params_for(name: str, raw: Any) -> Any:
    method = method_named(name)
    if method.name == "edit" and isinstance(raw, dict) and "files" in raw:
        mixed = sorted(raw.keys() - {"files", "session"})
        if mixed:
            raise ReadkeeperError(
                "bad_params",
                f"This edit gives files and {', '.join(mixed)}: with files, each file's "
                "edits go inside its entry (a list of {file_path, old_string, new_string} "
                "objects) and only session beside it.",
                field="files",
            )
        return structure(raw, EditFilesParams)
    if method.name == "edit" and isinstance(raw, dict):
        batch = sorted(BATCH_EDIT_FIELDS.intersection(raw))
        if batch:
            mixed = sorted(
                ({"old_string", "new_string", "replace_all"} | NOTEBOOK_EDIT_FIELDS) & raw.keys()
            )
            if mixed or len(batch) > 1:
                raise ReadkeeperError(
                    "bad_params",
                    f"This edit gives {', '.join(batch + mixed)}: one call takes one form. Send "
                    "old_string/new_string, or edits (a list of {old_string, new_string}), or "
                    "anchor_edits (a list of {op, start, end?, lines}), each in its own call.",
                    field=batch[0],
                )
            return structure(raw, EditBatchParams)
        if not NOTEBOOK_EDIT_FIELDS.isdisjoint(raw):
            return structure(raw, NotebookEditParams)
    return structure(raw, method.params)


# Reads of files whose name says image, PDF or notebook are never quick: their readers
# take up to hundreds of milliseconds (a PDF's, up to its deadline).
_HEAVY_SUFFIXES = frozenset(
    (".pdf", ".ipynb", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff")
)

# A range of a file too large to hold is found by counting the lines before it (about
# 0.6 ms per MB here, once; then from the nearest boundary its line index knows):
# quick up to this size, kept off the loop beyond it.
QUICK_SCAN_BYTES = 2 << 20


def quick(core: Readkeeper, name: str, raw: Any) -> bool:
    """Whether a call is a read of a text file by its lines once the token table is
    loaded (well under a millisecond once its lines are counted, a few for a never-read
    file): a front end serves it on its event loop, where the hop to a worker thread and
    back would cost more than the read. So is a range of a file too large to hold, up to
    `QUICK_SCAN_BYTES`. Anything else, or anything that may be slow (the first count
    loads the table, a symbol read parses the file, a name that says image, PDF or
    notebook, a range of a larger file, read by scanning it from the top), keeps the
    loop free."""
    if name.removeprefix("readkeeper/") != "read" or not isinstance(raw, dict):
        return False
    if raw.get("symbol") is not None or raw.get("pages") is not None or raw.get("render"):
        return False
    path = raw.get("file_path")
    if not isinstance(path, str) or os.path.splitext(path)[1].lower() in _HEAVY_SUFFIXES:
        return False
    if not core.tokens.loaded:
        return False
    # Looked at beneath its root, never by name: a path outside is refused at once (and
    # looked up nowhere); what a link on its way leads to is not known here.
    try:
        where = core.workspace.direct(path)
    except ValueError:  # a name no file can have (a lone surrogate): the full read refuses it
        return False
    if where is None:
        return True
    try:
        found = where.lstat()
    except (OSError, ValueError):
        return False
    if found is None or not stat.S_ISREG(found.st_mode):
        return found is None or not stat.S_ISLNK(found.st_mode)
    size = found.st_size
    if size <= core.settings.max_size_bytes:
        return True
    ranged = raw.get("offset") is not None or raw.get("limit") is not None
    return ranged and size <= QUICK_SCAN_BYTES


def run(core: Readkeeper, name: str, params: Any, principal: str = sessions.EDITOR) -> Any:
    """Serve typed params (from `params_for`) for `principal` (the door it came through,
    state/sessions.py): the JSON-ready result. Blocks. The call's session is
    `principal`'s of that name, never another's; it becomes the most recent one the core
    keeps (`Readkeeper.enter`)."""
    method = method_named(name)
    params = scoped_params(principal, params)
    session = getattr(params, "session", None)
    # What an earlier call left to record (a search's proof) is recorded first.
    core.read_states.later.settle(session)
    if session is not None:  # `stats` may name none
        core.enter(session)
    # Dropped at the session bound: every answer about its read-state says so.
    was_dropped = session is not None and core.sessions.evicted(session)
    # Nothing is read ahead, nor written to the user cache, while a call is in flight;
    # its did-you-mean guesses, every miss of it together, share one budget; its walks
    # share the folders they passed (files/reach.py: a batch of paths beneath one deep
    # chain walks it once, round 45).
    with core.ahead.call(), cache_writes.holding(), one_call(), remembering():
        try:
            result = method.run(core, params)
        except ReadkeeperError as exc:
            if session is not None and sessions.name_of(session) != session:
                exc.message = _renamed(exc.message, session)
                exc.args = (exc.message,)
                exc.data = _renamed(exc.data, session)
            told = exc.kind == "not_read" or (exc.kind == "no_change" and method.name == "undo")
            if not told or session is None or not core.sessions.evicted(session):
                raise
            raise dropped(exc) from None  # the same error, its words made true
        except Moved as exc:  # a tree changed under a call: never a fault of ours
            raise moved(os.fsdecode(exc.filename or "A path")) from None
        except RecursionError:  # the input's nesting, never a fault of ours
            log.warning("%s stopped at Python's recursion limit", name, exc_info=True)
            raise too_deep(name) from None
        if method.name == "read" and isinstance(result, dict):
            core.ahead.read(result.get("file", {}).get("file_path"))
        if was_dropped:
            result = session_dropped.told(method.name, result)
        if method.name == "stats" and principal == sessions.EDITOR and isinstance(result, dict):
            own = core.stats.editor_files()  # another caller's files are not the editor's
            result = {**result, "total": {**result["total"], "tokens_by_file": own}}
        result = shown(principal, session, method.name, result)
        if method.name == "stats" and principal != sessions.VIEWER and isinstance(result, dict):
            # An agent's history within max_tokens as sent; the user's viewer, all of it.
            result = journal.within(result, core.settings.max_tokens, core.tokens.count)
        return result


def call(core: Readkeeper, name: str, raw: Any, principal: str = sessions.EDITOR) -> Any:
    """Serve one request from its raw JSON params for `principal`: the JSON-ready
    result. Blocks."""
    return run(core, name, params_for(name, raw), principal)


def scoped_params(principal: str, params: Any) -> Any:
    """`params` with their session named by its key for `principal` (a name that no
    session may have refused, `bad_params`)."""
    session = getattr(params, "session", None)
    if not isinstance(session, str):
        return params
    key = sessions.scoped(principal, session)
    return params if key == session else attrs.evolve(params, session=key)


def shown(principal: str, session: str | None, method: str, result: Any) -> Any:
    """`result` as `principal` may see it: its session by the name it gave, and the
    history of its own sessions only (the user's own viewer sees every one, each
    labelled with whose it is)."""
    if not isinstance(result, dict):
        return result
    history = result.get("history") if method == "stats" else None
    if isinstance(history, dict) and isinstance(history.get("events"), list):
        events = [e for e in history["events"] if isinstance(e, dict)]
        if principal == sessions.VIEWER:
            events = [{**e, "session": sessions.labelled(str(e.get("session")))} for e in events]
        else:
            events = [
                {**e, "session": sessions.name_of(e["session"])}
                for e in events
                if sessions.principal_of(str(e.get("session"))) == principal
            ]
        result = {**result, "history": {**history, "events": events}}
    if method == "stats" and principal not in (sessions.EDITOR, sessions.VIEWER):
        total = result.get("total")
        if isinstance(total, dict) and "tokens_by_file" in total:  # other principals' files
            result = {**result, "total": {k: v for k, v in total.items() if k != "tokens_by_file"}}
    if session is not None and sessions.name_of(session) != session:
        result = _renamed(result, session)  # after the history's keys were told apart
    return result


def _renamed(value: Any, key: str) -> Any:
    """`value` with the session key `key` (a caller's session kept under a key of its
    own: state/sessions.py) said by the name its caller gave, wherever it is: as a value
    (a session field, a way on's params) or in words (a way on written as a call, where
    JSON spells its NULs `\\u0000`). No caller may name a key (it holds NUL): a way on
    naming one was refused, and it told one caller another's door."""
    name = sessions.name_of(key)
    escaped, plain = json.dumps(key)[1:-1], json.dumps(name)[1:-1]

    def renamed(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(key, name).replace(escaped, plain)
        if isinstance(value, dict):
            return {k: renamed(v) for k, v in value.items()}
        if isinstance(value, list):
            return [renamed(v) for v in value]
        return value

    return renamed(value)


def dropped(exc: ReadkeeperError) -> ReadkeeperError:
    """`exc` told to a session whose read-state was dropped at the session bound: it did
    read, and it is told so."""
    exc.message = f"{session_dropped.words()} {exc.message}"
    exc.args = (exc.message,)
    exc.data["session_dropped"] = True
    return exc


def with_diagnostics(
    core: Readkeeper, session: str, result: dict[str, Any], since: int
) -> dict[str, Any]:
    """Add the editor's diagnostics for the changed file; a problem here never fails
    the edit or write, which has already happened."""
    try:
        found = core.diagnostics_after_edit(session, result["file_path"], since)
    except Exception:
        log.exception("Diagnostics after the change to %s failed", result["file_path"])
        return result
    if found is not None:
        result["diagnostics"] = found
    return result


__all__ = ["METHODS", "Method", "call", "method_named", "params_for", "quick", "run"]
