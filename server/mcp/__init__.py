"""`readkeeper mcp`: readkeeper's tools for any MCP client (package `readkeeper.mcp`).

A folder of its own, like each front end: `tools.py` (schemas generated from the
protocol, annotations), `render.py` (results as MCP content), `server.py` (the SDK
server, roots, the choice between attaching to the editor's server and a core of our
own), `stdio.py` (stdin and stdout served on the event loop), `quick.py` (quick reads
answered from their stdin line, before the SDK), `early.py` (the handshake answered
while the SDK loads, from the SDK's own answers that `handshake.py` generates into
`handshake_answers.py`), `http_limits.py` (what HTTP
clients can make it hold at once), `http_cancels.py` (cancels kept from the SDK over
HTTP), and this module's `main`
(stdio, or streamable HTTP on loopback). `import mcp` inside it is absolute, so it
reaches the SDK, never this package.
"""

from __future__ import annotations

import logging
import socket
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..exit_status import REFUSED, root_refusal
from ..terminal_text import show
from .early import EarlyAnswers

# The SDK and what imports it are loaded in `main`, once the handshake is being
# answered without them (early.py).
if TYPE_CHECKING:
    from .server import McpFrontEnd

log = logging.getLogger("readkeeper")

DEFAULT_PORT = 8765
HTTP_PATH = "/mcp"
# Sessions open at once (the SDK's default is 10,000): one agent needs a few, and each
# holds its server task, streams and read-state; past it, the least recently used idle
# one is ended to make room (http_sessions.py).
MAX_SESSIONS = 256


def main(
    roots: Sequence[str] = (),
    http: bool = False,
    port: int = DEFAULT_PORT,
    attach: bool = True,
    tools: str = "readkeeper",
) -> int:
    """Serve MCP until the client leaves (stdio) or the process is stopped (HTTP)."""
    refused = next(filter(None, map(root_refusal, roots)), None)
    if refused:
        show(refused, sys.stderr)  # a name's controls escaped on a terminal
        return REFUSED
    early = None if http else EarlyAnswers.start(tools)
    said = _say_settings_warnings()
    from ..loading import loading

    with loading():
        import anyio

        from ..read import token_table
        from ..read.tokens import DEFAULT_ENCODING
        from .server import McpFrontEnd

    if not attach:  # its reads are counted here: load the token table from the start
        token_table.preload(DEFAULT_ENCODING)
    front = McpFrontEnd(roots, attach=attach, tools=tools, settings_warnings=said)
    try:
        if http:
            return _serve_http(front, port)
        anyio.run(_serve_stdio, front, early)
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        front.close()


def _say_settings_warnings() -> list[str]:
    """The environment's settings warnings on stderr, as `serve` and the CLI say them
    (stdout is the protocol's); `stats` carries them too, and a client that reads the
    server's log is sent them (logs.py)."""
    from ..settings import resolve_settings

    said = resolve_settings(None)[1]
    for warning in said:
        print(warning, file=sys.stderr, flush=True)
    return said


async def _serve_stdio(front: McpFrontEnd, early: EarlyAnswers | None) -> None:
    from .quick import QuickCalls
    from .server import build_server
    from .stdio import file_streams, pipe_streams

    server = build_server(front)
    async with pipe_streams(early) as pipes:
        if pipes is not None:
            quick = QuickCalls(front, server)
            pipes[0].answer, pipes[0].later = quick.answer, quick.later
            await _serve_on(server, pipes)
            return
    async with file_streams() as files:
        await _serve_on(server, files)


async def _serve_on(server: Any, streams: tuple[Any, Any]) -> None:
    from mcp.server.stdio import stdio_server

    # The SDK only iterates stdin and writes and flushes stdout (stdio.py).
    stdin, stdout = streams
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _serve_http(front: McpFrontEnd, port: int) -> int:
    import uvicorn

    from .http_cancels import KeepCancels
    from .http_deadline import Waiting, deadlined
    from .http_framing import FramedH11
    from .http_limits import InFlightLimit
    from .http_sessions import SessionRoom
    from .own_user import OwnUserOnly
    from .server import build_server

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        print(
            f"readkeeper: cannot listen on 127.0.0.1:{port} ({exc.strerror}); "
            "choose another with --port (0 picks a free one).",
            file=sys.stderr,
        )
        return REFUSED
    sock.listen(128)  # connections made once the URL is printed wait for uvicorn
    bound = sock.getsockname()[1]
    server = build_server(front)
    app = server.streamable_http_app(
        streamable_http_path=HTTP_PATH,
        max_sessions=MAX_SESSIONS,
        transport_security=door_checks(bound),
    )
    # Host and Origin stop web pages; OwnUserOnly, other users (first: a refused request
    # takes no place among those in flight); KeepCancels, the SDK's cancel of a call
    # whose work runs on (http_cancels.py).
    waiting = Waiting()
    # SessionRoom: room for a new session at the cap, and the SDK's refusals in
    # readkeeper's shape (http_sessions.py).
    room = SessionRoom(app, server.session_manager)
    guarded = OwnUserOnly(InFlightLimit(KeepCancels(room), waiting))
    # No proxy headers: a forwarded address would stand in for the socket's own peer.
    # Each request must arrive whole within a deadline (http_deadline.py), framed one
    # way only and declared within the body cap (http_framing.py).
    protocol = deadlined(FramedH11, waiting)
    # log_config None: uvicorn's records go to readkeeper's own handler, one line each
    # (its own formatter wrote "WARNING:  Invalid HTTP request received.", round 44).
    config = uvicorn.Config(
        guarded,
        log_level="warning",
        log_config=None,
        lifespan="on",
        proxy_headers=False,
        http=protocol,
    )
    print(f"readkeeper MCP server on http://127.0.0.1:{bound}{HTTP_PATH}", file=sys.stderr)
    sys.stderr.flush()
    uvicorn.Server(config).run(sockets=[sock])
    return 0


def door_checks(port: int) -> Any:
    """The SDK's Host and Origin checks for this server's own address only: its
    default `127.0.0.1:*` took any text after the colon (`127.0.0.1:PORT@evil.example`,
    attack round 23)."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = [f"127.0.0.1:{port}", f"localhost:{port}"]
    return TransportSecuritySettings(
        allowed_hosts=hosts, allowed_origins=[f"http://{host}" for host in hosts]
    )


__all__ = ["DEFAULT_PORT", "door_checks", "main"]
