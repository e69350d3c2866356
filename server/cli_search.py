"""`readkeeper grep`, `readkeeper glob` and `readkeeper ls`: the search tools for people
and scripts, on the same core as the agents' (the protocol result with `--json`)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .cli_numbers import whole_number
from .errors import ReadkeeperError, shown_content
from .exit_status import DONE, NOTHING_FOUND, REFUSED, root_refusal
from .files.reach import here
from .hints import answering, for_cli
from .quoting import wire_json
from .search.shown import escapes_note, lines
from .terminal_text import show

if TYPE_CHECKING:
    from .core import Readkeeper

COMMANDS = ("grep", "glob", "ls")


def add_commands(commands: Any) -> None:
    """Add the commands to the CLI's subparsers."""
    grep = commands.add_parser("grep", help="search files for a regular expression")
    grep.add_argument("pattern")
    grep.add_argument("path", nargs="?", default=None, help="folder or file (default: root)")
    grep.add_argument("--glob", help='only files matching, e.g. "*.py"')
    grep.add_argument(
        "-C", "--context", type=whole_number, default=0, help="lines around each match"
    )
    grep.add_argument("-i", "--ignore-case", action="store_true")
    grep.add_argument("-U", "--multiline", action="store_true", help="match across lines")
    grep.add_argument("-l", "--files", action="store_true", help="only the files that match")
    grep.add_argument("-c", "--count", action="store_true", help="matches per file")
    grep.add_argument("--max-matches", type=whole_number, help="most matches shown")
    grep.add_argument("--offset", type=whole_number, default=0, help="matches skipped (the rest)")
    glob = commands.add_parser("glob", help="files whose path matches a glob, newest first")
    glob.add_argument("pattern")
    glob.add_argument("path", nargs="?", default=None)
    glob.add_argument("--offset", type=whole_number, default=0)
    ls = commands.add_parser("ls", help="a folder's entries, with kinds and sizes")
    ls.add_argument("path", nargs="?", default=".")
    ls.add_argument("--depth", type=whole_number, default=1)
    ls.add_argument("--offset", type=whole_number, default=0)
    for parser in (grep, glob, ls):
        parser.add_argument("--root", default=None, help="workspace root (default: here)")
        parser.add_argument("--json", action="store_true", help="the protocol result as JSON")


def open_core(root: str | None) -> Readkeeper | None:
    """A command's core for `--root` (default: here), the warnings of its settings said
    on stderr; None, after the usage error, when `--root` names no folder."""
    from .core import Readkeeper

    refused = root_refusal(root)
    if refused:
        show(refused, sys.stderr)
        return None
    core = Readkeeper(roots=[root or here()])
    for warning in core.settings_warnings:
        show(warning, sys.stderr)
    return core


def run(args: argparse.Namespace) -> int:
    """Serve one of the commands; the exit status (exit_status.py: 1 nothing found, 2
    refused)."""
    from . import calls

    core = open_core(args.root)
    if core is None:
        return REFUSED
    method, params = _params(args)
    with answering(method, params):
        try:
            result = calls.call(core, method, params)
        except ReadkeeperError as exc:
            return say_refused(exc, args.json)
        if args.json:
            print(wire_json(result))
        else:
            for line in lines(method, result, core.workspace.display):
                show(line, sys.stdout)
            escaped = escapes_note(method, result, core.workspace.display)
            for note in filter(None, [escaped, result.get("note")]):
                show(f"readkeeper: note: {for_cli(note)}", sys.stderr)
        found = result.get("matches") or result.get("files") or result.get("counts")
        found = found or result.get("paths") or result.get("entries")
        return DONE if found else NOTHING_FOUND


def _params(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    if args.command == "grep":
        output = "files" if args.files else "counts" if args.count else "matches"
        params = {
            "pattern": args.pattern,
            "path": args.path,
            "glob": args.glob,
            "context": args.context,
            "case_sensitive": not args.ignore_case,
            "multiline": args.multiline,
            "output": output,
            "max_matches": args.max_matches,
            "offset": args.offset,
        }
        return "grep", {k: v for k, v in params.items() if v is not None}
    if args.command == "glob":
        params = {"pattern": args.pattern, "path": args.path, "offset": args.offset}
        return "glob", {k: v for k, v in params.items() if v is not None}
    return "list", {"path": args.path, "depth": args.depth, "offset": args.offset}


def say_refused(exc: ReadkeeperError, as_json: bool) -> int:
    """A refusal as every command prints it: one line on stderr in the command line's
    words, or with `--json` the error object on stdout; the exit status."""
    if as_json:
        print(wire_json({"error": {"message": exc.message, "data": exc.to_data()}}))
    else:
        said = for_cli(exc.message, shown_content(exc.data))
        show(f"readkeeper: {exc.kind}: {said}", sys.stderr)
    return REFUSED
