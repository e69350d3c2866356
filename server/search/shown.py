"""grep, glob and list results as text, as grep, find and ls print theirs: what the CLI
prints and the MCP tools' text (compact: a path and a line each, no JSON keys).

Every byte from a file or a file name stays inside the structure: a name that is not
plain (quoting.name: a space, a colon, a control character...) is shown JSON-quoted, and
a line is shown as a read shows it (quoting.text_line: its line breaks and a cut
marker's `[` escaped, and a note naming the lines that hold such an escape).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from readkeeper import errors, quoting

LISTED = 20  # lines named in the note of escapes (as a read's note names them)


def lines(method: str, result: dict[str, Any], display: Callable[[str], str] = str) -> list[str]:
    """The result of `method` (grep, glob, list) as lines; `display` shortens paths."""
    if method == "grep":
        if "files" in result:
            return [_name(display(p)) for p in result["files"]]
        if "counts" in result:
            return [f"{_name(display(c['file_path']))}:{c['count']}" for c in result["counts"]]
        out = []
        # With context, groups of lines that do not follow on are parted by "--", as
        # grep -C parts them: no line left out passes for one shown.
        grouped = any(match.get("context") for match in result["matches"])
        before: tuple[str, int] | None = None
        for match in result["matches"]:
            if grouped and before and before != (match["file_path"], match["line"] - 1):
                out.append("--")
            before = (match["file_path"], match["line"])
            mark = "-" if match.get("context") else ":"
            path = _name(display(match["file_path"]))
            out.append(f"{path}{mark}{match['line']}{mark}{_text(match['text'])}")
        return out
    if method == "glob":
        return [_name(display(p)) for p in result["paths"]]
    marks = {"dir": "/", "symlink": "@", "other": "|"}
    return [
        f"{e.get('size', '-')!s:>10}  {_name(e['name'])}{marks.get(e['kind'], '')}"
        for e in result["entries"]
    ]


def text(method: str, result: dict[str, Any]) -> str:
    """The result as one text, its note (where it stopped, the call for the rest) last."""
    shown = lines(method, result)
    if method == "list" and result.get("path"):
        shown.insert(0, f"{_name(result['path'])}:")
    note = " ".join(filter(None, [escapes_note(method, result), result.get("note")]))
    if note:
        shown.append(f"({note})")
    if result.get("next"):
        shown.append(f"next: {quoting.json_text(result['next'])}")
    return "\n".join(shown) if shown else "(nothing found)"


def _name(name: str) -> str:
    # The one rule for names (quoting.py): a name with a space or a colon would let a
    # file named `auth.py:2:    return False` forge a match of another file.
    return quoting.name(name)


def _text(line: str) -> str:
    # As a read shows it (quoting.text_line): a line break escaped, and a `[line cut:` of
    # the file's own never readkeeper's marker; the rest as the file has it.
    return quoting.text_line(line)


def escapes_note(
    method: str, result: dict[str, Any], display: Callable[[str], str] = str
) -> str | None:
    """The note naming the matches shown with escapes, as a read's note names its lines:
    a file's own `\\r` or `\\x5b` looks just like an escape, so only the lines named
    here hold one. At most LISTED are named, each cut in its middle when long
    (errors.shown_name): the note is not counted in the page's budget, so it is bounded."""
    if method != "grep" or "matches" not in result:
        return None
    held = [
        f"{errors.shown_name(display(match['file_path']))}:{match['line']}"
        for match in result["matches"]
        if quoting.text_line(match["text"]) != match["text"]
    ]
    if not held:
        return None
    more = f" and {len(held) - LISTED} more" if len(held) > LISTED else ""
    return (
        f"Lines {', '.join(held[:LISTED])}{more} hold text shown escaped: line breaks other "
        "than LF (a lone CR, U+2028, ...) as \\r, \\u2028, ..., and a '[' opening "
        "cut-marker words as \\x5b; in any other line such text is the file's own. An "
        "edit's old_string may give them as shown."
    )
