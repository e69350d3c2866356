"""A pygls 2 language server with no features: the yardstick for readkeeper's start-up.

`bench_read.py` starts it with the same Python as `readkeeper serve` and times how long
it takes to answer `initialize`. It imports what any pygls server must (pygls and
lsprotocol) and nothing else.

With `--echo` it also answers a `bench/echo` request with a stub-sized result, straight
from the event loop: the round trip of a request that does no work at all, i.e. the
floor pygls' stdio transport puts under every readkeeper request.
"""

import sys
from typing import Any

from pygls.lsp.server import LanguageServer

server = LanguageServer("bare-pygls", "0")

if "--echo" in sys.argv:

    @server.feature("bench/echo")
    def echo(ls: LanguageServer, params: Any) -> dict[str, Any]:
        return {"type": "file_unchanged", "file": {"file_path": "/bench/echo.py"}}


if __name__ == "__main__":
    server.start_io()
