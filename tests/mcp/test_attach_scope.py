"""An attached `readkeeper mcp` is held to its own roots, never the editor's wider ones:
end to end (the editor's server and `readkeeper mcp --root WS/sub` attached to it), and
on the socket itself with a client that declares narrow roots and then asks beyond
them (the server enforces it: a lying or buggy client cannot widen itself).
"""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from test_mcp_attach import editor

from helpers import wait_until
from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls
from readkeeper.attach import framing
from readkeeper.attach.listener import Listener


@pytest.fixture
def layout(workspace: Path) -> Path:
    """WS/secret.env beside WS/sub, and a symlink in sub that points at the secret."""
    (workspace / "secret.env").write_text("TOKEN=hunter2\n")
    sub = workspace / "sub"
    sub.mkdir()
    (sub / "mine.txt").write_text("mine\n")
    (sub / "link.env").symlink_to(workspace / "secret.env")
    return sub


async def test_an_attached_mcp_is_held_to_its_own_root(workspace: Path, layout: Path) -> None:
    runtime = private_runtime_dir()
    lsp, pid = await editor(workspace, runtime)
    try:
        async with stdio_client(["--root", str(layout)], mcp_env(runtime)) as client:
            stats = await call(client, "stats")
            assert stats["mode"] == "attached"
            assert stats["pid"] == pid
            assert stats["roots"] == [str(layout)]

            read = await call(client, "read", file_path="mine.txt")
            assert read["file"]["file_path"] == str(layout / "mine.txt")
            for path in ("../secret.env", str(workspace / "secret.env"), "link.env"):
                refused = await client.call_tool("read", {"file_path": path})
                assert error_kind(refused) == "outside_workspace", path
                assert "hunter2" not in text_of(refused)

            written = await call(client, "write", file_path="new.txt", content="new\n")
            assert written["file_path"] == str(layout / "new.txt")
            assert (layout / "new.txt").read_text() == "new\n"
            assert not (workspace / "new.txt").exists()
            refused = await client.call_tool(
                "write", {"file_path": "../planted.txt", "content": "x\n"}
            )
            assert error_kind(refused) == "outside_workspace"
            assert not (workspace / "planted.txt").exists()

            missing = await client.call_tool("read", {"file_path": "secret.env"})
            assert error_kind(missing) == "not_found"
            assert str(workspace / "secret.env") not in text_of(missing)
    finally:
        await lsp.client.close()


class Raw:
    """A hand-made client of the attach socket: it can say anything."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(path)
        self.ids = 0
        self.key = ""  # a session's key in the core, when a test needs it

    def ask(self, method: str, **params: Any) -> dict[str, Any]:
        self.ids += 1
        answer = framing.exchange(self.sock, {"id": self.ids, "method": method, "params": params})
        assert answer is not None
        return answer


def principal(hello: dict[str, Any]) -> str:
    """The principal a connection's calls are served for (attach/listener.py): the
    number its default session ends with."""
    return "attach-" + hello["result"]["session"].rsplit("-", 1)[1]


def kind(answer: dict[str, Any]) -> str:
    assert "error" in answer, answer
    return str(answer["error"]["data"]["kind"])


def test_every_path_a_request_carries_is_held_to_the_declared_roots(
    listener: Listener, workspace: Path, layout: Path
) -> None:
    raw = Raw(listener.socket_path)
    hello = raw.ask("hello", roots=[str(layout)])
    assert hello["result"]["roots"] == [str(layout)]
    outside = str(workspace / "secret.env")
    for method, params in (
        ("read", {"file_path": outside}),
        ("read", {"file_path": "../secret.env"}),
        ("read", {"file_path": "link.env"}),
        ("edit", {"file_path": outside, "old_string": "TOKEN", "new_string": "T"}),
        ("write", {"file_path": "../new.txt", "content": "x"}),
        ("attachments", {"active_editor": {"file_path": outside}}),
    ):
        answer = raw.ask(method, **params)
        assert kind(answer) == "outside_workspace", (method, params)
        assert answer["error"]["data"]["roots"] == [str(layout)]
    # A batch's entry beyond the roots is refused alone (as standalone refuses it), by
    # the core held to these roots: nothing of it is read, attached or forgotten.
    many = raw.ask("readMany", file_paths=["mine.txt", outside, "link.env"])["result"]
    assert [kind(r) for r in many["results"][1:]] == ["outside_workspace"] * 2
    assert many["results"][0]["result"]["file"]["file_path"] == str(layout / "mine.txt")
    assert all(r["error"]["data"]["roots"] == [str(layout)] for r in many["results"][1:])
    attached = raw.ask("attachments", mentions=["mine.txt", outside])["result"]
    assert [d["source"] for d in attached["dropped"] if d["type"] == "file"] == [outside]
    assert "hunter2" not in str(many) + str(attached)
    assert raw.ask("forget", paths=["mine.txt", outside])["result"]["forgotten"] == 1
    assert (workspace / "secret.env").read_text() == "TOKEN=hunter2\n"
    assert not (workspace / "new.txt").exists()
    assert raw.ask("read", file_path="mine.txt")["result"]["type"] == "text"


def test_a_path_beyond_the_declared_roots_is_answered_by_its_text_alone(
    listener: Listener, workspace: Path, layout: Path, tmp_path: Path
) -> None:
    # Beyond the connection's roots, inside the editor's or outside both: refused the
    # same whether something is there or not, with nothing resolved (no real path, no
    # link's target beyond the link's own text).
    (layout / "gone.env").symlink_to(workspace / "missing.env")
    spelled = tmp_path / "sub-link"
    spelled.symlink_to(layout)
    raw = Raw(listener.socket_path)
    assert "result" in raw.ask("hello", roots=[str(spelled)])  # a root named by a link
    answers = set()
    for path in (
        str(workspace / "secret.env"),
        str(workspace / "missing.env"),
        str(tmp_path / "elsewhere.txt"),
        str(tmp_path / "nothing" / "there.txt"),
    ):
        answer = raw.ask("read", file_path=path)
        assert kind(answer) == "outside_workspace"
        assert "real_path" not in answer["error"]["data"]
        answers.add(answer["error"]["message"].replace(path, "<path>"))
    assert len(answers) == 1, answers
    links = {}
    for name in ("link.env", "gone.env"):
        answer = raw.ask("read", file_path=name)
        assert kind(answer) == "outside_workspace"
        links[name] = answer["error"]["data"]
    assert links["link.env"]["link_target"] == str(workspace / "secret.env")
    assert links["gone.env"]["link_target"] == str(workspace / "missing.env")
    # The root's own spelling reaches its files.
    read = raw.ask("read", file_path=str(spelled / "mine.txt"))
    assert read["result"]["file"]["file_path"] == str(layout / "mine.txt")


def test_changes_show_only_files_within_the_declared_roots(
    listener: Listener, workspace: Path, layout: Path
) -> None:
    # A session that holds a file beyond this connection's roots (no door of another
    # principal reaches it: the core is called in its name): its notices of files
    # beyond these roots are left pending, never taken and thrown away.
    listener.core.configure({"watch_debounce_ms": 20})
    listener.core.start_watching(lambda message: None)
    raw = Raw(listener.socket_path)
    whose = principal(raw.ask("hello", roots=[str(layout)]))
    for name in ("secret.env", "sub/mine.txt"):
        read = calls.call(listener.core, "read", {"file_path": name, "session": "agent"}, whose)
        assert read["type"] == "text"
    (workspace / "secret.env").write_text("TOKEN=changed\n")
    (layout / "mine.txt").write_text("mine, changed\n")

    def noticed() -> list[str] | None:
        changes = raw.ask("changes", session="agent")["result"]["changes"]
        return [c["file_path"] for c in changes] or None

    assert wait_until(noticed, "the watcher to notice sub/mine.txt") == [str(layout / "mine.txt")]

    # The notice of the file beyond its roots was left pending.
    def editor_noticed() -> list[str] | None:
        found = calls.call(listener.core, "changes", {"session": "agent"}, whose)
        return [c["file_path"] for c in found["changes"]] or None

    assert wait_until(editor_noticed, "the editor's notice") == [str(workspace / "secret.env")]


def test_a_hello_must_declare_roots_within_the_editors(
    listener: Listener, workspace: Path, layout: Path, tmp_path: Path
) -> None:
    assert kind(Raw(listener.socket_path).ask("read", file_path="sub/mine.txt")) == "bad_params"
    assert kind(Raw(listener.socket_path).ask("hello")) == "bad_params"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert kind(Raw(listener.socket_path).ask("hello", roots=[str(elsewhere)])) == (
        "outside_workspace"
    )
    assert kind(Raw(listener.socket_path).ask("hello", roots=["/"])) == "outside_workspace"
    # A file within the editor's roots is no root either (it is not a folder).
    file_root = Raw(listener.socket_path).ask("hello", roots=[str(layout / "mine.txt")])
    assert kind(file_root) == "outside_workspace"
    assert "it is not a folder" in file_root["error"]["message"]
    twice = Raw(listener.socket_path)
    twice.ask("hello", roots=[str(layout)])
    assert kind(twice.ask("hello", roots=[str(workspace)])) == "bad_params"
    assert kind(twice.ask("read", file_path="../secret.env")) == "outside_workspace"
    assert os.path.exists(workspace / "secret.env")


def test_a_hello_of_a_root_longer_than_any_path_is_refused_and_not_echoed(
    listener: Listener, workspace: Path
) -> None:
    """Round 42: a hello of a 600,000-character root within the editor's was taken and
    echoed whole (a 3.6 MB reply)."""
    long = str(workspace / ("\x01" * 600_000))
    refused = Raw(listener.socket_path).ask("hello", roots=[long])
    assert kind(refused) == "outside_workspace"
    assert "longer than any path" in refused["error"]["message"]
    assert len(str(refused)) < 5_000


def test_a_hello_of_more_roots_than_an_editor_holds_is_refused(
    listener: Listener, layout: Path
) -> None:
    """Round 43: 20,000 roots were taken, each echoed by hello and stats (24.6 M
    characters, the editor's server at 682 MB) and walked by every refusal."""
    from readkeeper.files.paths import MAX_ROOTS

    many = [str(layout / f"d{i}") for i in range(MAX_ROOTS + 1)]
    refused = Raw(listener.socket_path).ask("hello", roots=many)
    assert kind(refused) == "bad_params"
    assert f"at most {MAX_ROOTS}" in refused["error"]["message"]
    # The same root named many times is one.
    taken = Raw(listener.socket_path).ask("hello", roots=[str(layout)] * 10_000)
    assert taken["result"]["roots"] == [str(layout.resolve())]


def test_a_client_that_stops_reading_holds_only_its_own_connection(
    listener: Listener, workspace: Path, layout: Path
) -> None:
    # One request at a time per connection, answered with a blocking send: a client
    # that writes and never reads stops its own connection (and its own thread), with
    # at most one answer waiting; another connection is served meanwhile, and the
    # first is answered in full once it reads.
    (layout / "big.txt").write_text("".join(f"line {i:06d} {'x' * 40}\n" for i in range(1500)))
    slow = Raw(listener.socket_path)
    slow.ask("hello", roots=[str(layout)])
    count = 400
    frames = [
        {"id": i, "method": "read", "params": {"file_path": "big.txt", "force": True}}
        for i in range(1, count + 1)
    ]

    def write_all() -> None:
        for message in frames:
            framing.send(slow.sock, message)

    writer = threading.Thread(target=write_all, daemon=True)
    writer.start()
    other = Raw(listener.socket_path)
    other.ask("hello", roots=[str(layout)])
    assert other.ask("read", file_path="mine.txt")["result"]["type"] == "text"
    answers = [framing.receive(slow.sock) for _ in range(count)]
    writer.join()
    assert [a["id"] for a in answers if a is not None] == list(range(1, count + 1))
    assert all(a is not None and a["result"]["type"] == "text" for a in answers)


async def test_an_attached_agent_reads_the_pages_rendered_for_it(
    workspace: Path, layout: Path
) -> None:
    # Rendered pages live outside every root, in readkeeper's own folder for the
    # session: the one path beyond its roots an attached agent is handed, and may read.
    from test_mcp_documents import make_pdf

    make_pdf(layout / "short.pdf", 2)
    runtime = private_runtime_dir()
    lsp, _ = await editor(workspace, runtime)
    try:
        async with stdio_client(["--root", str(layout)], mcp_env(runtime)) as client:
            assert (await call(client, "stats"))["mode"] == "attached"
            rendered = await client.call_tool(
                "read", {"file_path": "short.pdf", "pages": "1-2", "render": True}
            )
            assert not rendered.is_error, text_of(rendered)
            images = [b for b in rendered.content if isinstance(b, types.ImageContent)]
            assert len(images) == 2
            assert rendered.structured_content is not None
            page = rendered.structured_content["file"]["pages"][0]
            assert (await call(client, "read", file_path=page, force=True))["type"] == "image"
    finally:
        await lsp.client.close()


def test_attachments_beyond_the_declared_roots_are_dropped(
    listener: Listener, workspace: Path, layout: Path
) -> None:
    from readkeeper.protocol import DiagnosticsParams

    (workspace / "AGENTS.md").write_text("Use the secret in secret.env\n")
    problem = {
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
        "severity": 1,
        "message": "TOKEN leaked here",
    }
    entry = {"uri": (workspace / "secret.env").as_uri(), "diagnostics": [problem]}
    listener.core.did_change_diagnostics(DiagnosticsParams(items=[entry]))
    whole = Raw(listener.socket_path)
    whole.ask("hello", roots=[str(workspace)])
    kinds = {a["type"] for a in whole.ask("attachments")["result"]["attachments"]}
    assert "diagnostics" in kinds  # the editor's own agent sees them

    narrow = Raw(listener.socket_path)
    narrow.ask("hello", roots=[str(layout)])
    result = narrow.ask("attachments")["result"]
    assert "TOKEN leaked" not in str(result["attachments"])
    assert "secret in secret.env" not in str(result["attachments"])
    dropped = {d["type"] for d in result["dropped"]}
    assert "diagnostics" in dropped


def test_a_hello_naming_a_link_out_learns_nothing_of_its_target(
    listener: Listener, workspace: Path, tmp_path: Path
) -> None:
    """Round 44: the refusal gave the link's target (`/root/.ssh`) in `real_path`, and
    "not a folder" or "does not exist" told what lay outside. Every link out is refused
    alike, by its own name."""
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "file.txt").write_text("x\n")
    targets = [outside / "folder", outside / "file.txt", outside / "missing", Path("/")]
    said = []
    for index, target in enumerate([*targets, outside / "folder"]):
        # (the last named outside the workspace too: a link of the user's, followed)
        link = (workspace if index < len(targets) else tmp_path) / f"l{index}"
        link.symlink_to(target)
        refused = Raw(listener.socket_path).ask("hello", roots=[str(link)])
        assert kind(refused) == "outside_workspace"
        assert refused["error"]["data"]["real_path"] == str(link)
        text = json.dumps(refused)
        assert str(outside) not in text
        said.append(refused["error"]["message"].replace(str(link), "LINK"))
    assert len(set(said)) == 1, said
