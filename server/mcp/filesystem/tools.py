"""The drop-in's tools: the reference filesystem server's 14 names and parameters
(`@modelcontextprotocol/server-filesystem`, checked against its own tools/list by
tests/mcp/test_filesystem_schema.py), each described as readkeeper serves it.

A few optional parameters are readkeeper's own (`offset`, `force`, `pages`, `symbol` and
`include_images` on the text reads, `pages` and `force` on read_media_file: the way on
after a cut read, the content again instead of a stub, a PDF's pages, which one too long
to read whole needs, a symbol an outline names, a notebook's images); every parameter the
reference server takes is here with its name and type, and none more is required. Each
next step readkeeper's notes name is a parameter of the tool it names (or of the tool
that answered): tests/mcp/test_dropin_next_step_params.py.
"""

from __future__ import annotations

from typing import Any

from ..tools import ToolSpec


def _obj(properties: dict[str, Any], required: tuple[str, ...] = ("path",)) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


_PATH = {"type": "string", "description": "Absolute path, or relative to the first root."}
_EXCLUDE = {
    "type": "array",
    "items": {"type": "string"},
    "default": [],
    "description": 'Glob patterns of paths to leave out, e.g. "node_modules" or "**/*.log".',
}
_PAGES = {
    "type": "string",
    "description": 'readkeeper: a PDF\'s pages, e.g. "3" or "1-5" (a PDF too long to read '
    "whole names the pages to start with).",
}
_FORCE = {
    "type": "boolean",
    "description": "readkeeper: the content even when you already hold it unchanged.",
}
_TEXT_READ = _obj(
    {
        "path": _PATH,
        "head": {"type": "number", "description": "Only the first N lines (from offset)."},
        "tail": {"type": "number", "description": "Only the last N lines."},
        "offset": {
            "type": "number",
            "description": "readkeeper: first line to read, 1-based (a cut read names it).",
        },
        "force": _FORCE,
        "pages": _PAGES,
        "symbol": {
            "type": "string",
            "description": 'readkeeper: one symbol\'s lines, e.g. "Reader.read" (the outline '
            "of a long file names them).",
        },
        "include_images": {
            "type": "boolean",
            "description": "readkeeper: a notebook's output images, sent as images after the "
            "text (without: size placeholders).",
        },
    }
)
_TEXT_READ_WORDS = (
    "Read a text file (any extension) as its text. Lines come back budgeted: a long file is "
    "cut with a note naming the offset that continues it. Reading again a file you hold "
    "unchanged returns a short note saying so instead of the same text (force=true for the "
    "text). Unsaved changes in the editor are what you read, flagged. head/tail: only the "
    "first/last N lines."
)

SCHEMAS: dict[str, dict[str, Any]] = {
    "read_file": _TEXT_READ,
    "read_text_file": _TEXT_READ,
    "read_media_file": _obj(
        {
            "path": _PATH,
            "pages": {
                "type": "string",
                "description": 'readkeeper: a PDF\'s pages drawn as images, e.g. "3" or "1-5" '
                "(their text: read_text_file with pages).",
            },
            "force": _FORCE,
        }
    ),
    "read_multiple_files": _obj(
        {
            "paths": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "description": "The files to read, each as read_text_file reads it.",
            }
        },
        ("paths",),
    ),
    "write_file": _obj({"path": _PATH, "content": {"type": "string"}}, ("path", "content")),
    "edit_file": _obj(
        {
            "path": _PATH,
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "oldText": {
                            "type": "string",
                            "description": "Text to replace; must occur exactly once.",
                        },
                        "newText": {"type": "string", "description": "Text to put there."},
                    },
                    "required": ["oldText", "newText"],
                },
            },
            "dryRun": {
                "type": "boolean",
                "default": False,
                "description": "Only show the diff; write nothing.",
            },
        },
        ("path", "edits"),
    ),
    "create_directory": _obj({"path": _PATH}),
    "list_directory": _obj({"path": _PATH}),
    "list_directory_with_sizes": _obj(
        {
            "path": _PATH,
            "sortBy": {"type": "string", "enum": ["name", "size"], "default": "name"},
        }
    ),
    "directory_tree": _obj({"path": _PATH, "excludePatterns": _EXCLUDE}),
    "move_file": _obj({"source": _PATH, "destination": _PATH}, ("source", "destination")),
    "search_files": _obj(
        {
            "path": _PATH,
            "pattern": {
                "type": "string",
                "description": 'A glob of paths relative to path, e.g. "*.py" or "**/test_*.ts".',
            },
            "excludePatterns": _EXCLUDE,
        },
        ("path", "pattern"),
    ),
    "get_file_info": _obj({"path": _PATH}),
    "list_allowed_directories": _obj({}, ()),
}


def _spec(name: str, title: str, words: str, read_only: bool, idem: bool = True) -> ToolSpec:
    return ToolSpec(name, title, words, read_only, destructive=not read_only, idempotent=idem)


TOOLS: tuple[ToolSpec, ...] = (
    _spec(
        "read_file",
        "Read File",
        "Same as read_text_file (kept for old prompts). " + _TEXT_READ_WORDS,
        True,
        False,
    ),
    _spec("read_text_file", "Read Text File", _TEXT_READ_WORDS, True, False),
    _spec(
        "read_media_file",
        "Read Media File",
        "Read an image (returned as image content, scaled to a token budget) or a PDF (its "
        "text); other binary files are refused with what they are.",
        True,
        False,
    ),
    _spec(
        "read_multiple_files",
        "Read Multiple Files",
        "Read several files in one call, each as read_text_file reads it, the whole within one "
        "token budget; a file that fails (or no longer fits) says so without failing the others.",
        True,
        False,
    ),
    _spec(
        "write_file",
        "Write File",
        "Create a file, or replace all of one you have read (an existing file you have not "
        "read is refused: read it first). Keeps encoding, line endings and mode; atomic.",
        False,
    ),
    _spec(
        "edit_file",
        "Edit File",
        "Replace text in a file you have read (or seen in a search): each oldText must occur "
        "exactly once, in order; all edits apply or none does. Returns a git-style diff; "
        "dryRun shows it without writing. Refused as stale when the file changed where you edit "
        "since you read it.",
        False,
        False,
    ),
    _spec(
        "create_directory",
        "Create Directory",
        "Create a folder and any missing folders above it; an existing folder is no error.",
        False,
    ),
    _spec(
        "list_directory",
        "List Directory",
        "A folder's entries, [DIR] or [FILE] each, leaving out what .gitignore ignores.",
        True,
    ),
    _spec(
        "list_directory_with_sizes",
        "List Directory with Sizes",
        "A folder's entries with sizes, sorted by name or size (largest first), leaving out "
        "what .gitignore ignores.",
        True,
    ),
    _spec(
        "directory_tree",
        "Directory Tree",
        "A folder's tree as compact JSON (name, type, children), bounded in depth and entries "
        "(a cut tree says where), leaving out what .gitignore ignores and excludePatterns.",
        True,
    ),
    _spec(
        "move_file",
        "Move File",
        "Move or rename a file or folder inside the workspace; an existing destination is "
        "never replaced. What you read of a moved file stays valid at its new path, unless "
        "its new name changes how it is read (a notebook renamed .txt).",
        False,
        False,
    ),
    _spec(
        "search_files",
        "Search Files",
        "Files whose path (relative to path) matches a glob, newest first, leaving out what "
        ".gitignore ignores and excludePatterns.",
        True,
    ),
    _spec(
        "get_file_info",
        "Get File Info",
        "A file's or folder's type, size, times and permissions, without its content.",
        True,
    ),
    _spec(
        "list_allowed_directories",
        "List Allowed Directories",
        "The folders this server may reach (its workspace roots and allowed paths); what "
        "lies beneath them is reachable too.",
        True,
    ),
)

TOOL_NAMES = frozenset(spec.name for spec in TOOLS)
