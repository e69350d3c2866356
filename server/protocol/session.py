"""The contract's types for what a session asks about its context: `readkeeper/attachments`
(with the editor's state sent along), diagnostics, and the results of `forget`, `stats`
and `attachments`, which are sent as built."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

import attrs

from .contract import Contract

# --- attachments (attachments/) -------------------------------------------------------------


@attrs.frozen(repr=False, eq=False)
class Position(Contract):
    """A zero-based line and character in an editor's document."""

    line: int  # 0-based, as in LSP
    character: int = 0


@attrs.frozen(repr=False, eq=False)
class Range(Contract):
    """A span of an editor's document, from `start` to `end`."""

    start: Position
    end: Position


@attrs.frozen(repr=False, eq=False)
class ActiveEditor(Contract):
    """What the user is looking at, as the client sends it with an attachments request."""

    file_path: str
    selection: Range | None = None
    text: str | None = None  # the document text, when the client sends it


@attrs.frozen(repr=False, eq=False)
class AttachmentsParams(Contract):
    """`readkeeper/attachments`: the session, its budget, and the editor's state."""

    session: str = ""
    budget_tokens: int | None = None
    types: list[str] | None = None
    mentions: list[str] | None = None  # paths the user attached or @-mentioned
    active_editor: ActiveEditor | None = None
    # Skip this many diagnostics (new ones first, then the rest), to get what a cut
    # left out: the cut's note gives the number.
    diagnostics_offset: int = 0


@attrs.frozen(repr=False, eq=False)
class DiagnosticsParams(Contract):
    """`readkeeper/didChangeDiagnostics`: `{items: [{uri, diagnostics, version?}]}`."""

    items: list[dict[str, Any]]


# --- results sent as built (JSON objects already, not unstructured) ---------------------


class ForgetResult(TypedDict):
    """`readkeeper/forget`: the session, and how many files it no longer holds."""

    session: str
    forgotten: int


class StatsResult(TypedDict):
    """`readkeeper/stats`: the counters (each as `state/stats.py` names them), the
    total's and, unless no session was named, the session's."""

    total: dict[str, Any]
    session: NotRequired[dict[str, Any]]
    files_in_read_state: int
    watcher: dict[str, Any]  # its state and counters
    # "unloaded", "loading", "loaded" or "failed"; counts are exact in every state.
    token_table: str
    # What counts, once the table is loaded: "rs-bpe <version>" or "tiktoken <version>".
    token_counter: NotRequired[str]
    # The reads made between calls (read/ahead.py): {made, skipped, stopped_by_call,
    # triggers, on, busy}; counts only, no path (an attached agent sees it too).
    ahead: NotRequired[dict[str, Any]]
    # {landlock_abi, programs_confined, note}: whether ripgrep and libgit2, which open
    # files by name, run confined by Landlock (without it a folder swapped mid-walk can
    # lead them out of the workspace).
    sandbox: NotRequired[dict[str, Any]]
    # With `history`: {events: [...] oldest first, cap, dropped, cut?, note?}
    # (state/journal.py): an agent's within max_tokens as sent, the newest kept, `cut`
    # older ones left out (the user's own `readkeeper stats` sees them all).
    history: NotRequired[dict[str, Any]]
    # {kind: {lookups, hits}}: this process's caches (outline, counts, and token-table
    # where tiktoken counts).
    caches: NotRequired[dict[str, Any]]
    # {later, glob_builds}: each background worker's {state: running | idle | failed,
    # failures, failure?, restarts?} and counts (state/health.py); the watcher's worker
    # and the reads ahead say theirs in `watcher` and `ahead`.
    workers: NotRequired[dict[str, Any]]
    # {total_bytes, held_bytes, calls_holding, waiting, peak_bytes, peak_calls, waited,
    # refused}: the file bytes calls in flight hold (files/held_bytes.py), for the process.
    file_bytes: NotRequired[dict[str, Any]]
    # What the settings now in force said when they were taken (an invalid value, an
    # unknown key...): the same words `serve`, `mcp` and the CLI print at their start.
    settings_warnings: NotRequired[list[str]]


class AttachmentsResult(TypedDict):
    """`readkeeper/attachments`: the turn's context fitted into the budget."""

    attachments: list[dict[str, Any]]  # {type, priority, tokens, content, truncated, source}
    dropped: list[dict[str, Any]]  # {type, source (null for a count), reason, tokens?, count?}
    used_tokens: int  # what the kept ones take as sent: contents, headers and fences
    budget_tokens: int  # bounds them and the dropped list (listed within what is left)
