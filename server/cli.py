"""`readkeeper serve | mcp | read | demo | settings`: the command-line front end."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Sequence

from . import __version__
from .cli_numbers import whole_number
from .cli_search import COMMANDS as SEARCH_COMMANDS
from .cli_search import add_commands as add_search_commands
from .cli_search import open_core
from .cli_search import run as run_search
from .cli_stats import add_command as add_stats_command
from .cli_terminal import Parser, stderr_log_handler, terminal_output
from .errors import ReadkeeperError, fault_reason
from .exit_status import REFUSED
from .hints import answering, for_cli, given_root
from .loading import loading
from .peers import loopback_refusal, unsupported
from .quoting import wire_json
from .terminal_text import show

_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _log_level(value: str) -> str:
    if value.upper() not in _LOG_LEVELS:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a log level; use one of {', '.join(_LOG_LEVELS)}"
        )
    return value.upper()


def _host_port(value: str) -> tuple[str, int]:
    host, colon, port = value.rpartition(":")
    if not colon or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    _port(port)
    # Other machines are not the user: only this one may connect (SECURITY.md).
    why = loopback_refusal(host)
    if why:
        raise argparse.ArgumentTypeError(
            f"readkeeper listens on loopback only, and {why}; use 127.0.0.1:{port}"
        )
    return host.removeprefix("[").removesuffix("]"), int(port)


def _port(value: str) -> int:
    """A TCP port (0: any free one), or a usage error saying the range."""
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port: use 0 to 65535 (0: any)")
    return port


def _network_refusal(front: str) -> int | None:
    """Exit status 2, after saying why, where no connection's user can be checked."""
    why = unsupported()
    if why is None:
        return None
    show(f"readkeeper: {front} {why}; use stdio (the default) instead.", sys.stderr)
    return REFUSED


def build_parser() -> argparse.ArgumentParser:
    """The `readkeeper` command line: its options and commands."""
    parser = Parser(
        prog="readkeeper",
        description="The file layer for editor-hosted AI coding agents (a language server).",
    )
    parser.add_argument("--version", action="version", version=f"readkeeper {__version__}")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        type=_log_level,
        metavar="LEVEL",
        help=f"what is logged to stderr: {', '.join(_LOG_LEVELS)} (default WARNING)",
    )
    commands = parser.add_subparsers(dest="command")

    serve = commands.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--stdio", action="store_true", help="speak LSP on stdin/stdout")
    serve.add_argument("--tcp", type=_host_port, metavar="HOST:PORT", help="listen on TCP")

    read = commands.add_parser("read", help="read a file as an agent would")
    read.add_argument("path")
    read.add_argument("--offset", type=whole_number, help="first line (1-based)")
    read.add_argument("--limit", type=whole_number, help="number of lines")
    read.add_argument("--pages", help='PDF pages, e.g. "3" or "1-5"')
    read.add_argument("--symbol", help='a symbol\'s lines, e.g. "Reader.read" (source files)')
    read.add_argument(
        "--line-format", choices=("cat-n", "anchors"), help="how lines are shown (cat-n)"
    )
    read.add_argument(
        "--render", action="store_true", help="PDF pages rendered to PNG files (with --pages)"
    )
    read.add_argument(
        "--include-images", action="store_true", help="a notebook's image outputs inline"
    )
    read.add_argument(
        "--estimate", action="store_true", help="only what the read would cost (lines, tokens)"
    )
    read.add_argument(
        "--force", action="store_true", help="the content even when unchanged (the default here)"
    )
    read.add_argument(
        "--out", metavar="FOLDER", help="with --render: the folder the PNG pages are copied to"
    )
    read.add_argument("--root", default=None, help="workspace root (default: current folder)")
    read.add_argument("--json", action="store_true", help="print the protocol result as JSON")

    add_search_commands(commands)
    add_stats_command(commands)

    mcp = commands.add_parser(
        "mcp",
        help="serve the tools over MCP (stdio by default); attaches to the editor's readkeeper "
        "for the workspace when one runs",
    )
    mcp.add_argument(
        "--root",
        action="append",
        default=[],
        help="workspace root, repeatable (default: the client's MCP roots, else the current "
        "folder; never / or your home folder unless named here)",
    )
    mcp.add_argument("--http", action="store_true", help="streamable HTTP on 127.0.0.1")
    mcp.add_argument("--port", type=_port, default=8765, help="HTTP port (default 8765; 0: any)")
    mcp.add_argument(
        "--standalone",
        action="store_true",
        help="never attach to the editor's readkeeper: run a core of its own",
    )
    mcp.add_argument(
        "--tools",
        choices=("readkeeper", "filesystem"),
        default="readkeeper",
        help="readkeeper's own tools (default), or the 14 tools of the reference MCP "
        "filesystem server (a drop-in for @modelcontextprotocol/server-filesystem)",
    )

    commands.add_parser("demo", help="play a short agent session against a real server")
    commands.add_parser("settings", help="print the settings table (Markdown)")
    return parser


# The commands that take one `--root` and print next steps naming commands (hints.for_cli).
_ROOTED = ("read", "stats", *SEARCH_COMMANDS)


def main(argv: Sequence[str] | None = None) -> int:
    """The `readkeeper` console script (the language server when no command is given);
    returns the exit status."""
    _absolute_path_only()
    terminal_output()  # Python's own stderr lines escaped on a terminal, as ours are
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level, handlers=[stderr_log_handler()])
    if args.command is None and sys.stdin.isatty():
        parser.print_help()  # a person at a terminal, not an editor speaking LSP
        return 0
    try:
        with given_root(getattr(args, "root", None) if args.command in _ROOTED else None):
            return _run(args)
    except BrokenPipeError:
        # The reader stopped early (`readkeeper read big.py | head`): not an error of
        # ours. Point stdout at nothing so that the flush at exit cannot fail again.
        _stdout_to_nothing()
        return 128 + signal.SIGPIPE  # what a shell reports for a pipe closed this way
    except OSError as exc:
        if not _unwritable(exc):
            return _fault(exc, args)
        _stdout_to_nothing()
        show(f"readkeeper: cannot write the output ({exc.strerror}).", sys.stderr)
        return REFUSED
    except Exception as exc:
        return _fault(exc, args)


def _fault(exc: Exception, args: argparse.Namespace) -> int:
    """A fault of readkeeper's own: one line (`internal` and the exception as a reply
    names it, errors.fault_reason), never a traceback (the log's DEBUG level has it), and
    status 2, as any refusal (docs/cli.md)."""
    logging.getLogger("readkeeper").debug("the command failed unexpectedly", exc_info=exc)
    reason = fault_reason(exc)
    message = (
        f"a fault in readkeeper ({reason}); it is not something the command did wrong, "
        "and --log-level DEBUG shows where it happened."
    )
    if getattr(args, "json", False):
        data = {"kind": "internal", "reason": reason}
        print(wire_json({"error": {"message": message, "data": data}}))
    else:
        show(f"readkeeper: internal: {message}", sys.stderr)
    return REFUSED


def _unwritable(exc: OSError) -> bool:
    """Whether `exc` is stdout refusing what was printed (a full disk, a device error)."""
    import errno

    return exc.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG)


def _stdout_to_nothing() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)


def _absolute_path_only() -> None:
    """Drop the empty and relative entries of PATH. They name the current folder, and the
    programs readkeeper runs by name (git, watchman) run in the workspace: a trailing
    ':' would otherwise run a repository's own `git` (SECURITY.md)."""
    entries = os.environ.get("PATH", "").split(os.pathsep)
    kept = [entry for entry in entries if os.path.isabs(entry)]
    if kept != entries:
        os.environ["PATH"] = os.pathsep.join(kept)


# How long a thread may hold the GIL while another waits for it (CPython's default is
# 5 ms). Beside a costly pure-Python step (difflib, an outline walk) on a worker thread,
# the event loop waited up to that long each time it wanted the GIL back: at 0.2 ms the
# 3-line read's p95 beside 1 s of difflib went from 27 to 8 ms, beside the nested-JS
# outline from 183 to 57 ms, and the costly step was no slower (bench/bench_gil.py).
SWITCH_INTERVAL_S = 0.0002


def _run(args: argparse.Namespace) -> int:
    if args.command in (None, "serve", "mcp"):
        sys.setswitchinterval(SWITCH_INTERVAL_S)
    missing = _missing_stream(args)
    if missing:
        why = _WIRE.get(args.command, "the command prints its answer there")
        show(f"readkeeper: {missing} is closed, and {why}.", sys.stderr)
        return REFUSED
    if args.command in (None, "serve"):
        tcp = getattr(args, "tcp", None)
        refused = _network_refusal("serve --tcp") if tcp else None
        if refused is not None:
            return refused
        with loading():
            from .lsp import app  # noqa: F401  (pygls, lsprotocol and the core)
        from .lsp import serve

        return serve(tcp)
    if args.command == "read":
        return _read(args)
    if args.command in SEARCH_COMMANDS:
        return run_search(args)
    if args.command == "stats":
        from .cli_stats import run as run_stats

        return run_stats(args)
    if args.command == "settings":
        from .render import settings_table

        show(settings_table(), sys.stdout)
        return 0
    if args.command == "mcp":
        refused = _network_refusal("mcp --http") if args.http else None
        if refused is not None:
            return refused
        with loading():
            from .mcp import main as mcp

        return mcp(
            args.root,
            http=args.http,
            port=args.port,
            attach=not args.standalone,
            tools=args.tools,
        )
    if args.command == "demo":
        from .demo import main as demo

        return demo()
    return 2


_WIRE = {
    None: "the language server speaks LSP on stdin and stdout (an editor starts it)",
    "serve": "the language server speaks LSP on stdin and stdout (an editor starts it; "
    "--tcp HOST:PORT listens instead)",
    "mcp": "the MCP server speaks on stdin and stdout (an MCP client starts it; --http "
    "listens instead)",
}


def _missing_stream(args: argparse.Namespace) -> str | None:
    """The stream ("stdin", "stdout") a server would speak on, or a command print its
    answer to, when it is not open. Checked first: the next file opened would take its
    descriptor and be spoken to instead."""
    server = args.command in _WIRE
    if server and (getattr(args, "tcp", None) or getattr(args, "http", False)):
        return None
    for fd, name in ((0, "stdin"), (1, "stdout")):
        if fd == 0 and not server:
            continue
        try:
            os.fstat(fd)
        except OSError:
            return name
    return None


def _read(args: argparse.Namespace) -> int:
    from .cli_media import for_the_command_line, kept_pages, needs_out
    from .cli_search import say_refused
    from .protocol import ReadParams, structure, unstructure

    refused = needs_out(args)
    if refused is not None:
        show(f"readkeeper: {refused.kind}: {for_cli(refused.message)}", sys.stderr)
        return REFUSED
    core = open_core(args.root)
    if core is None:
        return REFUSED
    asked = {
        "file_path": args.path,
        "offset": args.offset,
        "limit": args.limit,
        "pages": args.pages,
        "symbol": args.symbol,
        "line_format": args.line_format,
        "render": args.render,
        "include_images": args.include_images,
        "estimate": args.estimate,
        "force": args.force,
    }
    # The call made, as its options were given (an option left out is not named again).
    with answering("read", {k: v for k, v in asked.items() if v is not None and v is not False}):
        try:
            # Through the protocol's converter, as a request is: one rule for every value.
            params = structure({k: v for k, v in asked.items() if v is not None}, ReadParams)
            result = unstructure(core.read(params))
            result = {**result, "file": kept_pages(result["file"], args)}  # --out, --json too
        except ReadkeeperError as exc:
            return say_refused(exc, args.json)
        if args.json:  # exact: JSON escapes what it must, and a program reads it
            print(wire_json(result))
            return 0
        file = result["file"]
        if result["type"] == "text":  # the lines alone on stdout, as `cat -n` would print them
            if file["content"]:
                show(file["content"], sys.stdout)
            if file.get("note"):
                show(f"readkeeper: note: {for_cli(file['note'])}", sys.stderr)
        else:  # PDF text, notebook cells, an outline, an image's facts: as an agent reads them
            from . import render
            from .rendered_tokens import recounted

            # The count said is of the text printed, not of the JSON `--json` prints.
            result = {**result, "file": for_the_command_line(file, args, result["type"])}
            counted = recounted(result, core.tokens.count, steps=for_cli)
            show(render.read(counted, for_cli), sys.stdout)
        return 0
