"""`readkeeper stats [--html FILE]`: the counters and journal of the readkeeper that serves
this workspace (the editor's, or `readkeeper serve` under Neovim), reached over its
attach socket (attach/), and the picture of its session as one HTML file (picture.py).

A CLI process of its own would have read nothing: the session worth a picture lives in
the server the agent calls, so the command asks that one, as `readkeeper mcp` does, with
the same checks of the socket and within the same roots.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .errors import ReadkeeperError, shown_content
from .exit_status import REFUSED, root_refusal
from .quoting import name, wire_json
from .terminal_text import show


def add_command(commands: Any) -> None:
    """The `stats` command and its options."""
    stats = commands.add_parser(
        "stats",
        help="the counters and the picture of the session of the readkeeper serving this "
        "workspace (the editor's)",
    )
    stats.add_argument("--root", default=None, help="workspace root (default: current folder)")
    stats.add_argument(
        "--html",
        metavar="FILE",
        help="write the picture of the session (what the agent read, when, at what cost, "
        "what readkeeper saved) as a self-contained HTML file",
    )


def run(args: argparse.Namespace) -> int:
    """Fetch the running server's stats (with its journal); print them, or write the page."""
    from .attach.client import AttachClient

    refused = root_refusal(args.root)
    if refused:
        show(refused, sys.stderr)
        return REFUSED
    root = os.path.realpath(args.root or os.getcwd())
    try:
        client = AttachClient.connect([root], viewer=True)
    except ReadkeeperError as exc:
        _refused(exc)
        return REFUSED
    if client is None:
        show(
            f"readkeeper: no readkeeper serves {name(root)}: the stats and the picture are of "
            "a running server's session. Open the folder in the editor (VS Code, or Neovim "
            "with readkeeper), or pass --root with the folder it serves.",
            sys.stderr,
        )
        return REFUSED
    try:
        stats = client.call("stats", {"history": True})
    except ReadkeeperError as exc:
        _refused(exc)
        return REFUSED
    finally:
        client.close()
    if not args.html:
        # file names may hold terminal controls, which JSON leaves be
        show(wire_json(stats, indent=2), sys.stdout)
        return 0
    from .picture import page

    try:
        write_whole(args.html, page(stats, f"readkeeper: the session in {root}"))
    except (OSError, UnicodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "the page would not encode"
        show(f"readkeeper: cannot write {name(args.html)}: {why}.", sys.stderr)
        return REFUSED
    events = len(stats.get("history", {}).get("events", []))
    show(f"readkeeper: wrote the picture of {events} calls to {name(args.html)}", sys.stderr)
    return 0


def _refused(exc: ReadkeeperError) -> None:
    """The server's refusal on one line, as the other commands print theirs (its
    message may name files: escaped on a terminal)."""
    from .hints import for_cli

    show(f"readkeeper: {exc.kind}: {for_cli(exc.message, shown_content(exc.data))}", sys.stderr)


def write_whole(path: str, text: str) -> None:
    """Replace the file at `path` with `text`, whole or not at all: the page goes to a
    temporary file beside it, which takes the name only once written, so a failure (a
    full disk, a name that will not encode) leaves an earlier page as it was. A path that
    is not a regular file (`/dev/stdout`, a pipe) is written to as it is."""
    import tempfile

    if os.path.exists(path) and not os.path.isfile(path):
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
        return
    data = text.encode("utf-8")
    folder, base = os.path.split(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(prefix=f".{base[:100]}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(temporary, 0o644 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
