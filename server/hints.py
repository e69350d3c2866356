"""The next call an error names, in the words of the front end that shows it.

The core writes a next step once, as the LSP method and its params:
`readkeeper/list {"path": "/w/src"}` (the params optional, as one JSON object). The LSP
front end shows that as written; the MCP one names its tool and arguments (`the list
tool with {"path": "/w/src"}`); the CLI gives the command and flags (`readkeeper ls
/w/src`). So an agent is never told to run a shell command (`ls`, `grep`) its front end
does not offer, nor a method its front end does not have.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any

from .quoting import json_text

_CALL = re.compile(r"readkeeper/([A-Za-z]+)(?: (\{[^{}]*\}))?")


def call(method: str, **params: Any) -> str:
    """The next step naming `method` with `params`, as the core writes it."""
    shown = {k: v for k, v in params.items() if v is not None}
    return f"readkeeper/{method} {json_text(shown)}" if shown else (f"readkeeper/{method}")


def rewrite(message: str, word: Callable[[str, dict[str, Any] | None], str | None]) -> str:
    """`message` with each next call as `word(method, params)` says it (None: as written)."""
    return _rewrite(message, word)


def _rewrite(message: str, word: Callable[[str, dict[str, Any] | None], str | None]) -> str:
    def replace(match: re.Match[str]) -> str:
        params: dict[str, Any] | None = None
        if match.group(2):
            try:
                loaded = json.loads(match.group(2))
            except ValueError:
                return match.group(0)
            params = loaded if isinstance(loaded, dict) else None
        said = word(match.group(1), params)
        return match.group(0) if said is None else said

    return _CALL.sub(replace, message)


def for_mcp(message: str, tools: Mapping[str, str]) -> str:
    """`message` with each next call as the MCP tool that serves it (`tools`: each
    method's tool name)."""

    def word(method: str, params: dict[str, Any] | None) -> str | None:
        tool = tools.get(method)
        if tool is None:
            return None
        if not params:
            return f"the {tool} tool"
        return f"the {tool} tool with {json_text(params)}"

    return _rewrite(message, word)


# The CLI's command per method, its positional params and the flags of the others.
_CLI: dict[str, tuple[str, tuple[str, ...]]] = {
    "read": ("read", ("file_path",)),
    "grep": ("grep", ("pattern", "path")),
    "glob": ("glob", ("pattern", "path")),
    "list": ("ls", ("path",)),
}


def _shell(name: str, value: Any) -> str:
    """A value as one shell word nothing expands (single quotes); one that cannot stand
    on one line (a line break in a file's name) is named by its parameter instead."""
    text = str(value)
    return shlex.quote(text) if text.isprintable() else name.upper()


def for_cli(message: str) -> str:
    """`message` with each next call as the `readkeeper` command that does it (a method
    the CLI lacks is left as the method)."""

    def word(method: str, params: dict[str, Any] | None) -> str | None:
        if method not in _CLI:
            return None
        command, positional = _CLI[method]
        params = dict(params or {})
        words = ["readkeeper", command]
        for name in positional:
            if name in params:
                words.append(_shell(name, params.pop(name)))
        for name, value in params.items():
            flag = "--" + name.replace("_", "-")
            if value is True:
                words.append(flag)
            elif value is not False:
                words += [flag, _shell(name, value)]
        return "`" + " ".join(words) + "`"

    return _rewrite(message, word)
