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
from collections.abc import Iterable, Mapping
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


# A pair's field inside a list param (`edits[0].old_string`): the tool's name for it.
_ITEM = re.compile(r"(?<=\w\[)(\d+\]\.)(old_string|new_string)(?![\w/\-]|\.[\w/\-])")


def _prose(text: str) -> str:
    """readkeeper's sentence with each param named as a word said as the drop-in's (a
    next call and a run of options are set aside by hints.rewrite: `_run_words` says
    them)."""
    text = _ITEM.sub(lambda m: m.group(1) + _WORDS[m.group(2)], text)
    return _WORD.sub(lambda m: _PROSE[m.group(1)], text)


# Every option some drop-in tool takes (tools.SCHEMAS): a run naming any other is a call
# of readkeeper's own tools, which this server does not offer.
_OFFERED = frozenset(key for schema in SCHEMAS.values() for key in schema["properties"])
# The core's method whose options a listing's run names (depth: list's), by the tool that
# answered; every other run is a read's.
_LISTING = {"list_directory": "list", "list_directory_with_sizes": "list"}
_LISTING |= {"directory_tree": "list", "search_files": "glob"}


def _run_words(tool: str | None, args: Mapping[str, Any] | None) -> hints.Options:
    """The drop-in's words for a run of options `hints.again` wrote: the call `tool`
    just answered (`args`: its arguments, for read_multiple_files the entry's own path;
    None: not known) with them changed, said as the whole call (`read_text_file with
    {"path": ..., "offset": 501, "head": 200}`); without the call, the options alone in
    the drop-in's names. A PDF's pages drawn are read_media_file's; options the tool
    that answered lacks, read_text_file's; an option no drop-in tool takes (tools.SCHEMAS)
    is named as readkeeper's own, which this server does not offer."""

    given = dict(args or {})  # the caller's own values, whole (hints.runs_as_calls)

    def said(run: dict[str, Any]) -> str:
        shown = {_READ.get(name, name): value for name, value in run.items()}
        path = given.get("path")
        if not set(shown) - {"render"} <= _OFFERED:
            method = _LISTING.get(tool or "", "read")
            return (
                f"{_written(shown)} (an option of readkeeper's {method}, a tool of `readkeeper "
                "mcp` without --tools filesystem; this server does not offer it)"
            )
        # A PDF's pages drawn are read_media_file's pages, and so are the pages after
        # those it drew (round 35: they were named as read_text_file's, text the pages
        # without a text layer lack); their text (render false) is read_text_file's.
        drawing = tool == "read_media_file" and "pages" in shown
        if shown.get("render") is True or (drawing and "render" not in shown):
            drawn: dict[str, Any] = {k: shown[k] for k in ("pages", "force") if k in shown}
            return _tool_call("read_media_file", path, drawn)
        if tool in SCHEMAS and set(shown) <= set(SCHEMAS[tool]["properties"]) and not drawing:
            if path is None:
                return _written(shown)
            return f"{tool} with {quoting.json_text(_changed(dict(given), shown))}"
        if tool is None and path is None:
            return _written(shown)  # no tool named: the options alone
        return _tool_call("read_text_file", path, shown)

    return said


def _changed(args: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """The call `args` with the options of `run` changed, its others kept, as the core's
    call was (`hints.again`): tail is the drop-in's offset and head (the core read
    offset=N-tail+1, limit=tail), so a run naming a range says tail as head; a symbol
    read takes no range, nor a range a symbol, so a run naming one drops the other."""
    if {"offset", "head"} & set(run):
        tail = args.pop("tail", None)
        if tail is not None and "head" not in run:
            args["head"] = tail
        args.pop("symbol", None)
    if "symbol" in run:
        for name in ("offset", "head", "tail"):
            args.pop(name, None)
    return {**args, **run}


def _tool_call(tool: str, path: Any, options: dict[str, Any]) -> str:
    """`tool` with `options`, the whole call when its `path` is known."""
    if path is None:
        return f"{tool} with {_written(options)}"
    return f"{tool} with {quoting.json_text({'path': path, **options})}"


def _written(options: dict[str, Any]) -> str:
    """Options as hints.again writes them (`offset=501, head=200`, values as JSON)."""
    return ", ".join(f"{name}={quoting.json_text(value)}" for name, value in options.items())


def for_filesystem(
    message: str,
    keep: Iterable[str] = (),
    tool: str | None = None,
    args: Mapping[str, Any] | None = None,
) -> str:
    """`message` in the drop-in's words: readkeeper's own only, never a file's text
    (`keep`, as the error's data holds it) nor a quoted name (hints.rewrite); `tool`: the
    tool that answers, `args` its arguments, whose run of options is said as that call
    with them changed (`_run_words`)."""
    return hints.rewrite(message, _word, keep, _prose, _run_words(tool, args))


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
        text = _prose(text)
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
        message,
        lambda m, p: _word(m, p, names),
        errors.shown_content(data),
        prose,
        _run_words(tool or None, args),
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
