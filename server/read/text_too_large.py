"""The refusal of a whole read of a text file over `max_size_bytes` (`too_large`), and
the first range it names: as many lines from the top as a ranged read of them shows
under the token cap, that read made as it would be, so the range named is never itself
refused."""

from __future__ import annotations

import os

from .. import words
from ..errors import ReadkeeperError
from ..hints import again, call
from ..settings import Settings
from .readers import text as text_reader
from .readers.text_stream import stream_range
from .services import ReadServices
from .stub_rule import Request

# The lines a too_large refusal names for its first range, when as many fit the cap.
RANGE_LINES = 500


def first_fit(services: ReadServices, request: Request) -> int:
    """The most lines from the top (up to RANGE_LINES) that a ranged read of the file
    shows under the token cap: that read, made as it would be (0: line 1 alone is over
    the cap; the room of what is sent with it the caller's read's), so the range a
    too_large refusal names is never itself refused."""
    opened = request.opened
    # The lines that end within the first max_size_bytes: the probe reads no further
    # than a whole read may (none: line 1 alone is longer, shown cut, and probed too:
    # round 37, a line cut at a raised max_line_chars was over what a read sends).
    head = os.pread(opened.fd, services.settings.max_size_bytes, 0)
    lines = max(1, min(RANGE_LINES, head.count(b"\n")))
    window = text_reader.Window(offset=1, limit=lines, ranged=True, room=request.window.room)
    try:
        stream_range(opened, window, services.settings, services.tokens)
    except ReadkeeperError as exc:
        if exc.kind == "token_limit":
            return int(exc.data.get("largest_limit") or 0)
    except OSError:
        pass  # the read it names says what fails
    return lines


def too_large(path: str, size: int, settings: Settings, fits: int = RANGE_LINES) -> ReadkeeperError:
    """The `too_large` refusal of a whole read of a text file over `max_size_bytes`;
    `fits`: the lines from the top a ranged read shows under the token cap."""
    search = call("grep", pattern="<what you look for>", path=path)
    ranges = (
        f"Read it in ranges ({again(offset=1, limit=fits)}), or "
        f"search it first to find the lines you need ({search})."
        if fits
        else f"Its first line alone is over what one read sends: search it ({search})."
    )
    return ReadkeeperError(
        "too_large",
        f"{path} is {words.size(size)} ({size} bytes), over the "
        f"{words.size(settings.max_size_bytes)} limit for reading a file whole. {ranges}",
        file_path=path,
        size=size,
        max_size_bytes=settings.max_size_bytes,
        tokens_estimate=(size + 3) // 4,
    )


def unsaved_too_large(
    path: str, size: int, settings: Settings, version: int | None
) -> ReadkeeperError:
    """The `dirty_buffer` refusal of any read (ranged, whole, an estimate) of a text file
    over `max_size_bytes` that the editor holds with unsaved changes: such a file is
    read from the disk in ranges, which would show text the editor no longer holds
    (round 44: the agent read the disk's lines as if they were the file; round 45: a
    whole read named the ranged read refused here)."""
    return ReadkeeperError(
        "dirty_buffer",
        f"{path} is open in the editor with unsaved changes, and at {words.size(size)} it "
        f"is over the {words.size(settings.max_size_bytes)} limit for reading a file "
        "whole, so readkeeper reads it from the disk in ranges only, which would not show "
        "those changes. Ask the user to save it, then read it again.",
        file_path=path,
        buffer_version=version,
        unsaved=True,
    )
