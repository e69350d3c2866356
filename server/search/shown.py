"""grep, glob and list results as text, as grep, find and ls print theirs: what the CLI
prints and the MCP tools' text (compact: a path and a line each, no JSON keys).

Every byte from a file or a file name stays inside the structure: a name that is not
plain (quoting.name: a space, a colon, a control character...) is shown JSON-quoted, and
control characters in a line are shown escaped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from readkeeper import quoting


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
    if result.get("note"):
        shown.append(f"({result['note']})")
    if result.get("next"):
        shown.append(f"next: {quoting.json_text(result['next'])}")
    return "\n".join(shown) if shown else "(nothing found)"


def _name(name: str) -> str:
    # The one rule for names (quoting.py): a name with a space or a colon would let a
    # file named `auth.py:2:    return False` forge a match of another file.
    return quoting.name(name)


def _text(line: str) -> str:
    line = quoting.marks(line)  # a `[line cut:` of the file's own: never readkeeper's marker
    return "".join(c if c.isprintable() or c == "\t" else json.dumps(c)[1:-1] for c in line)
