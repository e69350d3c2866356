"""Pictures of extreme shape (1 x 178,000,000 grey pixels: 346 KB on disk) through every
front end that decodes images: each real process (MCP `read`, the filesystem drop-in's
`read_media_file`, `readkeeper read`, LSP) refuses them with `too_large` and what to do
instead, and its peak memory stays far from what they would have taken (1.6 GB for the
tall PNG, with row pointers Pillow keeps besides the pixels)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from image_bombs import bmp_rle_padded, bmp_rle_rows, png_bomb, tiff_bomb
from peak_rss import run_with_peak, vm_peak_mb
from test_image_bombs import answer, notebook_of, peak_rss_mb, server_pid

from conftest import Session
from mcp_helpers import mcp_env, private_runtime_dir

# Base memory (about 70 MB) plus one decode at the 256 MB cap, with room to spare.
PEAK_RSS_CAP_MB = 480

SHAPES: dict[str, Callable[[], bytes]] = {
    "tall.png": lambda: png_bomb(1, 178_000_000, grey=True),
    "wide.png": lambda: png_bomb(178_000_000, 1, grey=True),
    "two-columns.png": lambda: png_bomb(2, 89_000_000, grey=True),
    "tall.bmp": lambda: bmp_rle_rows(1, 178_000_000),
    "overrun.bmp": lambda: bmp_rle_rows(700_000, 1, overrun=True),
    "tall.tif": lambda: tiff_bomb(1, 59_000_000),
    "huge-tile.tif": lambda: tiff_bomb(16, 16, tile=10_000),
    "padded-rows.bmp": lambda: bmp_rle_padded(20_000, 2_800),
}


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("shapes")
    for name, make in SHAPES.items():
        (folder / name).write_bytes(make())
    return folder


def assert_refused(kind: str, message: str) -> None:
    assert kind == "too_large", message
    # What to do instead: a smaller export, or a downscaled copy to read.
    assert "smaller" in message, message
    assert "image tool" in message, message
    assert "`" not in message, message  # in words, never a shell command


def test_cli_read_refuses_every_shape_within_memory(shapes: Path) -> None:
    env = mcp_env(private_runtime_dir())
    for name in SHAPES:
        argv = [sys.executable, "-m", "readkeeper", "read", name, "--json"]
        out, peak = run_with_peak(argv, shapes, env)
        assert peak < PEAK_RSS_CAP_MB, name
        error = json.loads(out)["error"]
        assert_refused(error["data"]["kind"], error["message"])


class RawMcp:
    """`readkeeper mcp` as a child speaking newline-delimited JSON-RPC, so the test can
    read its resource usage when it exits."""

    def __init__(self, root: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "readkeeper", "mcp", "--standalone", "--root", str(root), *args],
            env=mcp_env(private_runtime_dir()),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        client = {"name": "shapes", "version": "1"}
        self.request("initialize", protocolVersion="2025-06-18", capabilities={}, clientInfo=client)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            assert line, "the server closed its output"
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        answer = self.request("tools/call", name=tool, arguments=arguments)
        result: dict[str, Any] = answer["result"]
        return result

    def close(self) -> float:
        """Its peak RSS in MB, then it is stopped."""
        peak = vm_peak_mb(self.process.pid)
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)
        return peak


@pytest.mark.parametrize(("tool", "argument"), [("read", "file_path"), ("media", "path")])
def test_mcp_refuses_every_shape_within_memory(shapes: Path, tool: str, argument: str) -> None:
    args = ("--tools", "filesystem") if tool == "media" else ()
    server = RawMcp(shapes, *args)
    try:
        for name in SHAPES:
            path = name if tool == "read" else str(shapes / name)
            name_of_tool = "read_media_file" if tool == "media" else "read"
            result = server.call(name_of_tool, **{argument: path})
            assert result["isError"], (name, result)
            text = "\n".join(c.get("text", "") for c in result["content"])
            kind = result["structuredContent"]["error"]["data"]["kind"]
            assert_refused(kind, text)
    finally:
        peak = server.close()
    assert peak < PEAK_RSS_CAP_MB


async def test_lsp_refuses_every_shape_within_memory(
    lsp: Session, workspace: Path, shapes: Path
) -> None:
    for name in SHAPES:
        (workspace / name).write_bytes((shapes / name).read_bytes())
        reply = await answer(lsp, name)
        assert "error" in reply, (name, reply)
        assert_refused(reply["error"]["kind"], reply["message"])
    assert peak_rss_mb(server_pid(lsp)) < PEAK_RSS_CAP_MB


async def test_a_notebooks_images_of_extreme_shape_are_not_decoded(
    lsp: Session, workspace: Path
) -> None:
    # A notebook decodes any bytes under an image/* label: the shapes come as PNGs.
    hostile = [
        png_bomb(1, 60_000_000, grey=True),
        png_bomb(80_000_000, 1, grey=True),
        tiff_bomb(16, 16, tile=10_000),
        bmp_rle_padded(20_000, 2_800),
    ]
    (workspace / "shapes.ipynb").write_text(notebook_of(hostile))
    result = await lsp.read("shapes.ipynb", include_images=True)
    images = [i for c in result["file"]["cells"] for o in c["outputs"] for i in o["images"]]
    assert len(images) == len(hostile)
    for image in images:
        assert image.get("base64") is None, image
        assert image["note"].startswith("Not shown (too_large)"), image
    assert peak_rss_mb(server_pid(lsp)) < PEAK_RSS_CAP_MB
