"""A read's rendered PDF pages as MCP image content: each read (and budgeted) as an
image, as many as max_tokens holds beside the answer's text; the note names the files
of the rest, for the agent to read."""

from __future__ import annotations

import logging
import os
import struct
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types

from ..errors import ReadkeeperError
from ..read.readers.image import tokens_for
from .backends import Backend

log = logging.getLogger("readkeeper")

# What the note on the pages not sent inline costs.
IMAGES_NOTE_TOKENS = 48


async def page_images(
    backend: Backend, result: dict[str, Any], session: Any, room: int, most: int
) -> list[types.ImageContent]:
    """Rendered PDF pages as image content, each read (and budgeted) as an image of at
    most `most` tokens, as many as `room` tokens hold (max_tokens less the text: round
    36, 20 pages of about 1,600 tokens each were sent at any cap), each priced before it
    is read by its drawing's size (`_page_tokens`: round 37, a page of 3,278 tokens was
    held back at a cap of 25,000 for an image budget of 100,000); the note names the
    files of the rest."""
    images: list[types.ImageContent] = []
    pages = result["file"].get("pages", [])
    spent = 0
    for page in pages:
        cost = _page_tokens(page, most)
        if spent + cost > room:
            break  # not read: its file stays for the agent to read
        params: dict[str, Any] = {"file_path": page}
        if session is not None:
            params["session"] = session
        try:
            shown = await anyio.to_thread.run_sync(backend.call, "read", params)
        except ReadkeeperError as exc:
            log.warning("Rendered page %s could not be read: %s", page, exc.message)
            continue
        file = shown.get("file") or {}
        if shown.get("type") == "image" and file.get("base64"):
            images.append(types.ImageContent(data=file["base64"], mime_type=file["media_type"]))
            spent += int(file.get("tokens") or cost)
    if len(images) < len(pages):
        file = result["file"]
        attached = f"the first {len(images)}" if images else "none"
        file["note"] = (
            f"{file.get('note') or ''} Of the {len(pages)} page images, {attached} "
            "came with this answer (within max_tokens); read the other pages' files to "
            "see them."
        ).strip()
    return images


_PNG = b"\x89PNG\r\n\x1a\n"


def _page_tokens(path: str, most: int) -> int:
    """What the page drawn at `path` (a PNG readkeeper wrote in its output folder) costs
    once read, from its header's size, before any read records it: at most `most`, the
    image budget a read fits it to (`most` when the header says nothing)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return most
    try:
        head = os.read(fd, 24)
    except OSError:
        return most
    finally:
        os.close(fd)
    if len(head) < 24 or not head.startswith(_PNG) or head[12:16] != b"IHDR":
        return most
    width, height = struct.unpack(">II", head[16:24])
    return min(most, tokens_for(width, height))
