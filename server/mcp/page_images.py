"""A read's rendered PDF pages as MCP image content: each read (and budgeted) as an
image, as many as max_tokens holds beside the answer's text; the note names the files
of the rest, for the agent to read."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types

from ..errors import ReadkeeperError
from .backends import Backend

log = logging.getLogger("readkeeper")

# What the note on the pages not sent inline costs.
IMAGES_NOTE_TOKENS = 48


async def page_images(
    backend: Backend, result: dict[str, Any], session: Any, room: int, most: int
) -> list[types.ImageContent]:
    """Rendered PDF pages as image content, each read (and budgeted) as an image of at
    most `most` tokens, as many as `room` tokens hold (max_tokens less the text: round
    36, 20 pages of about 1,600 tokens each were sent at any cap); the note names the
    files of the rest."""
    images: list[types.ImageContent] = []
    pages = result["file"].get("pages", [])
    spent = 0
    for page in pages:
        if spent + most > room:
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
            spent += int(file.get("tokens") or most)
    if len(images) < len(pages):
        file = result["file"]
        attached = f"the first {len(images)}" if images else "none"
        file["note"] = (
            f"{file.get('note') or ''} Of the {len(pages)} page images, {attached} "
            "came with this answer (within max_tokens); read the other pages' files to "
            "see them."
        ).strip()
    return images
