"""A notebook's image outputs in the text MCP sends (attack round 15's A12b): each image
is named at its place, under its output's line, with its form and size, whether it is
a size placeholder, sent as an image after the text, or not sent (and why: an SVG, bytes
no image reader takes); never a bare `>>> display_data:` line with the image nowhere in
the text (the SDK client, a real `readkeeper mcp`)."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from mcp_types import ImageContent
from PIL import Image

from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of


def picture(form: str) -> str:
    out = io.BytesIO()
    Image.new("RGB", (4, 3), (255, 0, 0)).save(out, form)
    return base64.b64encode(out.getvalue()).decode()


def notebook(workspace: Path) -> None:
    forms = [
        {"image/png": picture("PNG")},
        {"image/jpeg": picture("JPEG")},
        {"image/svg+xml": ["<svg>", "</svg>"]},
        {"image/gif": "R0lGODlhAQABAAAAACw="},  # cut short: no reader takes it
        {"application/pdf": "JVBERi0="},
    ]
    outputs = [{"output_type": "display_data", "metadata": {}, "data": d} for d in forms]
    cell = {"cell_type": "code", "id": "c", "metadata": {}, "execution_count": 1}
    cell |= {"source": "x", "outputs": outputs}
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "img.ipynb").write_text(json.dumps(nb))


def output_lines(text: str) -> list[list[str]]:
    """The lines under each `>>> ` output line, up to the next."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith(">>> "):
            blocks.append([])
        elif blocks:
            blocks[-1].append(line)
    return blocks


async def test_every_image_output_is_named_at_its_place(workspace: Path) -> None:
    notebook(workspace)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        plain = await client.call_tool("read", {"file_path": "img.ipynb"})
        sent = await client.call_tool(
            "read", {"file_path": "img.ipynb", "include_images": True, "force": True}
        )
    text = text_of(plain)
    blocks = output_lines(text)
    assert len(blocks) == 5, text
    assert all(blocks), text  # no bare output line
    for block, form in zip(
        blocks[:4], ["image/png", "image/jpeg", "image/svg+xml", "image/gif"], strict=True
    ):
        assert form in block[0], text
        assert "bytes" in block[0], text
    assert "4x3" in blocks[0][0], text
    # Its way on is the read just made, with include_images (round 31: the whole call).
    shows = 'the read tool with {"file_path": "img.ipynb", "include_images": true} shows it'
    assert shows in blocks[0][0], text
    assert "4x3" in blocks[1][0], text
    assert shows in blocks[1][0], text
    # What include_images could not send either says so, and why, without it too.
    assert "not sent" in blocks[2][0], text
    assert "SVG" in blocks[2][0], text
    assert "not sent" in blocks[3][0], text
    assert "not an image" in blocks[3][0], text
    assert "application/pdf" in blocks[4][0], text
    # With include_images: what is sent says so; what is not says why.
    text = text_of(sent)
    blocks = output_lines(text)
    images = [c for c in sent.content if isinstance(c, ImageContent)]
    assert len(images) == 2, text
    assert "sent as an image" in blocks[0][0], text
    assert "sent as an image" in blocks[1][0], text
    assert "not sent" in blocks[2][0], text
    assert "SVG" in blocks[2][0], text
    assert "not sent" in blocks[3][0], text
    assert "image/gif" in blocks[3][0], text
    assert "2 images not sent (each says why)" in text, text
    assert "size placeholder" not in text, text
