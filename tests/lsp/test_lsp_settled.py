"""A request counts as in flight (`ReadkeeperProtocol.in_flight`, what the stream reader
holds back for, transport.py) until its answer is written, cancelled or not: a cancel
lets started work run to its end (cancels.py), so the request is settled when that
work has ended and been answered, never at the cancel.

In-process, on the server readkeeper serves (lsp/app.py), with messages handed to its
`receive` as the stream reader hands them and its answers captured where they are
written: the moment a cancel arrives is chosen here, not timed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from readkeeper.lsp.app import _build
from readkeeper.lsp.endpoint import ReadkeeperProtocol


class Wire:
    """The writer the protocol writes its framed answers to."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.messages.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

    def answered(self, msg_id: Any) -> bool:
        return any(m.get("id") == msg_id and "method" not in m for m in self.messages)


async def _answer(wire: Wire, msg_id: Any) -> None:
    while not wire.answered(msg_id):
        await asyncio.sleep(0.01)


def _request(msg_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


def _cancel(msg_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}}


async def _serve(workspace: Path) -> None:
    server = _build()
    endpoint = server.endpoint
    assert isinstance(endpoint, ReadkeeperProtocol)
    wire = Wire()
    endpoint.set_writer(wire, include_headers=True)  # type: ignore[arg-type]
    try:
        await _cancels(server, endpoint, wire, workspace)
    finally:
        # `shutdown` closes the core, whose watcher `initialized` started: its threads
        # must not outlive the test in this worker process (test_watch_core counts them).
        endpoint.receive(_request(99, "shutdown", None))
        await _answer(wire, 99)
        server.shutdown()


async def _cancels(server: Any, endpoint: ReadkeeperProtocol, wire: Wire, workspace: Path) -> None:
    hello = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
    endpoint.receive(_request(0, "initialize", hello))
    await _answer(wire, 0)
    endpoint.receive({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    a = workspace / "a.txt"
    a.write_text("one\n")
    endpoint.receive(_request(1, "readkeeper/read", {"file_path": str(a)}))
    await _answer(wire, 1)
    # Cancelled before its handler ran: answered `cancelled` a moment later.
    endpoint.receive(_request(2, "readkeeper/write", {"file_path": str(a), "content": "x\n"}))
    endpoint.receive(_cancel(2))
    assert wire.answered(2) or 2 in endpoint.in_flight, "settled before it was answered"
    await _answer(wire, 2)
    # Cancelled once its work was handed to a worker: it runs on, and is answered with
    # what it did; until then it is in flight.
    params = {"file_path": str(a), "old_string": "one", "new_string": "ONE"}
    endpoint.receive(_request(3, "readkeeper/edit", params))
    while not wire.answered(3) and not endpoint.works._by_request:
        await asyncio.sleep(0)
    endpoint.receive(_cancel(3))
    assert wire.answered(3) or 3 in endpoint.in_flight, "settled while its work ran"
    await _answer(wire, 3)
    assert not endpoint.in_flight, endpoint.in_flight


def test_a_cancelled_request_is_in_flight_until_it_is_answered(workspace: Path) -> None:
    asyncio.run(_serve(workspace))
