"""The next call an error names, as a tool of the drop-in (`read_text_file with
{"path": ...}`), and the words of readkeeper's own params as the drop-in's (`oldText`).

The core writes a next step as its method and params (hints.py); the drop-in offers the
reference server's tools, so each method is said as the tool that does the same, its
params renamed. A method the drop-in has no tool for is named as readkeeper's own tool,
so the agent is never pointed at a call this server lacks without being told.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ... import hints

# method -> (tool, {param: the tool's argument}); params not named keep their name.
_TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "read": ("read_text_file", {"file_path": "path", "limit": "head"}),
    "readMany": ("read_multiple_files", {"file_paths": "paths"}),
    "edit": ("edit_file", {"file_path": "path"}),
    "patch": ("edit_file", {"file_path": "path"}),
    "write": ("write_file", {"file_path": "path"}),
    "list": ("list_directory", {}),
    "glob": ("search_files", {}),
    "mkdir": ("create_directory", {}),
    "move": ("move_file", {}),
    "stat": ("get_file_info", {}),
}
_WORDS = {"old_string": "oldText", "new_string": "newText", "file_path": "path"}
# A param's name as a word of the message, never part of a path or a name it shows.
_WORD = re.compile(r"(?<![\w/.\-\\])(" + "|".join(_WORDS) + r")(?![\w/.\-])")


def _word(method: str, params: dict[str, Any] | None) -> str:
    if method not in _TOOLS:
        # grep, changes, forget, ...: readkeeper's own tools, not offered here.
        return (
            f"readkeeper's {method} (a tool of `readkeeper mcp` without --tools filesystem; "
            "this server does not offer it)"
        )
    tool, renamed = _TOOLS[method]
    if not params:
        return tool
    shown = {renamed.get(k, k): v for k, v in params.items()}
    return f"{tool} with {json.dumps(shown, ensure_ascii=False)}"


def for_filesystem(message: str) -> str:
    """`message` in the drop-in's words."""
    return _WORD.sub(lambda m: _WORDS[m.group(1)], hints.rewrite(message, _word))
