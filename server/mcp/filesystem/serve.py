"""How each drop-in tool is served: its arguments turned into readkeeper calls (the same
`calls` every front end uses, so through the editor's server when attached), and the
answer shown as the reference server shows it, with readkeeper's own facts (a stub, a
cut, unsaved changes) said outside the file's text.

A file's text is fenced (quoting.fence), so nothing in a file can pose as one of
readkeeper's notes; names are quoted when odd (quoting.name).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

import mcp_types as types

from ... import quoting, render, words
from ...errors import ReadkeeperError, shown_name
from ...files.guesses import one_call
from ...hint_walks import page_steps
from ...hints import again
from . import listings
from .args import Content, Served, count, flag, listed, refused, string, text_block
from .tools import SCHEMAS
from .words import error_words, for_filesystem

# read_multiple_files: the files of one call share this many tokens.
MANY_BUDGET_TOKENS = 40_000
_NUMBER = re.compile(r"^ *\d+\t", re.MULTILINE)


def serve(served: Served, name: str, args: dict[str, Any]) -> types.CallToolResult:
    """Serve drop-in tool `name`; a refusal is a tool error in the drop-in's words. The
    tool's did-you-mean guesses share one budget however many calls to the core it makes
    (read_text_file's tail: an estimate, then the read), as a core tool's do (calls.py).
    Attached, the core is the editor's, so each call there has a budget of its own."""
    try:
        handler = HANDLERS[name]
        _check_known(name, args)
        with one_call():
            content = handler(served, args)
    except ReadkeeperError as exc:
        return error_result(exc, name, args)
    return types.CallToolResult(content=list(content))


def _check_known(tool: str, args: dict[str, Any]) -> None:
    """Refuse an argument `tool` does not have, as the core refuses an unknown param
    (protocol/known_fields.py): dropped silently, `heads: 3` read the whole file."""
    taken = SCHEMAS[tool]["properties"]
    unknown = sorted(str(key) for key in args if key not in taken)
    if unknown:
        names = ", ".join(sorted(taken)) or "none"
        raise ReadkeeperError(
            "bad_params",
            f"{tool} has no parameter {shown_name(unknown[0])}, so nothing was done. Its "
            f"parameters are {names}: send the call with those alone.",
            field=unknown[0],
        )


def error_result(
    exc: ReadkeeperError, tool: str = "", args: dict[str, Any] | None = None
) -> types.CallToolResult:
    """A refusal: its message, with the next call named as a tool of this server and
    every param named as `tool`'s own (words.error_words)."""
    params = SCHEMAS[tool]["properties"] if tool in SCHEMAS else None
    message, data = error_words(tool, args or {}, exc.message, exc.to_data(), params)
    lines = [message, f"kind: {exc.kind}"]
    extra = {k: v for k, v in data.items() if k not in ("kind", "message")}
    if extra:
        lines.append(quoting.cut_escaped(quoting.json_text(extra, default=str), 2000))
    return types.CallToolResult(
        content=[types.TextContent(text="\n".join(lines))],
        structured_content={"error": {"message": message, "data": data}},
        is_error=True,
    )


# --- reads ------------------------------------------------------------------------------


def read_text(served: Served, args: dict[str, Any]) -> list[Content]:
    """read_text_file and read_file: the text (or the part asked), fenced, with what
    readkeeper knows about it said outside the fence."""
    path = string(args, "path")
    head, tail, offset = count(args, "head"), count(args, "tail"), count(args, "offset")
    if head is not None and tail is not None:
        raise ReadkeeperError(
            "bad_params", "Give head or tail, not both (one read each).", field="tail"
        )
    if tail is not None and isinstance(args.get("symbol"), str):
        # Said here, in tail's words: the core would name the offset and limit tail is
        # read as (round 27: "takes no offset or head", to a call that sent tail).
        raise ReadkeeperError(
            "bad_params",
            f"symbol {quoting.json_text(args['symbol'])} reads that symbol's own lines, so it "
            "takes no tail: send symbol alone, or tail alone.",
            field="tail",
        )
    force = flag(args, "force") or None
    limit = head
    if head == 0 or tail == 0:
        return [text_block(_none_asked(served, path, "head" if head == 0 else "tail"))]
    if tail is not None:
        total = _line_count(served, path)
        if total is None:
            raise ReadkeeperError(
                "unsupported",
                f"The lines of {path} cannot be counted for tail (it is not a text file, or "
                "it is too large to count); read it without tail, or a part with offset and "
                "head.",
                file_path=path,
            )
        offset, limit = max(1, total - tail + 1), tail
    symbol = args.get("symbol")  # the core says what an empty or unknown one is
    if symbol is not None and not isinstance(symbol, str):
        raise refused("symbol", "expected a string", symbol)
    result = served.ask(
        "read",
        file_path=path,
        offset=offset,
        limit=limit,
        force=force,
        pages=_pages(args),
        symbol=symbol,
        include_images=flag(args, "include_images") or None,
    )
    return shown_read(result, args=args)


def _pages(args: dict[str, Any]) -> str | None:
    """The `pages` a read asks for (readkeeper's own: a PDF's), None when not given."""
    value = args.get("pages")
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return string(args, "pages")


def _line_count(served: Served, path: str) -> int | None:
    """How many lines `path` has (None: not a text file). A file too large to read whole
    is counted as a ranged read past its end counts it (streamed, the refusal saying
    how many): a tail of it is then read as a range, as any ranged read of it is."""
    try:
        estimate = served.ask("read", file_path=path, estimate=True)
    except ReadkeeperError as exc:
        if exc.kind != "too_large":
            raise
        try:
            served.ask("read", file_path=path, offset=_PAST_ANY_END, limit=1)
        except ReadkeeperError as past:
            total = past.data.get("total_lines")
            if past.kind == "bad_params" and isinstance(total, int):
                return total
        raise exc from None
    total = (estimate.get("file") or {}).get("total_lines")
    return total if isinstance(total, int) else None


# An offset past the end of any file (the protocol's largest).
_PAST_ANY_END = 2**31 - 1


def _none_asked(served: Served, path: str, field: str) -> str:
    """The answer to head=0 or tail=0: no line shown, said so with how many the file
    has (an estimate: the file is checked as a read checks it, and nothing is counted
    as read), never an empty text that an empty file would also give."""
    estimate = served.ask("read", file_path=path, estimate=True)
    total = (estimate.get("file") or {}).get("total_lines")
    shown = f"0 of {words.count(total, 'line')}" if isinstance(total, int) else "No line"
    return (
        f"(readkeeper: {shown} shown: {field}=0 asks for none; read_text_file with "
        f"{field}=N shows N, without {field} the whole file)"
    )


def shown_read(
    result: dict[str, Any],
    tool: str = "read_text_file",
    answering: str | None = None,
    args: dict[str, Any] | None = None,
) -> list[Content]:
    """A read result as the drop-in shows it, the answer of `answering` (default `tool`)
    called with `args` (read_multiple_files: the entry's own path), whose stub names
    `tool`; a way on is that call with its options changed (words._run_words)."""
    kind = result.get("type")
    file = result.get("file") or {}

    def steps(message: str, keep: Iterable[str] = ()) -> str:
        return for_filesystem(message, keep, answering or tool, args)

    if kind == "text":  # a range from readkeeper's own offset says where it stopped
        ranged = (args or {}).get("offset") is not None
        return [text_block(_text_file(file, steps, ranged))]
    said = render.read(_noted(result, steps), steps)  # its next steps in the tools' words
    if kind == "file_unchanged" and not _FORCED.search(said):
        # Only when the core's stub names no resend: it says the call whole, forced.
        said += f"\n({tool} with force=true sends it again.)"
    return [text_block(said), *_images(result)]


# A resend the stub already names: the call again with force (words._run_words).
_FORCED = re.compile(r'"force": true\}|force=true')


def _images(result: dict[str, Any]) -> list[Content]:
    """A read's images, after its text: an image's, and a notebook's outputs' when
    include_images asked for them (as the core's MCP tools send them: mcp/render.py)."""
    file = result.get("file") or {}
    if result.get("type") == "image" and file.get("base64"):
        return [types.ImageContent(data=file["base64"], mime_type=file["media_type"])]
    if result.get("type") != "notebook":
        return []
    return [
        types.ImageContent(data=image["base64"], mime_type=image["media_type"])
        for cell in file.get("cells") or []
        for output in cell.get("outputs") or []
        for image in output.get("images") or []
        if image.get("base64")
    ]


def _noted(result: dict[str, Any], steps: Callable[[str], str]) -> dict[str, Any]:
    """`result` with the notes readkeeper wrote in it in the drop-in's steps; the file's
    text (a re-read's diff, a notebook's cells, a PDF's pages) left as it is, but for
    each page's note naming the call that draws it (hints.page_steps)."""
    said = dict(result)
    if isinstance(said.get("note"), str):
        said["note"] = steps(said["note"])
    file = said.get("file")
    if isinstance(file, dict) and isinstance(file.get("note"), str):
        file = said["file"] = {**file, "note": steps(file["note"])}
    if result.get("type") == "pdf" and isinstance(file, dict):
        content = file.get("content")
        if isinstance(content, str):
            said["file"] = {**file, "content": page_steps(content, steps)}
    return said


def _text_file(file: dict[str, Any], steps: Callable[[str], str], ranged: bool = False) -> str:
    """A text read's lines, fenced, and readkeeper's note: the core's, or where a cut read
    stopped; `ranged` (an `offset` given, readkeeper's own: the reference server has
    head and tail alone), where a range that stops before the end stopped too."""
    body = quoting.fence(_NUMBER.sub("", file.get("content", "")))
    notes = []
    if file.get("unsaved"):
        notes.append("this is the editor's buffer, with unsaved changes")
    note, more = file.get("note"), file.get("next_offset")
    if note:  # the core's steps for a cut or a repair
        notes.append(steps(str(note)))
    # The core's note names the rest when the read was cut (`offset=N`, hints.again);
    # a note of another kind (its long lines cut: round 33) does not.
    named = bool(note) and more is not None and again(offset=more) in str(note)
    if not named and (file.get("partial") or (ranged and more)):
        # A range that stops before the end: cut, or from an offset (round 31: the
        # token_limit way on named offset and head, then said nothing of the 4,400 lines
        # after them). A head or tail alone is answered as the reference server does.
        start, shown = file.get("start_line", 1), file.get("num_lines", 0)
        total = file.get("total_lines") or "?"
        rest = steps(f"; the rest: {again(offset=more)}") if more else ""
        notes.append(f"lines {start}-{start + shown - 1} of {total}{rest}")
    if not notes:
        return body
    return body + "\n(readkeeper: " + "; ".join(notes) + ")"


def read_media(served: Served, args: dict[str, Any]) -> list[Content]:
    """read_media_file: an image as image content (fitted to a budget), a PDF as text."""
    pages = _pages(args)  # a PDF's pages, drawn as images (the text: read_text_file)
    render = True if pages is not None else None
    force = flag(args, "force") or None
    path = string(args, "path")
    return shown_read(
        served.ask("read", file_path=path, pages=pages, render=render, force=force),
        "read_media_file",
        args=args,
    )


def read_multiple(served: Served, args: dict[str, Any]) -> list[Content]:
    """read_multiple_files: each file as read_text_file shows it, in one token budget."""
    paths = listed(args, "paths")  # a bad entry is refused alone
    answer = served.ask("readMany", file_paths=paths, budget_tokens=MANY_BUDGET_TOKENS)
    parts = []
    for item in answer.get("results", []):
        path = shown_name(str(item.get("file_path", "")))  # cut when long
        entry = {"path": item["file_path"]} if item.get("file_path") else {}
        error = item.get("error")
        if error:
            message, data = str(error.get("message", "")), error.get("data") or {}
            said = error_words("read_multiple_files", entry, message, data)[0]
            parts.append(f"{path}: Error - {said}")
            continue
        shown = shown_read(
            item.get("result") or {}, answering="read_multiple_files", args=entry or None
        )
        text = "\n".join(c.text for c in shown if isinstance(c, types.TextContent))
        if any(isinstance(c, types.ImageContent) for c in shown):
            text += "\n(an image: read_media_file shows it)"
        parts.append(f"{path}:\n{text}\n")
    if isinstance(answer.get("note"), str):  # the calls for the files over the budget
        note = for_filesystem(answer["note"], tool="read_multiple_files")
        parts.append(f"note: {quoting.line(note)}")
    return [text_block("\n---\n".join(parts))]


# --- changes ----------------------------------------------------------------------------


def write_file(served: Served, args: dict[str, Any]) -> list[Content]:
    """write_file: create, or replace a file this session read."""
    path = string(args, "path")
    content = args.get("content")
    if not isinstance(content, str):
        raise refused("content", "expected a string", content)
    done = served.ask("write", file_path=path, content=content)
    said = f"Successfully wrote to {_resolved(done, 'file_path', path)}"
    if done.get("created"):
        said += " (a new file)"
    if done.get("note"):
        said += f"\n(readkeeper: {for_filesystem(str(done['note']), (), 'write_file', args)})"
    return [text_block(said)]


def edit_file(served: Served, args: dict[str, Any]) -> list[Content]:
    """edit_file: every edit applied in order, all or none (readkeeper/patch)."""
    path = string(args, "path")
    edits = listed(args, "edits")
    pairs = []
    for index, one in enumerate(edits):
        if not (
            isinstance(one, dict)
            and isinstance(one.get("oldText"), str)
            and isinstance(one.get("newText"), str)
            and set(one) <= {"oldText", "newText"}  # another key was dropped unseen
        ):
            raise refused(
                "edits",
                "expected an object with oldText and newText (strings), and nothing else",
                one,
                f"edits[{index}]",
            )
        pairs.append({"old_string": one["oldText"], "new_string": one["newText"]})
    done = served.ask("patch", file_path=path, edits=pairs, dry_run=flag(args, "dryRun"))
    said = quoting.fence(str(done.get("diff", "")), "diff") if done.get("diff") else ""
    if done.get("note"):
        said += f"\n(readkeeper: {for_filesystem(str(done['note']), (), 'edit_file', args)})"
    unseen = render.unseen_change(done.get("edit") or done)
    if unseen:
        said += f"\n{unseen}"
    return [text_block(said.strip())]


def create_directory(served: Served, args: dict[str, Any]) -> list[Content]:
    """create_directory: the folder and the missing ones above it."""
    path = string(args, "path")
    done = served.ask("mkdir", path=path)
    said = f"Successfully created directory {_resolved(done, 'path', path)}"
    if not done.get("created"):
        said += " (it already existed)"
    return [text_block(said)]


def move_file(served: Served, args: dict[str, Any]) -> list[Content]:
    """move_file: rename, never replacing; the session's read-state follows."""
    source, destination = string(args, "source"), string(args, "destination")
    done = served.ask("move", source=source, destination=destination)
    said = (
        f"Successfully moved {_resolved(done, 'source', source)} to "
        f"{_resolved(done, 'destination', destination)}"
    )
    if done.get("note"):
        said += f"\n(readkeeper: {for_filesystem(str(done['note']), (), 'move_file', args)})"
    return [text_block(said)]


def _resolved(done: dict[str, Any], field: str, given: str) -> str:
    """The path a change was made at, as the call resolved it (`sub/top/../made` is
    `sub/made`, by the text's own `..`), shown as every answer shows a name."""
    path = done.get(field)
    return quoting.name(path if isinstance(path, str) and path else given)


# --- metadata ---------------------------------------------------------------------------


def file_info(served: Served, args: dict[str, Any]) -> list[Content]:
    """get_file_info: the reference server's keys, then readkeeper's."""
    info = served.ask("stat", path=string(args, "path"))
    shown = {
        "size": info.get("size"),
        "created": info.get("created", "(not recorded by this filesystem)"),
        "modified": info.get("modified"),
        "accessed": info.get("accessed"),
        "isDirectory": info.get("kind") == "dir",
        "isFile": info.get("kind") == "file",
        "permissions": info.get("permissions"),
        "type": listings.kind_word(str(info.get("kind"))),  # as the listings name it
    }
    if "read_by_session" in info:
        shown["readThisSession"] = info["read_by_session"]
    lines = [
        f"{key}: {json.dumps(value) if isinstance(value, bool) else value}"
        for key, value in shown.items()
    ]
    return [text_block("\n".join(lines))]


def allowed_directories(served: Served, args: dict[str, Any]) -> list[Content]:
    """list_allowed_directories: the roots (and allowed paths) calls may reach."""
    roots = [quoting.name(r) for r in served.roots()]
    return [text_block("Allowed directories:\n" + "\n".join(roots))]


HANDLERS: dict[str, Callable[[Served, dict[str, Any]], list[Content]]] = {
    "read_file": read_text,
    "read_text_file": read_text,
    "read_media_file": read_media,
    "read_multiple_files": read_multiple,
    "write_file": write_file,
    "edit_file": edit_file,
    "create_directory": create_directory,
    "move_file": move_file,
    "get_file_info": file_info,
    "list_allowed_directories": allowed_directories,
    **listings.HANDLERS,
}
