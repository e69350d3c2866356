"""The contract's types for reading text: `readkeeper/read` params and its text,
stub, diff, estimate and outline results; `forget` and `stats` params."""

from __future__ import annotations

from typing import Literal

import attrs

from .contract import Contract

# The most symbols an outline lists (its walk stops there): an outline's `symbols` at
# this count is a lower bound, said "at least" (render.py).
MAX_OUTLINE_SYMBOLS = 20_000

# --- params -----------------------------------------------------------------------------


@attrs.frozen(repr=False, eq=False)
class ReadParams(Contract):
    """`readkeeper/read`: a file, and which part of it to read how."""

    file_path: str
    offset: int | None = None  # 1-based first line (0 is refused: bad_params)
    limit: int | None = None  # lines; the default limit when absent
    pages: str | None = None  # PDF pages: "3", "1-5", "2,4-6"
    session: str = ""
    force: bool = False
    render: bool = False  # PDF pages as PNG images (a `parts` result) instead of text
    include_images: bool = False  # notebook image outputs inline instead of placeholders
    symbol: str | None = None  # "Class.method", "function": that symbol's lines (outline.py)
    estimate: bool = False  # only what the read would cost (tokens, lines), no content
    # How text lines are shown: "cat-n" (the number, a tab, the line) or "anchors" (the
    # number and a short hash of the line, for anchor_edits); default: the setting.
    line_format: Literal["cat-n", "anchors"] | None = None


@attrs.frozen(repr=False, eq=False)
class ForgetParams(Contract):
    """`readkeeper/forget`: the session, and the paths it no longer holds (all if none)."""

    session: str = ""
    paths: list[str] | None = None


@attrs.frozen(repr=False, eq=False)
class StatsParams(Contract):
    """`readkeeper/stats`: the session whose counters to report beside the total, and
    whether to send the journal too (each call: what, when, at what cost)."""

    session: str | None = None
    # With the journal (`history`): the newest calls of every session, each {at_ms,
    # session, kind, path, tokens, saved, ms, error?}, with its cap and how many older
    # calls were dropped.
    history: bool = False


# --- results ----------------------------------------------------------------------------


@attrs.frozen(repr=False, eq=False)
class TextFile(Contract):
    """Numbered lines of a text file, and what was left out of them."""

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
    # How many of the lines shown hold a line break other than the LF that ends them (a
    # lone CR, VT, FF, U+001C-001E, NEL, U+2028, U+2029): each is shown escaped as its
    # Python spelling (`\r`, `\x0c`, `\u2028`), so the line stays one numbered line for
    # any consumer; an edit's `old_string` may give it as shown or as the character.
    escaped_lines: int | None = None
    # Never sent since issue 34 (every count is exact, before the token table loads
    # too); kept for clients of older servers, where True meant `tokens` was an upper
    # bound (the text's UTF-8 bytes), a read made before the table had loaded.
    tokens_upper_bound: bool | None = None


@attrs.frozen(repr=False, eq=False)
class TextResult(Contract):
    """`readkeeper/read` of a text file."""

    file: TextFile
    type: Literal["text"] = "text"


@attrs.frozen(repr=False, eq=False)
class UnchangedFile(Contract):
    """The stub a re-read of an unchanged range gets instead of the content: what the
    agent holds (the range, the file's lines, how and when it got them), and what
    changed around it."""

    file_path: str
    note: str | None = None  # what the agent holds, in words (read/unchanged.py)
    start_line: int | None = None  # the held lines as numbered now (None: not lines)
    num_lines: int | None = None
    total_lines: int | None = None  # the file's lines now
    # How the agent got it: "read", "outline", "symbol", or its own "write" or "edit".
    obtained_by: Literal["read", "outline", "symbol", "write", "edit"] = "read"
    obtained_at: str | None = None  # when the session wrote or edited it, ISO 8601 UTC
    # The file changed outside the held lines: "before", "after", "before and after",
    # or "outside" (somewhere else, not known where).
    changed_outside: str | None = None
    previous_start_line: int | None = None  # where the held lines were, when they moved
    symbol: str | None = None  # for a symbol read: the symbol
    next_offset: int | None = None  # where the lines after the held ones start
    buffer_version: int | None = None  # the editor buffer's, when that is what it holds
    # For an image, PDF or notebook, what the agent holds in the file's terms (None for
    # lines): the answer the stub stands for ("pdf" page text, "parts" rendered pages,
    # "image", "notebook") and what that answer cost.
    held_type: Literal["image", "pdf", "parts", "notebook"] | None = None
    tokens: int | None = None
    shown_pages: str | None = None  # the PDF's pages held, e.g. "1-5" or "2,4-6"
    page_count: int | None = None
    next_pages: str | None = None  # the pages after them, for a view cut short
    first_cell: int | None = None  # the notebook's cells held, numbered from 1 (offset)
    num_cells: int | None = None
    total_cells: int | None = None
    include_images: bool | None = None  # whether the cells' output images were sent
    display_width: int | None = None  # the image as sent
    display_height: int | None = None
    original_width: int | None = None  # the image file's own size
    original_height: int | None = None


@attrs.frozen(repr=False, eq=False)
class UnchangedResult(Contract):
    """`readkeeper/read` of a range the session holds and that has not changed."""

    file: UnchangedFile
    type: Literal["file_unchanged"] = "file_unchanged"


@attrs.frozen(repr=False, eq=False)
class EstimateFile(Contract):
    """`estimate: true`: what a read with the same parameters would send, no content."""

    file_path: str
    tokens: int
    num_lines: int
    total_lines: int | None
    partial: bool
    note: str


@attrs.frozen(repr=False, eq=False)
class EstimateResult(Contract):
    """`readkeeper/read` with `estimate`: what a read would cost, without the content."""

    file: EstimateFile
    type: Literal["estimate"] = "estimate"


@attrs.frozen(repr=False, eq=False)
class ChangedFile(Contract):
    """A re-read of a file the agent holds whole that changed since: the diff only."""

    file_path: str
    diff: str  # unified, from the content the agent holds to the current one
    total_lines: int
    tokens: int
    note: str


@attrs.frozen(repr=False, eq=False)
class ChangedResult(Contract):
    """`readkeeper/read` of a file the session holds whole that changed: the diff."""

    file: ChangedFile
    type: Literal["file_changed"] = "file_changed"


# --- outlines of source files (readers/outline_read.py) ------------------------------------


@attrs.frozen(repr=False, eq=False)
class OutlineFile(Contract):
    """A whole read of a source file too big to send whole: its symbols and first lines."""

    file_path: str
    language: str
    # One line per symbol, "12-40 class Reader", nested symbols indented two spaces;
    # "(+N inside)" marks a symbol whose nested ones were left out to keep it small.
    outline: str
    symbols: int  # symbols in the file, at most MAX_OUTLINE_SYMBOLS (the walk stops there)
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


@attrs.frozen(repr=False, eq=False)
class OutlineResult(Contract):
    """`readkeeper/read` of a source file too big to send whole: its outline."""

    file: OutlineFile
    type: Literal["outline"] = "outline"
