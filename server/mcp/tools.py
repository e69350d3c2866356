"""The MCP tools: their input schemas, generated from the protocol's params classes, and
the annotations MCP defines (read-only, destructive, idempotent, title).

One generator turns an attrs params class into a JSON schema, so a field added to
`protocol/` appears in the tool with no second copy to keep in step. The words for
the agent (each tool's description, each field's) are the one thing written here.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union

import attrs

from .. import protocol
from ..calls import METHODS

# What each field means, for the agent; a field missing here is still in the schema.
FIELD_DESCRIPTIONS: dict[str, str] = {
    "file_path": "Absolute path, or relative to the first workspace root.",
    "offset": "read: first line to read, 1-based (notebooks: first cell); grep, glob, "
    "list: how many results to skip (a cut result's next names it).",
    "limit": "Number of lines to read (default 2000; notebooks: cells).",
    "pages": 'PDF pages to read, e.g. "3", "1-5" or "2,4-6".',
    "session": "Read-state session (a conversation); default: one per MCP connection.",
    "force": "Return the content even when it is unchanged since your last read.",
    "render": "Render the PDF pages as PNG images instead of extracting their text.",
    "include_images": "Include a notebook's image outputs inline.",
    "symbol": 'Read only this symbol\'s lines, e.g. "Reader.read" or "main" (source files).',
    "estimate": "Only say what the read would cost (lines, tokens); no content, nothing recorded.",
    "diagnostics_offset": "Skip this many diagnostics (a cut attachment's note gives the "
    "number), to get the ones it left out.",
    "selection": "The selected range (0-based lines and characters).",
    "text": "The document's text, when it is not saved.",
    "start": 'Where the range starts (anchor_edits: the anchor of the first line, e.g. "12ab").',
    "end": "Where the range ends (anchor_edits: the anchor of the last line replaced or "
    "deleted; default: start).",
    "op": "What an anchor edit does: replace or delete the lines start..end, or insert lines "
    "after or before start.",
    "lines": "The new lines (without line breaks or prefixes): for replace and the inserts.",
    "line": "Line, 0-based.",
    "character": "Character in the line, 0-based.",
    "old_string": "The exact text to replace, without the line-number prefix a read shows; "
    "it must occur once unless replace_all.",
    "new_string": "The text to put in its place.",
    "replace_all": "Replace every occurrence of old_string.",
    "cell_id": "Notebook cell to edit (instead of old_string); for insert, the cell before.",
    "new_source": "The new source of the notebook cell.",
    "edit_mode": "Notebook cell edit: replace, insert or delete.",
    "cell_type": "Type of an inserted notebook cell (default code).",
    "content": "The whole new content of the file.",
    "budget_tokens": "Total token budget (attachments: of the context gathered; read_many: "
    "shared by the files, each that no longer fits left unread and said).",
    "file_paths": "The files to read, each as read reads it (absolute, or relative to the "
    "first workspace root).",
    "line_format": 'How lines are shown: "cat-n" (number, tab, line) or "anchors" (number '
    'and a two-letter hash of the line, e.g. "12ab", then a tab): the anchors anchor_edits '
    "name.",
    "edits": "Several old_string/new_string pairs applied in one call, all or none (instead "
    "of old_string/new_string); each must match once, and no two may overlap.",
    "anchor_edits": "Edits by anchor (instead of old_string/new_string), all or none: "
    '[{"op": "replace|insert_after|insert_before|delete", "start": "12ab", "end": "14cd", '
    '"lines": ["new line", ...]}] with anchors from a read with line_format="anchors".',
    "files": "Several files edited in one call, all or none (instead of file_path): "
    '[{"file_path": "a.py", "old_string": "...", "new_string": "..."}, {"file_path": '
    '"b.py", "edits": [...]}]; each file at most once.',
    "types": "Attachment types to gather (default: all).",
    "mentions": "Paths the user attached or mentioned.",
    "active_editor": "The file and selection the user is looking at.",
    "paths": "Only forget these files (default: everything the session read).",
    "pattern": "grep: a regular expression; glob: a glob pattern.",
    "path": "Folder (or file) to look in; default: the workspace root.",
    "glob": 'Only search files whose path matches this glob, e.g. "*.py".',
    "context": "Lines shown before and after each match.",
    "case_sensitive": "Match case exactly (default true).",
    "multiline": "Let the pattern match across lines.",
    "output": "matches (lines), files (names only) or counts (per file).",
    "max_matches": "Most matches (or files) to show.",
    "depth": "How many folder levels to list (default 1).",
    "exclude": 'Paths to leave out, in .gitignore syntax (e.g. "node_modules", "*.log"); '
    "applied before the page is cut.",
    "history": "Also return the recorded calls (what was read, when, at what cost and "
    "what was saved), oldest first, as the session picture shows them.",
}


# The least value of counting fields: a read's lines (or cells) count from 1 (0 is
# refused), a search's offset skips results, from 0.
_MINIMUM = {"offset": 0, "limit": 1, "max_matches": 1, "depth": 1, "budget_tokens": 1}
_READ_MINIMUM = {"offset": 1, "limit": 1}


@attrs.frozen
class ToolSpec:
    """How one dispatch method is offered as an MCP tool."""

    name: str
    title: str
    description: str
    read_only: bool
    destructive: bool
    idempotent: bool
    extra_params: tuple[type[Any], ...] = ()  # other params classes the tool accepts
    method: str = ""  # the dispatch method it calls, when not its own name
    # When the classes differ in what they need: each way to call, its required fields.
    ways: tuple[tuple[str, ...], ...] = ()

    @property
    def calls(self) -> str:
        """The `calls.METHODS` method this tool is served by."""
        return self.method or self.name


# Claude Code keeps a tool result of over 50,000 characters out of the conversation
# (saved to a file, which the agent then reads with its own Read tool, past readkeeper's
# stubs and caps) unless the tool declares more in tools/list, as this `_meta` key, at
# most 500,000. readkeeper holds each answer to max_tokens or a budget by its count, and
# to that many characters (read/room.py ANSWER_MAX_CHARS, not imported: this module is on
# the start's path, and a test keeps the two equal), so the tools that send files' text
# declare it: their answers are never set aside. Other hosts ignore the key.
RESULT_SIZE_META = {"anthropic/maxResultSizeChars": 500_000}
# The tools whose answers can pass 50,000 characters within their token caps, of both
# tool sets (the drop-in's by its own names).
LARGE_RESULTS = frozenset(
    {
        "read",
        "read_many",
        "grep",
        "glob",
        "list",
        "attachments",
        "stats",
        "read_file",
        "read_text_file",
        "read_multiple_files",
        "list_directory",
        "list_directory_with_sizes",
        "directory_tree",
        "search_files",
    }
)


def result_meta(tool: str) -> dict[str, Any] | None:
    """The `_meta` of `tool` in tools/list: `RESULT_SIZE_META` for `LARGE_RESULTS`."""
    return dict(RESULT_SIZE_META) if tool in LARGE_RESULTS else None


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "read",
        "Read a file",
        "Read a file of the workspace: text (numbered lines, budgeted in tokens), images "
        "(fitted to a token budget), PDFs (text, or pages rendered as images) and "
        "notebooks. Re-reading an unchanged range returns a short file_unchanged stub: "
        "you still hold that content. A file open in the editor with unsaved changes is "
        "read from the editor's buffer, flagged unsaved.",
        read_only=True,
        destructive=False,
        idempotent=False,
    ),
    ToolSpec(
        "edit",
        "Edit a file",
        "Replace old_string with new_string in a file you have read, or several pairs at "
        "once (edits), or lines named by the anchors of an anchored read (anchor_edits), "
        "or several files at once (files: each entry one file's edits; undo takes them all "
        "back), each call all or none (or edit a notebook cell with cell_id/new_source/"
        "edit_mode). old_string is the file's text exactly, copied from a read result "
        "WITHOUT the line-number prefix (the number and tab before each line). Refused "
        "with kind stale when the file changed since your read where you edit (a change "
        "elsewhere is merged; a stale anchor comes back with the current lines and their "
        "anchors), and with dirty_buffer when the editor holds unsaved changes.",
        read_only=False,
        destructive=True,
        idempotent=False,
        extra_params=(
            protocol.NotebookEditParams,
            protocol.EditBatchParams,
            protocol.EditFilesParams,
        ),
        ways=(
            ("file_path", "old_string", "new_string"),
            ("file_path", "edits"),  # several pairs, all or none
            ("file_path", "anchor_edits"),  # lines named by their anchors
            ("file_path", "new_source"),  # a notebook cell replaced or inserted
            ("file_path", "cell_id"),  # a notebook cell deleted
            ("files",),  # several files, all or none
        ),
    ),
    ToolSpec(
        "write",
        "Write a file",
        "Create a file, or replace the whole content of one you have read; keeps its "
        "encoding, line endings and mode, and writes atomically.",
        read_only=False,
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        "undo",
        "Undo your last change",
        "Take back this session's last edit or write (every file it changed), once. "
        "Refused with kind stale, writing nothing, when any of those files changed since "
        "your change; after an undo your next read of the file returns it whole.",
        read_only=False,
        destructive=True,
        idempotent=False,
    ),
    ToolSpec(
        "attachments",
        "Context for this turn",
        "The context worth attaching to your next turn, fitted to a token budget: new "
        "diagnostics, memory files (AGENTS.md, CLAUDE.md), files changed since you read "
        "them, the editor's selection and git status.",
        read_only=True,
        destructive=False,
        idempotent=False,
    ),
    ToolSpec(
        "changes",
        "Changes since read",
        "Files you read that changed since, each with a bounded diff (each change is "
        "reported once).",
        read_only=True,
        destructive=False,
        idempotent=False,
    ),
    ToolSpec(
        "forget",
        "Forget read-state",
        "Forget what this session read (after a context compaction or rewind), so the "
        "next read returns content instead of a file_unchanged stub.",
        read_only=False,
        destructive=False,
        idempotent=True,
    ),
    ToolSpec(
        "stats",
        "readkeeper statistics",
        "Counters (reads, stubs, tokens saved, stale edits caught, watcher events) and "
        "whether this server is attached to the editor's readkeeper or standalone.",
        read_only=True,
        destructive=False,
        idempotent=True,
    ),
)

TOOLS += (
    ToolSpec(
        "read_many",
        "Read several files",
        "Read several files in one call (up to 100), each as read reads it (its own stub, "
        "caps and errors, in the order given), the whole within budget_tokens when given: a "
        "file that no longer fits is left unread and says so, with the read that gets it. "
        "One file's error never fails the others.",
        read_only=True,
        destructive=False,
        idempotent=False,
        method="readMany",
    ),
    ToolSpec(
        "grep",
        "Search file contents",
        "Search the workspace (or path: a folder or file) for a regular expression "
        "(Rust regex syntax), respecting .gitignore and skipping binary files. output: "
        "matches (numbered lines, with context lines around them), files (names only) or "
        "counts (per file). Lines shown count as read: you may edit them without "
        "reading the file first. A cut result names the call for the rest (next).",
        read_only=True,
        destructive=False,
        idempotent=False,
    ),
    ToolSpec(
        "glob",
        "Find files by name",
        'Files whose path matches a glob (e.g. "**/*.py", "src/**/*.{ts,tsx}"), most '
        "recently modified first, respecting .gitignore.",
        read_only=True,
        destructive=False,
        idempotent=True,
    ),
    ToolSpec(
        "list",
        "List a folder",
        "A folder's entries with their kind (file, dir, symlink, other) and size, to a "
        "depth (default 1), respecting .gitignore.",
        read_only=True,
        destructive=False,
        idempotent=True,
    ),
)

TOOL_NAMES = frozenset(spec.name for spec in TOOLS)
# The method each tool calls, and the tool each method is offered as (for errors' hints).
TOOL_METHODS = {spec.name: spec.calls for spec in TOOLS}
METHOD_TOOLS = {spec.calls: spec.name for spec in TOOLS}


def input_schema(spec: ToolSpec) -> dict[str, Any]:
    """The tool's JSON schema: its method's params class merged with `extra_params`;
    a field is required when every class requires it."""
    classes = (METHODS[spec.calls].params, *spec.extra_params)
    properties: dict[str, Any] = {}
    required: list[str] | None = None
    for cls in classes:
        schema = object_schema(cls)
        for name, prop in schema["properties"].items():
            properties.setdefault(name, prop)
        needed = schema.get("required", [])
        required = needed if required is None else [n for n in required if n in needed]
    result: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        result["required"] = required
    if spec.ways:
        result["anyOf"] = [{"required": list(way)} for way in spec.ways]
    return result


def object_schema(cls: type[Any]) -> dict[str, Any]:
    """The JSON schema of an attrs class: its fields, the ones without a default
    required."""
    hints = typing.get_type_hints(cls)  # in the namespace of the class's own module
    properties: dict[str, Any] = {}
    required: list[str] = []
    for field in attrs.fields(cls):
        prop = type_schema(hints[field.name])
        description = FIELD_DESCRIPTIONS.get(field.name)
        if description:
            prop = {**prop, "description": description}
        least = (_READ_MINIMUM if cls is protocol.ReadParams else _MINIMUM).get(field.name)
        if least is not None and prop.get("type") == "integer":
            prop = {**prop, "minimum": least}
        if field.default is attrs.NOTHING:
            required.append(field.name)
        elif field.default not in (None, "") and isinstance(field.default, bool | int | str):
            prop = {**prop, "default": field.default}
        properties[field.name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def type_schema(hint: Any) -> dict[str, Any]:
    """The JSON schema of one field's type (what `protocol.structure` accepts)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        kinds = [a for a in args if a is not type(None)]
        if len(kinds) == 1:
            return type_schema(kinds[0])  # optional: absent and null mean the default
        return {"anyOf": [type_schema(a) for a in kinds]}
    if origin is Literal:
        return {"type": "string", "enum": list(args)}
    if origin is list:
        return {"type": "array", "items": type_schema(args[0]) if args else {}}
    if origin is dict or hint is dict:
        return {"type": "object"}
    if attrs.has(hint):
        return object_schema(hint)
    simple = {str: "string", int: "integer", bool: "boolean", float: "number"}
    if hint in simple:
        return {"type": simple[hint]}
    if hint is Any:
        return {}
    raise TypeError(f"no JSON schema for {hint!r}: add it to mcp/tools.py")


__all__ = [
    "METHOD_TOOLS",
    "TOOLS",
    "TOOL_METHODS",
    "TOOL_NAMES",
    "ToolSpec",
    "input_schema",
    "object_schema",
]
