"""A cancelled change is answered honestly over LSP: either it did not happen and the
answer says `cancelled`, or it happened and the answer is its real result (LSP lets a
server answer a cancelled request with its result).

The moments are made, not timed: a request and its `$/cancelRequest` sent in one write
are read together (the cancel comes before the work starts); an edit of a dirty editor
buffer waits for the client's answer to `workspace/applyEdit` while it holds the file's
lock, so a cancel sent then finds it running, and a change of another file under the
same lock stripe queued behind it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from raw_lsp import RawServer

from readkeeper.files.locks import lock_for

CAPABILITIES = {
    "window": {"showMessage": {}},
    "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}},
}
APPLY = "workspace/applyEdit"


@pytest.fixture
def raw(workspace: Path) -> Iterator[RawServer]:
    server = RawServer()
    server.initialize(
        workspace,
        capabilities=CAPABILITIES,
        initializationOptions={"edit_open_buffers": "apply"},
    )
    yield server
    server.close()


def framed(message: dict[str, Any]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def cancel(msg_id: str) -> dict[str, Any]:
    return {"method": "$/cancelRequest", "params": {"id": msg_id}}


def answer_to(raw: RawServer, msg_id: str) -> dict[str, Any]:
    """The reply to `msg_id`, whether it came already or is still to come."""
    for seen in raw.seen_responses:
        if seen.get("id") == msg_id:
            return seen
    return raw.response(msg_id)


def barrier(raw: RawServer, name: str) -> None:
    """Every message sent before is handled: stats is answered on the event loop, in order."""
    assert "result" in raw.request(name, "readkeeper/stats", {})


def server_request(raw: RawServer, method: str) -> dict[str, Any]:
    """The next request of the server's that is `method`, left unanswered."""
    while True:
        message = raw.receive()
        if message.get("method") == method and "id" in message:
            return message
        if "method" not in message:
            raw.seen_responses.append(message)
        elif "id" in message:
            raw.send({"id": message["id"], "result": None})


def read(raw: RawServer, path: Path, session: str = "") -> None:
    params = {"file_path": str(path), "session": session}
    reply = raw.request(f"read {path.name} {session}", "readkeeper/read", params)
    assert "result" in reply, reply


# The editor's open documents, by URI: (text, version).
DOCUMENTS: dict[str, tuple[str, int]] = {}


def open_dirty(raw: RawServer, path: Path, disk: str, unsaved: str, session: str = "") -> None:
    """`path` open in the editor with unsaved text: changes of it go through applyEdit."""
    path.write_text(disk)
    document = {"uri": path.as_uri(), "languageId": "python", "version": 1, "text": unsaved}
    DOCUMENTS[path.as_uri()] = (unsaved, 1)
    raw.notify("textDocument/didOpen", {"textDocument": document})
    read(raw, path, session)


def _offset(starts: list[int], position: dict[str, int]) -> int:
    return starts[position["line"]] + position["character"]


def applied(raw: RawServer, apply: dict[str, Any], between: dict[str, Any] | None = None) -> None:
    """Answer `apply` as an editor does: the buffer changed (didChange), then `applied`
    (the server checks that the buffer holds the edit before it tells it as done);
    `between`, a message sent between the two."""
    for change in apply["params"]["edit"].get("documentChanges") or []:
        uri = change["textDocument"]["uri"]
        text, version = DOCUMENTS[uri]
        starts = [0]
        for line in text.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        edits = sorted(change["edits"], key=lambda e: _offset(starts, e["range"]["start"]))
        for edit in reversed(edits):
            first = _offset(starts, edit["range"]["start"])
            text = text[:first] + edit["newText"] + text[_offset(starts, edit["range"]["end"]) :]
        DOCUMENTS[uri] = (text, version + 1)
        identifier = {"uri": uri, "version": version + 1}
        raw.notify(
            "textDocument/didChange",
            {"textDocument": identifier, "contentChanges": [{"text": text}]},
        )
    if between is not None:
        raw.send(between)
    raw.send({"id": apply["id"], "result": {"applied": True}})


def honest(reply: dict[str, Any], changed: bool) -> None:
    """The reply agrees with what happened to the file."""
    if "error" in reply:
        assert reply["error"]["data"]["kind"] == "cancelled", reply
        assert not changed, f"answered cancelled, yet the change landed: {reply}"
    else:
        assert changed, f"answered with a result, yet nothing changed: {reply}"


# --- cancelled before the work starts: nothing changes ----------------------------------


def _requests(workspace: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    a = str(workspace / "a.txt")
    return {
        "edit": ("readkeeper/edit", {"file_path": a, "old_string": "one", "new_string": "ONE"}),
        "edit batch": (
            "readkeeper/edit",
            {"file_path": a, "edits": [{"old_string": "one", "new_string": "ONE"}]},
        ),
        "write": ("readkeeper/write", {"file_path": a, "content": "new\n"}),
        "patch": (
            "readkeeper/patch",
            {"file_path": a, "edits": [{"old_string": "one", "new_string": "ONE"}]},
        ),
        "move": ("readkeeper/move", {"source": a, "destination": str(workspace / "b.txt")}),
        "mkdir": ("readkeeper/mkdir", {"path": str(workspace / "made")}),
        "undo": ("readkeeper/undo", {}),
    }


def tree(workspace: Path) -> dict[str, str | None]:
    return {p.name: (p.read_text() if p.is_file() else None) for p in sorted(workspace.iterdir())}


@pytest.mark.parametrize("name", ["edit", "edit batch", "write", "patch", "move", "mkdir", "undo"])
def test_a_change_cancelled_before_it_starts_does_not_happen(
    raw: RawServer, workspace: Path, name: str
) -> None:
    a = workspace / "a.txt"
    a.write_text("zero\n")
    read(raw, a)
    # Something to undo, so that an undo that ran would show.
    done = raw.request("w", "readkeeper/write", {"file_path": str(a), "content": "one\ntwo\n"})
    assert "result" in done, done
    before = tree(workspace)
    method, params = _requests(workspace)[name]
    raw.send_raw(framed({"id": "c", "method": method, "params": params}) + framed(cancel("c")))
    reply = answer_to(raw, "c")
    assert reply["error"]["data"]["kind"] == "cancelled", reply
    assert tree(workspace) == before
    # The journal agrees: the one change to take back is the write before.
    undone = raw.request("u", "readkeeper/undo", {})
    assert "result" in undone, undone
    assert a.read_text() == "zero\n"


# --- cancelled while it runs: the answer is what it did --------------------------------


@pytest.mark.parametrize("name", ["edit", "write"])
def test_a_buffer_change_cancelled_while_the_editor_applies_it_is_answered_with_it(
    raw: RawServer, workspace: Path, name: str
) -> None:
    path = workspace / "open.py"
    open_dirty(raw, path, "x = 1\n", "x = 1\ny = 2\n")
    if name == "edit":
        params = {"file_path": str(path), "old_string": "y = 2", "new_string": "y = 3"}
    else:
        params = {"file_path": str(path), "content": "z = 0\n"}
    raw.send({"id": "c", "method": f"readkeeper/{name}", "params": params})
    apply = server_request(raw, APPLY)  # the change runs, waiting for the editor
    raw.send(cancel("c"))
    barrier(raw, "after cancel")
    applied(raw, apply)
    reply = answer_to(raw, "c")
    assert "result" in reply, f"the editor applied the change, yet: {reply}"
    assert reply["result"]["applied_to"] == "buffer"
    assert path.read_text() == "x = 1\n"  # the disk is the user's to save


def _stripe_mate(workspace: Path, name: str) -> Path:
    """A file of `workspace` whose lock stripe is `name`'s (files/locks.py)."""
    held = lock_for(os.path.realpath(workspace / name))
    for i in range(10_000):
        mate = workspace / f"mate{i}.txt"
        if lock_for(os.path.realpath(mate)) is held:
            return mate
    raise AssertionError("no file shares the stripe")


@pytest.mark.parametrize("name", ["edit", "edit batch", "write", "patch", "move", "undo"])
def test_a_disk_change_cancelled_while_it_waits_for_its_lock_is_answered_honestly(
    raw: RawServer, workspace: Path, name: str
) -> None:
    dirty = workspace / "open.py"
    # Another session's buffer edit holds the stripe's lock while the editor answers.
    open_dirty(raw, dirty, "x = 1\n", "x = 1\ny = 2\n", session="other")
    a = _stripe_mate(workspace, "open.py")
    a.write_text("zero\n")
    read(raw, a)
    done = raw.request("w", "readkeeper/write", {"file_path": str(a), "content": "one\ntwo\n"})
    assert "result" in done, done
    method, params = _requests(workspace)[name]
    for field in ("file_path", "source"):
        params = {**params, field: str(a)} if field in params else params
    holder = {"file_path": str(dirty), "old_string": "y = 2", "new_string": "y = 3"}
    holder["session"] = "other"
    raw.send({"id": "holder", "method": "readkeeper/edit", "params": holder})
    apply = server_request(raw, APPLY)
    before = tree(workspace)
    raw.send({"id": "c", "method": method, "params": params})
    barrier(raw, "queued")  # handed to a worker, which waits for the lock
    raw.send(cancel("c"))
    barrier(raw, "after cancel")
    applied(raw, apply)
    assert "result" in answer_to(raw, "holder")
    reply = answer_to(raw, "c")
    after = tree(workspace)
    honest(reply, after != before)
    if "result" in reply and name not in ("move", "undo"):  # undo takes it back
        undone = raw.request("u", "readkeeper/undo", {})
        assert "result" in undone, undone
        assert tree(workspace) == before


def test_a_change_running_at_shutdown_is_answered_with_what_it_did(
    raw: RawServer, workspace: Path
) -> None:
    """pygls cancels every request in flight at `shutdown`: one whose work started is
    answered with its result all the same."""
    path = workspace / "open.py"
    open_dirty(raw, path, "x = 1\n", "x = 1\ny = 2\n")
    params = {"file_path": str(path), "old_string": "y = 2", "new_string": "y = 3"}
    raw.send({"id": "c", "method": "readkeeper/edit", "params": params})
    apply = server_request(raw, APPLY)
    # The editor changes its buffer, then shuts the server down before it answers.
    applied(raw, apply, between={"id": "down", "method": "shutdown", "params": None})
    reply = answer_to(raw, "c")
    assert "result" in reply, f"the editor applied the change, yet: {reply}"
    assert "error" not in answer_to(raw, "down")


def test_a_cancel_naming_a_request_of_the_servers_is_ignored(
    raw: RawServer, workspace: Path
) -> None:
    """pygls keeps the server's own requests (applyEdit) in the table a cancel looks in:
    a client's cancel naming one must not fail the change waiting for the editor."""
    path = workspace / "open.py"
    open_dirty(raw, path, "x = 1\n", "x = 1\ny = 2\n")
    params = {"file_path": str(path), "old_string": "y = 2", "new_string": "y = 3"}
    raw.send({"id": "c", "method": "readkeeper/edit", "params": params})
    apply = server_request(raw, APPLY)
    raw.send(cancel(apply["id"]))
    barrier(raw, "after cancel")
    applied(raw, apply)
    reply = answer_to(raw, "c")
    assert reply.get("result", {}).get("applied_to") == "buffer", reply


def test_a_change_cancelled_while_queued_for_a_worker_never_runs(
    raw: RawServer, workspace: Path
) -> None:
    """Every worker of the server's pool (pygls' default size) runs a buffer edit that
    waits for the editor: a write sent then waits in the pool's queue, and its cancel
    takes it off (answered `cancelled`, the file untouched, nothing to undo of it)."""
    workers = min(32, (os.cpu_count() or 1) + 4)  # ThreadPoolExecutor's default
    a = workspace / "a.txt"
    a.write_text("zero\n")
    read(raw, a)
    applies = []
    for n in range(workers):
        path = workspace / f"open{n}.py"
        open_dirty(raw, path, "x = 1\n", "x = 1\ny = 2\n", session=f"s{n}")
        params = {"file_path": str(path), "old_string": "y = 2", "new_string": "y = 3"}
        raw.send(
            {
                "id": f"hold{n}",
                "method": "readkeeper/edit",
                "params": {**params, "session": f"s{n}"},
            }
        )
        applies.append(server_request(raw, APPLY))
    raw.send(
        {
            "id": "c",
            "method": "readkeeper/write",
            "params": {"file_path": str(a), "content": "new\n"},
        }
    )
    barrier(raw, "queued")
    raw.send(cancel("c"))
    reply = answer_to(raw, "c")  # it never ran: answered at once
    assert reply["error"]["data"]["kind"] == "cancelled", reply
    for apply in applies:
        applied(raw, apply)
    for n in range(workers):
        assert "result" in answer_to(raw, f"hold{n}")
    assert a.read_text() == "zero\n"
    undone = raw.request("u", "readkeeper/undo", {})
    assert undone["error"]["data"]["kind"] == "no_change", undone
