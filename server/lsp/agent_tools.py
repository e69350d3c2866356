"""The next steps an LSP client's agent can take with its own tools (issue 31).

An editor may give its chat's agent tools of its own that send readkeeper/* requests
(the VS Code extension's readkeeper_read, readkeeper_edit, ...). Such an agent cannot call
a method, so the method words every other LSP client gets (`readkeeper/list {...}`) name
calls it does not have. The client says which methods its tools serve at `initialize`
(`agent_tools`, {method: tool name}); for that client, and it alone, each next step
readkeeper writes names the tool (`the readkeeper_read tool with {...}`) or, for a
method no tool serves, says that none does and what to use instead. The words are
hints.rewrite's, as every front end's: a file's text an error shows and every quoted
name stay as they are.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pygls.exceptions import JsonRpcException

from .. import hints
from ..calls import METHODS
from ..errors import shown_content
from ..hint_walks import notes
from ..quoting import json_text

log = logging.getLogger("readkeeper")

OPTION = "agent_tools"
# A tool name readkeeper says: its own prefix, then lowercase words (no space, quote or
# mark a message could be read by), and short.
TOOL_NAME = re.compile(r"readkeeper_[a-z_]+")
MAX_TOOL_NAME_CHARS = 64

# What an agent uses instead of a method no tool of its serves.
_INSTEAD = {
    "list": "the editor's own file tools list a folder",
    "glob": "the editor's own file search finds files by name",
    "stat": "the editor's own file tools show a path's kind and size",
    "move": "the editor's own file tools move and rename files",
    "mkdir": "the editor's own file tools make folders",
    "undo": "the editor's own undo takes a change back",
}
_OTHERWISE = "the editor's own tools may do it"


def tools_of(value: Any) -> dict[str, str]:
    """The option's {method: tool name}: each known method named with a tool name that
    fits `TOOL_NAME`. What else it holds is ignored, counted in one log line that quotes
    none of it (a client's value is not written to the log)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        log.warning("%s ignored: it is not an object of method names and tool names", OPTION)
        return {}
    tools: dict[str, str] = {}
    for method in METHODS:  # the known ones: a value of 10,000 keys is not walked
        tool = value.get(method)
        if isinstance(tool, str) and len(tool) <= MAX_TOOL_NAME_CHARS and TOOL_NAME.fullmatch(tool):
            tools[method] = tool
    ignored = len(value) - len(tools)
    if ignored:
        log.warning(
            "%s: %s of its entries ignored (each names a readkeeper method, such as "
            '"read", and a tool name that matches readkeeper_[a-z_]+, at most %d characters)',
            OPTION,
            f"{ignored:,}",
            MAX_TOOL_NAME_CHARS,
        )
    return tools


# The methods whose answers say a run of options (hints.again) changing their own call.
_RUNS = ("read", "grep", "glob", "list")


def asked(method: str, raw: Any) -> hints.Answering | None:
    """The call a request makes, as the agent's tool gave it: its method and params, less
    the session its extension adds (no tool takes it: extension/vscode/src/agent). None:
    a method whose answers name no run of its options."""
    name = method.removeprefix("readkeeper/")
    if name not in _RUNS or not isinstance(raw, dict):
        return None
    return name, {k: v for k, v in raw.items() if k != "session"}


def for_agent_tools(
    message: str,
    tools: Mapping[str, str],
    keep: Iterable[str] = (),
    answering: hints.Answering | None = None,
) -> str:
    """`message` with each next call as the tool of `tools` that serves it (`keep`: a
    file's text it shows, as hints.rewrite keeps it). A method no tool serves is said as
    the tool that stands in for it (hints.stand_in), or as not offered, with what to use
    instead. A run of options (hints.again) is said as the call `answering` (the
    request's method and params) with them changed, as that tool's call: `the
    readkeeper_read tool with {"file_path": ..., "offset": 501}` (round 31: "offset=1,
    limit=511" named no tool); a stub's `force=true` too (an agent's tool is no MCP
    stub bench's concern: its words are the whole call)."""

    def word(method: str, params: dict[str, Any] | None) -> str | None:
        tool = tools.get(method)
        if tool is None:
            instead = hints.stand_in(method, params)
            if instead is not None and instead[0] in tools:
                return f"{word(*instead)}, its folder's entries with their kinds and sizes"
            other = _INSTEAD.get(method, _OTHERWISE)
            if method == "readMany" and "read" in tools:
                other = f"the {tools['read']} tool reads one file a call"
            return f"readkeeper's {method}, which is not one of your tools here: {other}"
        if not params:
            return f"the {tool} tool"
        return f"the {tool} tool with {json_text(params)}"

    return hints.rewrite(message, word, keep, options=hints.runs_as_calls(word, answering))


def result(tools: Mapping[str, str], value: Any, answering: hints.Answering | None = None) -> Any:
    """A result with the notes readkeeper wrote in it said in `tools`' words, as the MCP
    front end says them (hints.notes: its note, its file's, each dropped attachment's
    reason, each of a readMany's results); a file's own text is left as it is. No tools:
    `value` as it is."""
    if not tools:
        return value
    return notes(value, lambda message, keep: for_agent_tools(message, tools, keep, answering))


def reply(
    tools: Mapping[str, str], error: JsonRpcException, answering: hints.Answering | None = None
) -> JsonRpcException:
    """An error reply with its message said in `tools`' words: a refusal's, whose data
    has its kind (an `internal` fault names the method that failed, not a next step),
    the file's text it shows left as it is. No tools: `error` as it is."""
    data = error.data if isinstance(error.data, dict) else None
    if not tools or data is None or data.get("kind") in (None, "internal"):
        return error
    message = for_agent_tools(error.message, tools, shown_content(data), answering)
    return JsonRpcException(message=message, code=error.code, data=data)
