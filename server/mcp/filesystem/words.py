"""The next call an error names, as a tool of the drop-in (`read_text_file with
{"path": ...}`), and the words of readkeeper's own params as the drop-in's (`oldText`).

The core writes a next step as its method and params (hints.py); the drop-in offers the
reference server's tools, so each method is said as the tool that does the same, its
params renamed. A method the drop-in has no tool for is named as readkeeper's own tool,
so the agent is never pointed at a call this server lacks without being told.

An error of a drop-in tool names that tool's parameters only (`error_words`): one table
per tool of the core's params it passes on, applied to the message, to `data.field` and
to the keys of `data`; a field is kept only when the tool has it (an allowlist).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ... import errors, hints, quoting
from .tools import SCHEMAS

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
# In the words of every answer (notes as well as errors), each core param a drop-in tool
# passes on, as that tool's caller knows it: its own parameter, or what it is when the
# tool does not offer it (read_multiple_files' budget is fixed, not a parameter).
_PROSE = {
    **_WORDS,
    "file_paths": "paths",
    "dry_run": "dryRun",
    "budget_tokens": "the call's token budget",
}
# A param's name as a word of the message, never part of a name it shows bare (a quoted
# name, a call's params and a file's text are never shown to it: hints.rewrite); a
# sentence's full stop after it ends the word, a name's dot ("new_string.py") does not.
_WORD = re.compile(r"(?<![\w/.\-\\+@,=~])(" + "|".join(_PROSE) + r")(?![\w/\-]|\.[\w/\-])")


def _unoffered(method: str) -> str:
    return (
        f"readkeeper's {method} (a tool of `readkeeper mcp` without --tools filesystem; "
        "this server does not offer it)"
    )


def _word(method: str, params: dict[str, Any] | None, names: dict[str, str] | None = None) -> str:
    if method not in _TOOLS:
        return _unoffered(method)  # grep, changes, forget, ...: readkeeper's own tools
    tool, renamed = _TOOLS[method]
    if method == "read" and params and params.get("render") is True:
        # A PDF's pages drawn: read_media_file with pages (serve.read_media).
        tool, params = (
            "read_media_file",
            {k: params[k] for k in ("file_path", "pages") if k in params},
        )
    given = params or {}
    pair = {_WORDS[k]: given[k] for k in ("old_string", "new_string") if k in given}
    if tool == "edit_file" and params and pair:  # edit_file takes its pairs as edits
        kept = {k: v for k, v in params.items() if k not in ("old_string", "new_string")}
        params = {**kept, "edits": [pair]}
    if not params:
        return tool
    words = {**{k: v for k, v in (names or {}).items() if "_" in k}, **_WORDS, **renamed}
    shown = {words.get(k, k): v for k, v in params.items()}
    # A param the tool requires and the core left to its default, said with its value
    # (search_files requires the path that glob takes as the root when left out).
    needed = [k for k in SCHEMAS[tool].get("required", []) if k not in shown and k in _DEFAULTS]
    shown = {**{k: _DEFAULTS[k] for k in needed}, **shown}
    if not set(shown) <= set(SCHEMAS[tool]["properties"]):
        # A param no drop-in tool takes (edit's replace_all, read's line_format): the
        # call is readkeeper's own, never a tool here with an argument it would refuse.
        return _unoffered(method)
    return f"{tool} with {quoting.json_text(shown)}"


# The drop-in's value for a param the core's call leaves to its default: "." is the
# first root, as every path of the drop-in is relative to it.
_DEFAULTS = {"path": "."}


# A read's line count as hints.again writes it (`offset=5, limit=20`): only read takes
# it, and read_text_file names it head. (A sentence names no option as a word:
# tests/test_ways_on.py; round 27 found "(offset, limit)" said to the drop-in.)
_LIMIT = re.compile(r"(?<![\w/.\-\\+@,=~])limit(?==)")


# A PDF's pages drawn, as a sentence names the option (`pages="2", render=true`, the
# value set aside as hints.rewrite sets a JSON string aside): read_media_file's pages.
_DRAWN = re.compile(r"(?<![\w\-/.])pages=(\S+?), render=true\b")
# An option of readkeeper's read no drop-in tool takes (the drop-in asks for neither):
# said as what it is, not a parameter to send here.
# Its value as hints.again writes it: a number, true, or a JSON string (set aside by
# hints.rewrite, a mark in its place here).
_UNOFFERED = re.compile(r"(?<![\w\-/.])(line_format|estimate)=(\S+?)(?=[.,;)]*(?:\s|$))")


# A pair's field inside a list param (`edits[0].old_string`): the tool's name for it.
_ITEM = re.compile(r"(?<=\w\[)(\d+\]\.)(old_string|new_string)(?![\w/\-]|\.[\w/\-])")


def _prose(text: str, tool: str | None = None) -> str:
    text = _DRAWN.sub(r"read_media_file with pages=\1", text)
    text = _UNOFFERED.sub(
        r"\1=\2 (an option of readkeeper's read, a tool of `readkeeper mcp` without --tools "
        "filesystem; this server does not offer it)",
        text,
    )
    text = _ITEM.sub(lambda m: m.group(1) + _WORDS[m.group(2)], text)
    return _reader_named(_LIMIT.sub("head", _WORD.sub(lambda m: _PROSE[m.group(1)], text)), tool)


# Options a sentence names as the way on: a run hints.again wrote (`offset=412,
# head=3`, a value set aside by hints.rewrite).
_OPTION = r"[a-z_]+=[^\s,;)]+"
_WAY_ON = re.compile(rf"(?<![\w\-/.])(?P<run>{_OPTION}(?:, {_OPTION})*)")
_TOOL = re.compile(r"\b(" + "|".join(sorted(SCHEMAS, key=len, reverse=True)) + r")\b")
_SENTENCE = re.compile(r"\.\s+|\n")


def _reader_named(text: str, tool: str | None) -> str:
    """`text` with each way on that names options `tool` does not take, but read_text_file
    does, said as read_text_file's (read_media_file of a notebook, read_multiple_files'
    outline, edit_file's closest text: they read it so, but take none of them)."""
    if tool not in SCHEMAS or tool == "read_text_file":
        return text
    own, reader = SCHEMAS[tool]["properties"], SCHEMAS["read_text_file"]["properties"]
    out: list[str] = []
    at = 0
    for found in _WAY_ON.finditer(text):
        names = re.findall(r"([a-z_]+)=", found.group("run"))
        begun = max((m.end() for m in _SENTENCE.finditer(text, 0, found.start())), default=0)
        if (
            all(name in own for name in names)
            or not all(name in reader for name in names)
            or _TOOL.search(text, begun, found.start())
        ):
            continue
        before = text[at : found.start()]
        if re.search(r"(?<![\w\-])read with $", before):  # "read with X=": the tool
            out.append(before[: -len("read with ")] + "read_text_file with ")
        else:
            out.append(before + "read_text_file's ")
        at = found.start()
    return "".join(out) + text[at:]


def for_filesystem(message: str, keep: Iterable[str] = (), tool: str | None = None) -> str:
    """`message` in the drop-in's words: readkeeper's own only, never a file's text
    (`keep`, as the error's data holds it) nor a quoted name (hints.rewrite); `tool`: the
    tool that answers, whose way on names read_text_file where it lacks the options."""
    return hints.rewrite(message, _word, keep, lambda text: _prose(text, tool))


# Each tool's names for the core's params it passes on (one not named keeps its name):
# the names an error of that tool may say, in its message and in `data.field`.
_READ = {"file_path": "path", "limit": "head"}
_FIELDS: dict[str, dict[str, str]] = {
    "read_file": _READ,
    "read_text_file": _READ,
    "read_media_file": {"file_path": "path"},
    "read_multiple_files": {"file_paths": "paths"},
    "write_file": {"file_path": "path"},
    "edit_file": {
        "file_path": "path",
        "old_string": "oldText",
        "new_string": "newText",
        "dry_run": "dryRun",
    },
    "directory_tree": {"exclude": "excludePatterns"},
    "search_files": {"exclude": "excludePatterns"},
}


def error_words(
    tool: str, args: dict[str, Any], message: str, data: dict[str, Any], params: Any = None
) -> tuple[str, dict[str, Any]]:
    """An error of drop-in tool `tool` in its own words: every param the core named, in
    the message, in `data.field` and as a key of `data`, said as the tool's parameter.
    `data.field` is kept only when it names one of the tool's `params` (an allowlist:
    a core param with no counterpart here is the call readkeeper made, not the agent's,
    and naming it would send the agent after a parameter it cannot give; `params` None:
    no tool to hold it to)."""
    names = dict(_FIELDS.get(tool, {}))
    if "limit" in names and args.get("tail") is not None:
        names["limit"] = "tail"  # tail is read as offset and limit
    # A param with "_" is a word of its own; a plain one ("limit") only as `name=`.
    alternation = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    word = re.compile(r"(?<![\w/.\-\\+@,=~])(" + alternation + r")(?![\w/\-]|\.[\w/\-])")

    def prose(text: str) -> str:
        text = _prose(text, tool)
        if not names:
            return text
        return word.sub(
            lambda m: (
                names[m.group(1)]
                if "_" in m.group(1) or m.string[m.end() : m.end() + 1] == "="
                else m.group(1)
            ),
            text,
        )

    said = hints.rewrite(
        message, lambda m, p: _word(m, p, names), errors.shown_content(data), prose
    )
    field = data.get("field")
    if isinstance(field, str) and field in names and said.startswith(field + " "):
        said = names[field] + said[len(field) :]  # "limit applies to ...": head's words
    shown: dict[str, Any] = {}
    for key, value in data.items():
        if key == "field":
            field = names.get(str(value), str(value))
            # Each part of a nested field (`edits[0].old_string`) in the tool's words.
            field = re.sub(r"\w+", lambda m: names.get(m[0], _WORDS.get(m[0], m[0])), field)
            # An entry of a list (`excludePatterns[1]`) is named when the list is a param.
            if params is None or re.split(r"[.\[]", field, maxsplit=1)[0] in params:
                shown["field"] = field
            continue
        keys = {**_WORDS, **names}
        shown[keys[key] if key in keys and "_" in key else key] = value
    return said, shown
