"""The open editor's selection, attached: the lines the user selected, numbered as a
read numbers them, under a header naming the file (quoted when odd)."""

from __future__ import annotations

from readkeeper import words
from readkeeper.files.fileio import open_regular, read_at_most
from readkeeper.protocol import AttachmentsParams
from readkeeper.quoting import name
from readkeeper.read import numbering
from readkeeper.read.readers.text import decode_text

from . import cut_notes
from .model import SELECTION, Attachment
from .services import AttachmentServices


def selection(core: AttachmentServices, params: AttachmentsParams) -> Attachment:
    """The user's active editor as an attachment: its selected lines, numbered, or its
    name when nothing is selected."""
    editor = params.active_editor
    assert editor is not None
    where = core.workspace.resolve(editor.file_path, params.session)
    path = where.path
    buffer = core.buffers.get(path)
    if editor.text is not None:
        text = editor.text
    elif buffer is not None:
        text = buffer.text
    else:
        with open_regular(where) as opened:
            data = read_at_most(opened.fd, core.settings.max_size_bytes)
        text, _ = decode_text(data, path)
    lines = text.split("\n")
    total = len(lines) - (1 if lines[-1] == "" else 0)  # the file's lines, as a read counts
    if editor.selection is not None:
        # An editor may send the range as the user dragged it (end before start).
        start, end = sorted(
            (editor.selection.start, editor.selection.end), key=lambda p: (p.line, p.character)
        )
        first, last = max(0, start.line), max(0, end.line)  # a client's -5 is the first
        if end.character == 0 and last > first:
            last -= 1  # a selection ending at column 0 does not include that line
        last = min(last, max(total - 1, 0))  # the lines the file has, no more
        if first >= max(total, 1):
            first, shown = 0, []
            header = (
                f"The user's active editor: {name(path)}, with a selection past its last "
                f"line (the file has {words.count(total, 'line')}): nothing to show."
            )
        else:
            shown = lines[first : last + 1]
            span = f"line {first + 1}" if first == last else f"lines {first + 1}-{last + 1}"
            header = f"The user's active editor: {name(path)}, {span} selected:"
    else:
        first, shown = 0, []
        header = f"The user's active editor: {name(path)} (nothing selected)."
    shown = [line.removesuffix("\r") for line in shown]  # a CRLF's CR, as a read drops it
    numbered = numbering.numbered(shown, first + 1, core.settings.number_width)
    return Attachment(
        type="selection",
        content="\n".join([header, *numbered]),
        priority=SELECTION,
        source=path,
        max_tokens=core.settings.selection_max_tokens,
        rest_hint=f"Read the file with {cut_notes.read_call(file_path=path)}.",
        cut_note=cut_notes.selection(path, first + 1, first + len(shown), total) if shown else None,
    )
