"""Helpers for the MCP tests: `readkeeper mcp` as a real subprocess, driven by the `mcp`
SDK's own client over stdio or streamable HTTP.

Every process gets a private runtime folder (`XDG_RUNTIME_DIR`), so whether it attaches
to an editor's server depends only on what the test started, never on other tests.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import mcp_types as types
import warm_server
from mcp import Client, StdioServerParameters

from helpers import eventually, wait_until

READKEEPER = [sys.executable, "-m", "readkeeper"]


def private_runtime_dir() -> Path:
    """A fresh 0700 folder with a short path (Unix socket paths are limited to 107
    bytes, and pytest's tmp_path can be longer), removed when the tests end."""
    folder = Path(tempfile.mkdtemp(prefix="rk-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def mcp_env(runtime: Path, home: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment of a readkeeper process: ours, its runtime folder, no settings
    leaking from the developer's environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("READKEEPER_")}
    env["XDG_RUNTIME_DIR"] = str(runtime)
    if home is not None:
        env["HOME"] = str(home)
    env.update(extra)
    return env


@contextlib.asynccontextmanager
async def stdio_client(
    args: list[str],
    env: dict[str, str] | None = None,
    cwd: Path | str | None = None,
    list_roots: Callable[..., Any] | None = None,
) -> AsyncIterator[Client]:
    """An SDK client connected to `readkeeper mcp ARGS` over stdio (in `env`, by default
    ours with a private runtime folder: `mcp_env`)."""
    env = mcp_env(private_runtime_dir()) if env is None else env
    command = warm_server.command("mcp", *args)
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
    async with Client(params, list_roots_callback=list_roots, read_timeout_seconds=60) as client:
        yield client


class HttpServer:
    """`readkeeper mcp --http --port 0` as a subprocess; `url` is what it printed."""

    def __init__(self, args: list[str], env: dict[str, str], real: bool = False) -> None:
        """`real`: `python -m readkeeper` itself, not forked warm (warm_server.py): for
        a test that reads the server's process by its pid."""
        start = warm_server.real_command if real else warm_server.command
        self.process = subprocess.Popen(
            start("mcp", "--http", "--port", "0", *args),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stderr is not None
        self.stderr_lines: list[str] = []
        self.url = wait_until(self._url, "readkeeper mcp --http to print its URL", timeout=60)

    def _url(self) -> str | None:
        assert self.process.stderr is not None
        if self.process.poll() is not None:
            rest = self.process.stderr.read()
            raise AssertionError(
                f"readkeeper mcp --http exited: {''.join(self.stderr_lines)}{rest}"
            )
        line = self.process.stderr.readline()  # blocks until the next line: it is printed
        self.stderr_lines.append(line)
        marker = "readkeeper MCP server on "
        return line.split(marker, 1)[1].strip() if marker in line else None

    def stop(self) -> None:
        """Stop the server and wait for it."""
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()


@contextlib.asynccontextmanager
async def http_server(args: list[str], runtime: Path | None = None) -> AsyncIterator[HttpServer]:
    """`readkeeper mcp --http ARGS` (its runtime folder `runtime`, else a private one)
    for the block, stopped after it."""
    server = HttpServer(args, mcp_env(runtime or private_runtime_dir()))
    try:
        yield server
    finally:
        server.stop()


@contextlib.asynccontextmanager
async def legacy_clients(server: HttpServer) -> AsyncIterator[tuple[Client, Client]]:
    """Two SDK clients of `server` in the handshake-era mode (each its `Mcp-Session-Id`)."""
    async with (
        Client(server.url, mode="legacy") as first,
        Client(server.url, mode="legacy") as second,
    ):
        yield first, second


@contextlib.asynccontextmanager
async def http_client(args: list[str], env: dict[str, str]) -> AsyncIterator[Client]:
    """An SDK client connected to `readkeeper mcp --http ARGS`."""
    server = HttpServer(args, env)
    try:
        async with Client(server.url, read_timeout_seconds=60) as client:
            yield client
    finally:
        server.stop()


def dropin_client(workspace: Path) -> AbstractAsyncContextManager[Client]:
    """An SDK client of the drop-in (`--tools filesystem`) serving `workspace` alone."""
    args = ["--tools", "filesystem", "--standalone", "--root", str(workspace)]
    return stdio_client(args, mcp_env(private_runtime_dir()))


def core_client(workspace: Path) -> AbstractAsyncContextManager[Client]:
    """An SDK client of `readkeeper mcp` (the core's tools) serving `workspace` alone."""
    return stdio_client(["--root", str(workspace), "--standalone"], mcp_env(private_runtime_dir()))


async def dropin_edit(client: Client, path: str, old: str, new: str) -> types.CallToolResult:
    """The drop-in's edit_file of `old` to `new` in `path`, once read_text_file read it."""
    await client.call_tool("read_text_file", {"path": path})
    edit = {"path": path, "edits": [{"oldText": old, "newText": new}]}
    return await client.call_tool("edit_file", edit)


def message(msg_id: int, method: str, params: dict[str, Any]) -> bytes:
    """A JSON-RPC request as one line's text (no newline)."""
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


def hello() -> bytes:
    """The lines that open an MCP session over stdio: `initialize`, then `initialized`."""
    info = {"protocolVersion": "2025-06-18", "capabilities": {}}
    info["clientInfo"] = {"name": "test", "version": "1"}
    ready = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    return message(0, "initialize", info) + b"\n" + ready + b"\n"


def exchange(workspace: Path, lines: list[bytes], *args: str) -> dict[Any, dict[str, Any]]:
    """The answers, by id, of `readkeeper mcp ARGS` serving `workspace` alone to the raw
    JSON-RPC `lines` after `hello` (raw, so NaN, Infinity and 1e400 reach the server as a
    client may send them). Its stdin is then closed: every line read is answered, then the
    server ends."""
    server = subprocess.Popen(
        warm_server.command("mcp", *args, "--standalone", "--root", str(workspace)),
        env=mcp_env(private_runtime_dir()),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None
    assert server.stdout is not None
    try:
        server.stdin.write(hello() + b"".join(lines))
        server.stdin.close()
        answers = [json.loads(raw) for raw in server.stdout]
        assert server.wait() == 0
    finally:
        server.kill()
        server.wait()
    return {answer.get("id"): answer for answer in answers}


def named_call(said: str, tool: str) -> dict[str, Any]:
    """The arguments of the first next call of `tool` that `said` names (as MCP words
    name one: `the TOOL tool with {...}`, or `TOOL with {...}`)."""
    found = re.search(re.escape(tool) + r"(?: tool)? with \{", said)
    assert found is not None, said
    loaded, _ = json.JSONDecoder().raw_decode(said, found.end() - 1)
    assert isinstance(loaded, dict)
    return loaded


def named_calls(said: str, tool: str) -> list[dict[str, Any]]:
    """The arguments of every next call of `tool` that `said` names, in order."""
    calls = []
    for found in re.finditer(re.escape(tool) + r"(?: tool)? with \{", said):
        loaded, _ = json.JSONDecoder().raw_decode(said, found.end() - 1)
        assert isinstance(loaded, dict)
        calls.append(loaded)
    return calls


async def ok(client: Client, tool: str, **arguments: Any) -> str:
    """The text of a call that must succeed."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    return text_of(result)


def text_of(result: types.CallToolResult) -> str:
    """All the text blocks of a tool result."""
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def error_kind(result: types.CallToolResult) -> str:
    """The `kind` of a tool error (failing the test if the call succeeded)."""
    assert result.is_error, f"expected a tool error, got {text_of(result)[:500]}"
    structured = result.structured_content
    assert isinstance(structured, dict)
    kind = structured["error"]["data"]["kind"]
    assert f"kind: {kind}" in text_of(result)
    return str(kind)


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; its structured result."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def until_watching(client: Client) -> None:
    """Wait until the server's watcher hears the workspace: a change made before that is
    found by a look at the file (a rename then reads as the old name deleted)."""

    async def watching() -> bool:
        return bool((await call(client, "stats"))["watcher"]["state"] == "watching")

    await eventually(watching, "the watcher to hear the workspace")
