"""Editor buffers: a document open in the editor with unsaved changes is never written
underneath. The change is refused with `dirty_buffer`, or applied to the buffer when
the client allows (`edit_open_buffers: "apply"`) and can (`BufferEditor`); and the LSP
positions of such a change.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .. import quoting
from ..errors import ReadkeeperError
from ..read.diffs import common_ends
from ..settings import Settings
from ..state.buffers import Buffer
from .refusals import dirty, not_reloaded
from .services import BufferEditor, EditServices, TextChange, Unapplied

_LSP_BREAK = re.compile(r"\r\n|\r|\n")
_LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
# What str.splitlines also ends a line at, and LSP (an editor) does not.
_OTHER_BREAKS = re.compile("[\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def dirty_buffer(
    core: EditServices, path: str, disk_text: str, settings: Settings
) -> Buffer | None:
    """The editor's buffer of `path` when it has unsaved changes we may edit; raises
    `dirty_buffer` when it has them and we may not."""
    buffer = core.buffers.get(path)
    if buffer is None or buffer.text == disk_text:
        return None  # a clean document: the file is written, and the editor reloads it
    if not buffer.edited:
        raise not_reloaded(path, buffer.version)
    if settings.edit_open_buffers != "apply" or not isinstance(core.buffers, BufferEditor):
        raise dirty(path, buffer.version)
    return buffer


def apply_to_buffer(
    core: EditServices, path: str, buffer: Buffer, changes: Sequence[TextChange]
) -> None:
    """Have the editor apply `changes` to its buffer of `path`; `dirty_buffer` when it
    does not."""
    editor = core.buffers
    assert isinstance(editor, BufferEditor)  # checked by dirty_buffer
    timeout = core.settings.edit_apply_timeout_ms / 1000
    unapplied = editor.apply_edits(path, buffer.version, buffer.text, changes, timeout)
    if unapplied is not None:
        raise ReadkeeperError(
            "dirty_buffer",
            f"{path} has unsaved changes in the editor, and {_why_not(unapplied)}. Read it "
            "again (you will see the editor's text), then redo the edit if it is not there.",
            file_path=path,
            buffer_version=buffer.version,
            reason=unapplied.reason,
        )


# The editor's own words shown in a refusal: as much as this, on one line.
MAX_SAID_CHARS = 300


def _why_not(unapplied: Unapplied) -> str:
    """Why the edit is not in the buffer, in readkeeper's words; what the editor said is
    its own text, so it is shown only as a JSON string on the line (whitespace and line
    breaks one space, every character a reader would not see escaped): it can neither
    break readkeeper's line nor pose as its words."""
    said = " ".join(unapplied.said.split())
    if len(said) > MAX_SAID_CHARS:
        said = said[:MAX_SAID_CHARS] + " …"
    words = f" (its words: {quoting.json_text(said)})" if said else ""
    reason = unapplied.reason
    if reason == "refused":
        return f"the editor refused the edit{words}"
    if reason == "failed":
        return f"the editor failed the request to apply the edit{words}"
    if reason == "no_answer":
        waited = unapplied.waited_s
        bound = f"{waited:g} s" if waited >= 1 else f"{waited * 1000:.0f} ms"
        return (
            f"the editor did not answer the request to apply the edit within {bound} "
            "(edit_apply_timeout_ms), so it may apply it later or never; if it stays silent, "
            "ask the user to save the file in the editor (an edit then goes to the disk)"
        )
    if reason == "not_applied":
        return (
            "the editor said it applied the edit, but its buffer does not hold it (left as it "
            "was, or changed to other text): read it again to see what it holds"
        )
    if reason == "closed":
        return "the editor closed the document before the edit reached it"
    return "the editor does not accept edits of its buffers (workspace/applyEdit)"


def whole_change(before: str, after: str) -> TextChange:
    """`before` -> `after` as one change, trimmed to the part that differs."""
    head, tail = common_ends(before, after)
    return TextChange(head, len(before) - tail, after[head : len(after) - tail])


def lsp_lines(text: str) -> list[str]:
    """`text`'s lines with their ends, as LSP (and an editor) ends them: at LF, CRLF and
    CR only. `str.splitlines` also ends one at a form feed, NEL, U+2028...: every
    position after one would name another line than the editor's (round 44)."""
    if _OTHER_BREAKS.search(text) is None:
        return text.splitlines(True)
    return _LSP_LINE.findall(text)


def encoding_name(encoding: object) -> str:
    """A negotiated position encoding (lsprotocol's kind, a string, or None) by its name:
    "utf-16" (LSP's default), "utf-8" or "utf-32"."""
    return str(getattr(encoding, "value", encoding) or "utf-16")


def lsp_position(text: str, offset: int, encoding: str = "utf-16") -> tuple[int, int]:
    """The LSP (line, character) of `offset` in `text`: lines end at LF, CRLF or CR, and
    characters are counted in the negotiated position encoding's code units."""
    line_start = 0
    line = 0
    for match in _LSP_BREAK.finditer(text, 0, offset):
        line += 1
        line_start = match.end()
    column = text[line_start:offset]
    if encoding == "utf-8":
        return line, len(column.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return line, len(column)
    return line, len(column) + sum(1 for ch in column if ord(ch) > 0xFFFF)
