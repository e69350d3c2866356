"""The protocol's request and result types, and their conversion at the edge.

Params arrive as loose JSON: numbers as strings ("42"), unknown extra fields from newer
clients. They are structured here, once, into typed params, and anything malformed
becomes `bad_params` naming the field. Results are attrs classes unstructured to JSON
with absent (None) fields left out.
"""

from __future__ import annotations

import re
from typing import Any, Literal, TypeVar

import attrs
import cattrs
from cattrs.errors import AttributeValidationNote, ClassValidationError, IterableValidationError

from .errors import ReadkeeperError

T = TypeVar("T")

# --- params -----------------------------------------------------------------------------


@attrs.frozen
class ReadParams:
    file_path: str
    offset: int | None = None  # 1-based first line; 0 is taken as 1
    limit: int | None = None  # lines; the default limit when absent
    pages: str | None = None  # PDF pages: "3", "1-5", "2,4-6"
    session: str = ""
    force: bool = False
    render: bool = False  # PDF pages as PNG images (a `parts` result) instead of text
    include_images: bool = False  # notebook image outputs inline instead of placeholders
    symbol: str | None = None  # "Class.method", "function": that symbol's lines (outline.py)
    estimate: bool = False  # only what the read would cost (tokens, lines), no content


@attrs.frozen
class ForgetParams:
    session: str = ""
    paths: list[str] | None = None


@attrs.frozen
class StatsParams:
    session: str | None = None


# --- results ----------------------------------------------------------------------------


@attrs.frozen
class TextFile:
    file_path: str
    content: str
    start_line: int
    num_lines: int
    total_lines: int | None  # None when a ranged read of a huge file stopped before EOF
    tokens: int
    encoding: str
    line_ending: str
    partial: bool = False
    next_offset: int | None = None
    note: str | None = None
    unsaved: bool | None = None
    buffer_version: int | None = None
    truncated_lines: int | None = None
    # True when `tokens` is an upper bound (the text's UTF-8 bytes), not the count: a
    # read sent before the token table finished loading (tokens.py).
    tokens_upper_bound: bool | None = None


@attrs.frozen
class TextResult:
    file: TextFile
    type: Literal["text"] = "text"


@attrs.frozen
class UnchangedFile:
    file_path: str
    note: str | None = None  # for a re-read of a view cut at a cap: the lines it holds


@attrs.frozen
class UnchangedResult:
    file: UnchangedFile
    type: Literal["file_unchanged"] = "file_unchanged"


@attrs.frozen
class EstimateFile:
    """`estimate: true`: what a read with the same parameters would send, no content."""

    file_path: str
    tokens: int
    num_lines: int
    total_lines: int | None
    partial: bool
    note: str


@attrs.frozen
class EstimateResult:
    file: EstimateFile
    type: Literal["estimate"] = "estimate"


@attrs.frozen
class ChangedFile:
    """A re-read of a file the agent holds whole that changed since: the diff only."""

    file_path: str
    diff: str  # unified, from the content the agent holds to the current one
    total_lines: int
    tokens: int
    note: str


@attrs.frozen
class ChangedResult:
    file: ChangedFile
    type: Literal["file_changed"] = "file_changed"


# --- outlines of source files (readers/outline_read.py) ------------------------------------


@attrs.frozen
class OutlineFile:
    """A whole read of a source file too big to send whole: its symbols and first lines."""

    file_path: str
    language: str
    # One line per symbol, "12-40 class Reader", nested symbols indented two spaces;
    # "(+N inside)" marks a symbol whose nested ones were left out to keep it small.
    outline: str
    symbols: int  # symbols in the file
    shown_symbols: int
    content: str  # the first lines, numbered as in a `text` result
    num_lines: int
    total_lines: int
    tokens: int  # of this result
    file_tokens: int  # about what the file's lines cost read whole
    encoding: str
    line_ending: str
    partial: bool = True
    note: str | None = None  # the symbol or ranged read that gets any part
    unsaved: bool | None = None
    buffer_version: int | None = None


@attrs.frozen
class OutlineResult:
    file: OutlineFile
    type: Literal["outline"] = "outline"


# --- images, PDFs and notebooks (readers/image.py, pdf.py, notebook.py) -------------------


@attrs.frozen
class ImageDimensions:
    """Sizes as displayed (after EXIF rotation): multiply display coordinates by
    original_width / display_width to map them back onto the original."""

    original_width: int
    original_height: int
    display_width: int
    display_height: int


@attrs.frozen
class ImageFile:
    file_path: str
    base64: str
    media_type: str  # of the payload, which may be re-encoded: see `note`
    original_size: int  # bytes of the file
    dimensions: ImageDimensions
    tokens: int  # display_width * display_height / 750, rounded up
    format: str  # the file's own format, e.g. "PNG"
    frames: int | None = None  # for animated images: frames in the file (the first is shown)
    note: str | None = None


@attrs.frozen
class ImageResult:
    file: ImageFile
    type: Literal["image"] = "image"


@attrs.frozen
class PdfFile:
    file_path: str
    content: str  # one block per page, each headed by "--- page N ---"
    page_count: int
    shown_pages: str  # e.g. "1-5"
    tokens: int
    original_size: int
    partial: bool = False
    next_pages: str | None = None  # where to continue when `partial`
    note: str | None = None
    base64: str | None = None  # the PDF itself, when the `pdf_inline` setting is on
    media_type: str | None = None


@attrs.frozen
class PdfResult:
    file: PdfFile
    type: Literal["pdf"] = "pdf"


@attrs.frozen
class PartsFile:
    """PDF pages rendered to PNG files; read each one (an `image` result) to see it."""

    file_path: str
    count: int
    output_dir: str
    pages: list[str]  # PNG paths, one per page, in page order
    page_numbers: list[int]
    page_count: int
    tokens: int  # of this result; reading the images costs `image_tokens` more
    image_tokens: int
    original_size: int
    partial: bool = False
    next_pages: str | None = None
    note: str | None = None


@attrs.frozen
class PartsResult:
    file: PartsFile
    type: Literal["parts"] = "parts"


@attrs.frozen
class NotebookImage:
    media_type: str
    width: int | None
    height: int | None
    bytes: int  # of the image itself (decoded)
    base64: str | None = None  # with `include_images`: fitted to the image budget
    display_width: int | None = None
    display_height: int | None = None
    tokens: int | None = None


@attrs.frozen
class NotebookOutput:
    output_type: str  # stream, execute_result, display_data, error
    name: str | None = None  # stream: stdout or stderr
    text: str | None = None  # stream text, or the text/plain (or markdown, latex) data
    execution_count: int | None = None
    ename: str | None = None
    evalue: str | None = None
    traceback: str | None = None  # trimmed, without terminal colours
    images: list[NotebookImage] | None = None
    note: str | None = None  # what was cut or left out (HTML, JavaScript, widgets)


@attrs.frozen
class NotebookCell:
    cell_id: str  # the cell's id, or "cell-N" (N = index) in notebooks without ids
    index: int  # 0-based position in the notebook
    cell_type: str  # code, markdown or raw
    source: str
    execution_count: int | None = None
    outputs: list[NotebookOutput] | None = None  # code cells only
    note: str | None = None


@attrs.frozen
class NotebookFile:
    file_path: str
    cells: list[NotebookCell]
    total_cells: int
    nbformat: str  # as read, e.g. "4.5" or "3.0" (v3 is upgraded to v4 for the view)
    tokens: int
    language: str | None = None
    partial: bool = False
    next_offset: int | None = None  # cells are numbered from 1 for offset/limit
    note: str | None = None
    unsaved: bool | None = None
    buffer_version: int | None = None


@attrs.frozen
class NotebookResult:
    file: NotebookFile
    type: Literal["notebook"] = "notebook"


ReadResult = (
    TextResult
    | UnchangedResult
    | ChangedResult
    | EstimateResult
    | OutlineResult
    | ImageResult
    | PdfResult
    | PartsResult
    | NotebookResult
)


# --- attachments (attachments/) -------------------------------------------------------------


@attrs.frozen
class Position:
    line: int  # 0-based, as in LSP
    character: int = 0


@attrs.frozen
class Range:
    start: Position
    end: Position


@attrs.frozen
class ActiveEditor:
    """What the user is looking at, as the client sends it with an attachments request."""

    file_path: str
    selection: Range | None = None
    text: str | None = None  # the document text, when the client sends it


@attrs.frozen
class AttachmentsParams:
    session: str = ""
    budget_tokens: int | None = None
    types: list[str] | None = None
    mentions: list[str] | None = None  # paths the user attached or @-mentioned
    active_editor: ActiveEditor | None = None
    # Skip this many diagnostics (new ones first, then the rest), to get what a cut
    # left out: the cut's note gives the number.
    diagnostics_offset: int = 0


@attrs.frozen
class DiagnosticsParams:
    """`readkeeper/didChangeDiagnostics`: `{items: [{uri, diagnostics, version?}]}`."""

    items: list[dict[str, Any]]


# --- edits and writes (edits.py) --------------------------------------------------------


@attrs.frozen
class EditParams:
    file_path: str
    old_string: str
    new_string: str
    replace_all: bool = False
    session: str = ""


@attrs.frozen
class WriteParams:
    file_path: str
    content: str
    session: str = ""


@attrs.frozen
class ReadStateInfo:
    """The session's read-state after an edit or write: what the agent now knows."""

    digest: str
    total_lines: int
    source: Literal["disk", "buffer"]
    size: int | None = None  # bytes on disk (None when only the editor buffer changed)
    mtime_ns: int | None = None
    # What a whole re-read will answer: "stub" (unchanged) or a diff once it changes,
    # when the agent holds all of this content (it wrote it, or edited what it held
    # whole); else "full", the file in full.
    next_read: Literal["full", "stub"] = "full"


@attrs.frozen
class ExternalChange:
    """What another program changed between the agent's read and its edit."""

    diff: str  # unified diff, as read -> as found
    truncated: bool
    lines: list[int]  # first and last changed line in the file as found ([] if none)


@attrs.frozen
class EditResult:
    file_path: str
    replacements: int
    snippet: str  # numbered lines (as reads number them) around the first change
    start_line: int  # first line of the snippet
    lines: list[int]  # the first changed line of each replacement, in the new content
    applied_to: Literal["disk", "buffer"]
    encoding: str
    line_ending: str
    read_state: ReadStateInfo
    merged: bool = False  # the file had changed, disjointly, and the edit was merged
    external_change: ExternalChange | None = None
    note: str | None = None


@attrs.frozen
class WriteResult:
    file_path: str
    created: bool
    changed: bool  # False when the content was already exactly this
    applied_to: Literal["disk", "buffer"]
    total_lines: int
    encoding: str
    line_ending: str
    read_state: ReadStateInfo
    size: int | None = None
    note: str | None = None


# --- notebook cell edits (edit/notebook.py) -----------------------------------------------


@attrs.frozen
class NotebookEditParams:
    """`readkeeper/edit` on a notebook cell: sent with `cell_id`/`new_source`/`edit_mode`
    instead of `old_string`/`new_string`."""

    file_path: str
    cell_id: str | None = None  # the target; for "insert", the new cell goes after it
    new_source: str | None = None  # required for "replace" and "insert"
    edit_mode: Literal["replace", "insert", "delete"] = "replace"
    cell_type: Literal["code", "markdown", "raw"] | None = None  # insert: default code
    session: str = ""


@attrs.frozen
class NotebookEditResult:
    file_path: str
    edit_mode: Literal["replace", "insert", "delete"]
    cell_id: str  # the cell edited, inserted or deleted
    index: int  # its position (for delete: where it was)
    total_cells: int
    read_state: ReadStateInfo
    cell_type: str | None = None
    merged: bool = False  # the notebook had changed elsewhere, and the edit was merged
    external_change: ExternalChange | None = None
    note: str | None = None


# --- change notices (changes.py) ----------------------------------------------------------


@attrs.frozen
class ChangesParams:
    session: str = ""


ChangeKind = Literal["modified", "created", "deleted", "moved"]


@attrs.frozen
class FileChange:
    """A file this session read that changed since: what changed, never who changed it."""

    file_path: str
    kind: ChangeKind  # "created": it had been reported deleted or moved, and is back
    diff: str  # unified diff from what the session saw to what is there now ("" if none)
    truncated: bool  # the diff was cut, or could not be made: re-read to see the file
    new_path: str | None = None  # where a "moved" file went
    total_lines: int | None = None  # lines in the file now
    note: str | None = None


@attrs.frozen
class ChangesResult:
    changes: list[FileChange]
    # Changes left for the next call, when this one reached its token cap.
    remaining: int | None = None


@attrs.frozen
class DidChangeReadFilesParams:
    """`readkeeper/didChangeReadFiles`, server to client: new changes to files a
    session read, each sent once (the same changes stay available to
    `readkeeper/changes`, which is what the agent reads)."""

    session: str
    changes: list[FileChange]


# --- conversion -------------------------------------------------------------------------

_INT_RE = re.compile(r"\s*[+-]?\d+\s*")


def _structure_int(value: Any, _: type) -> int:
    if isinstance(value, bool):
        raise ValueError(f"expected a whole number, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT_RE.fullmatch(value):
        return int(value)
    raise ValueError(f"expected a whole number, got {value!r}")


def _structure_bool(value: Any, _: type) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"expected true or false, got {value!r}")


def _structure_str(value: Any, _: type) -> str:
    if isinstance(value, str):
        return value
    raise ValueError(f"expected a string, got {value!r}")


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(omit_if_default=False)
    converter.register_structure_hook(int, _structure_int)
    converter.register_structure_hook(bool, _structure_bool)
    converter.register_structure_hook(str, _structure_str)
    return converter


converter = _make_converter()


def _first_problem(exc: BaseException, prefix: str = "") -> tuple[str, str]:
    """The dotted field path and the message of the first leaf error in `exc`."""
    if isinstance(exc, ClassValidationError | IterableValidationError):
        for sub in exc.exceptions:
            name = ""
            for note in getattr(sub, "__notes__", []):
                if isinstance(note, AttributeValidationNote):
                    name = note.name
                elif hasattr(note, "index"):
                    name = f"[{note.index}]"
            joined = f"{prefix}.{name}" if prefix and name else prefix or name
            return _first_problem(sub, joined)
    if isinstance(exc, KeyError):
        return prefix, "is required"
    return prefix, str(exc)


def structure(params: Any, cls: type[T]) -> T:
    """Typed params from a request's JSON, or a `bad_params` error naming the field."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ReadkeeperError(
            "bad_params",
            f"params must be an object, got {type(params).__name__}.",
            field="params",
        )
    try:
        return converter.structure(params, cls)
    except (ClassValidationError, ValueError, TypeError, KeyError) as exc:
        field, problem = _first_problem(exc)
        message = f"Invalid params: {field or 'params'} {problem}.".replace(" .", ".")
        hint = _FIX.get(field or "")
        raise ReadkeeperError(
            "bad_params", f"{message} {hint}" if hint else message, field=field
        ) from None


# How to write each field right, said after what was wrong with it.
_FIX = {
    "file_path": "Send the file's path, absolute or relative to the workspace root, as a "
    'string: file_path="src/app.py".',
    "offset": "Send the first line to read as a whole number (the first line is 1), e.g. "
    "offset=42.",
    "limit": "Send the number of lines to read as a whole number, e.g. limit=200, or leave "
    "it out for the default.",
    "pages": 'Send PDF pages as a string: pages="3", pages="1-5" or pages="2,4-6".',
    "symbol": 'Send a symbol name as a string: symbol="Class.method" or symbol="function".',
    "force": "Send true or false.",
    "render": "Send true or false.",
    "include_images": "Send true or false.",
    "replace_all": "Send true or false.",
    "session": 'Send the session name as a string, e.g. session="chat-1".',
    "old_string": "Send the text to replace, exactly as the read showed it (without the line "
    "numbers), as a string.",
    "new_string": "Send the replacement text as a string (an empty string deletes).",
    "content": "Send the whole new content of the file as a string.",
    "paths": 'Send a list of paths, e.g. paths=["src/app.py"], or leave it out for all.',
    "budget_tokens": "Send the token budget as a whole number, e.g. budget_tokens=20000.",
    "types": 'Send a list of attachment types, e.g. types=["diagnostics", "memory"].',
    "mentions": 'Send a list of paths, e.g. mentions=["src/app.py"].',
}


# Fields whose null means something ("unknown"), so they stay even when None.
_MEANINGFUL_NULLS = frozenset({"total_lines"})


def unstructure(result: Any) -> Any:
    """JSON-ready data with absent (None-valued) optional fields dropped."""
    return _drop_none(converter.unstructure(result))


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _drop_none(v) for k, v in value.items() if v is not None or k in _MEANINGFUL_NULLS
        }
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value
