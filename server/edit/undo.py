"""`readkeeper/undo`: take back the session's last change, every file of it, or none.

The rule that keeps it from clobbering anyone: a file goes back to its bytes before the
change only while it still holds, byte for byte, what the change wrote. Anything else
(another program's write, a later edit of another session, the file deleted or swapped,
unsaved changes in the editor) is refused with `stale` or `dirty_buffer`, showing what
changed, and nothing is written. Every file of the change is held and checked first,
then restored in one pass under its lock; if a restore fails half way, the files
already restored get the change's bytes back, so the undo too lands everywhere or
nowhere.

A file the change created is not deleted (readkeeper deletes no files): the undo is
refused, saying which, and the user or a shell removes it.

After an undo, what the session holds of each file is its content before the change,
recorded partial as after an edit: the agent may edit again without reading, and its
next read returns the file whole. The anchors it was shown of those files are dropped
(they named the lines as the change left them).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from contextlib import ExitStack
from typing import Any, Protocol

from .. import quoting
from ..errors import ReadkeeperError
from ..files import atomic
from ..files.encodings import NotText, decode, detect
from ..files.fileio import digest, read_at_most
from ..files.locks import lock_for
from ..files.vcs import refuse_metadata
from ..protocol import unstructure
from ..protocol.files import UndoParams
from ..read.diffs import bounded_diff
from ..state.shown_lines import ShownLines
from .commit import entry, hold_for_change, replace
from .journal import Change, FileChange, Journal
from .refusals import dirty
from .remember import Written, remember_change
from .services import EditServices


class UndoServices(EditServices, Protocol):
    """The core as an undo sees it: an edit's services, the journal and shown lines."""

    @property
    def journal(self) -> Journal:
        """Each session's last change."""
        ...

    @property
    def shown_lines(self) -> ShownLines:
        """Which lines each session was shown (dropped for the files undone)."""
        ...


def undo(core: UndoServices, params: UndoParams) -> dict[str, Any]:
    """Restore every file of the session's last change (see the module docstring)."""
    change, why = core.journal.last(params.session)
    if change is None:
        reason = f" ({why})" if why else ""
        raise ReadkeeperError(
            "no_change",
            f"This session has no change readkeeper can undo{reason}: undo takes back the "
            "session's last edit or write, once, made on disk by readkeeper (a change put in "
            "the editor's buffer is undone in the editor). Edit the file back instead: read "
            "it, then readkeeper/edit.",
            session=params.session,
        )
    created = [f.path for f in change.files if f.before is None]
    if created:
        raise ReadkeeperError(
            "unsupported",
            f"The last change created {', '.join(map(quoting.name, created))}, and readkeeper "
            "deletes no files, so it cannot undo it. Ask the user to delete it.",
            files=created,
        )
    files = squashed(change.files)
    restored = put_back(core, files)
    core.journal.done(params.session, change)
    results = []
    for written, new_stat in zip(files, restored, strict=True):
        assert written.before is not None
        reported = core.diagnostics.reported(written.path)
        text = _text(written.before)
        # A change that was merged over one the session never saw leaves a read-state
        # other than the file: the undo keeps that change unseen (unseen.py).
        prior = core.read_states.get(params.session, written.path)
        over = prior is not None and prior.scope == "file" and prior.digest != digest(written.after)
        state = remember_change(
            core,
            params.session,
            written.path,
            text,
            Written(written.before, new_stat),
            "edit",
            reported,
            before=_text(written.after) if over else None,
            merged_over=over,
            known=core.snapshots.get(written.path, prior.digest) if over and prior else None,
        )
        core.shown_lines.forget(params.session, [written.path])
        results.append({"file_path": written.path, "read_state": unstructure(state)})
    return _result(change, results)


def squashed(written: Iterable[FileChange]) -> list[FileChange]:
    """One entry per file: a file written twice keeps its first before, last after."""
    last: dict[str, FileChange] = {}
    for one in written:
        first = last.get(one.path)
        last[one.path] = one if first is None else FileChange(one.path, first.before, one.after)
    return list(last.values())


def put_back(core: EditServices, files: list[FileChange]) -> list[os.stat_result]:
    """Each file back to its bytes before, all or none, each only while it holds what
    was written (else `stale` or `dirty_buffer`, and nothing is written)."""
    with ExitStack() as stack:
        for path in sorted({f.path for f in files}):
            stack.enter_context(lock_for(path))
        held = [stack.enter_context(_held(core, f)) for f in files]
        return _restore(held, files)


def _held(core: EditServices, written: FileChange) -> Any:
    """A context holding the file, once it is checked to hold what the change wrote."""
    path = written.path
    where = core.workspace.locate(path, grants=False)
    if where is None:
        raise _stale(path, "it is no longer inside the workspace roots", None)
    if entry(where) is None:
        raise _stale(path, "it was deleted", None)
    # Its folder may have become a repository's since the change (files/vcs.py).
    refuse_metadata(path, where.path, where.anchor.path, "write")
    return _checked(core, where, written)


class _checked:
    """`hold_for_change` of the file, refused unless its bytes are what was written."""

    def __init__(self, core: EditServices, where: Any, written: FileChange) -> None:
        self._core, self._where, self._written = core, where, written
        self._context = hold_for_change(where)

    def __enter__(self) -> atomic.Held:
        held = self._context.__enter__()
        try:
            written = self._written
            limit = max(len(written.after), self._core.settings.max_size_bytes) + 1
            now = read_at_most(held.opened.fd, limit)  # enough to differ, and to show how
            if now != written.after:
                raise _stale(written.path, "it changed since", (written.after, now))
            buffer = self._core.buffers.get(written.path)
            if buffer is not None and buffer.text != _text(now):
                raise dirty(written.path, buffer.version)
        except BaseException as exc:
            self._context.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return held

    def __exit__(self, *exc: Any) -> bool | None:
        return self._context.__exit__(*exc)


def _restore(held: list[atomic.Held], files: list[FileChange]) -> list[os.stat_result]:
    """Each file back to its bytes before the change; all or none."""
    done: list[tuple[atomic.Held, FileChange]] = []
    stats = []
    for one, written in zip(held, files, strict=True):
        assert written.before is not None
        try:
            new_stat = replace(one, written.before, written.after, None)
        except ReadkeeperError:
            _put_back(done)
            raise
        if new_stat is None:  # written under us between the check and the swap
            _put_back(done)
            raise _stale(written.path, "another program wrote it as the undo ran", None)
        done.append((one, written))
        stats.append(new_stat)
    return stats


def _put_back(done: list[tuple[atomic.Held, FileChange]]) -> None:
    """The files an undo restored before one failed get the change's bytes again."""
    for one, written in reversed(done):
        assert written.before is not None
        replace(one, written.after, written.before, None)


def _text(data: bytes) -> str:
    try:
        return decode(data, detect(data, complete=True))
    except (NotText, UnicodeDecodeError):
        return data.decode("utf-8", "surrogateescape")


def _stale(path: str, why: str, versions: tuple[bytes, bytes] | None) -> ReadkeeperError:
    data: dict[str, Any] = {"file_path": path}
    diff = ""
    if versions is not None:
        shown, truncated = bounded_diff(_text(versions[0]), _text(versions[1]), path)
        data.update(diff=shown, truncated=truncated)
        diff = f" What changed since your change:\n{shown}\n"
    return ReadkeeperError(
        "stale",
        f"Cannot undo your last change: {quoting.name(path)} is no longer what it left "
        f"({why}), and undoing it would overwrite that. Nothing was written.{diff} Read the "
        "file again, then edit back what you want changed.",
        **data,
    )


def _result(change: Change, results: list[dict[str, Any]]) -> dict[str, Any]:
    names = ", ".join(quoting.name(r["file_path"]) for r in results)
    return {
        "undone": change.verb,
        "files": results,
        "file_path": results[0]["file_path"],
        "note": f"Your last {change.verb} was undone: {names} "
        + ("is" if len(results) == 1 else "are")
        + " back as before it. Your next read returns the content whole.",
    }
