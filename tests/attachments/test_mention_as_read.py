"""A mention is read as `read` reads it: each kind of file (an image over the pixel
limit, a binary, a broken notebook, which is read as its text, a broken PDF, a folder) is
attached or dropped with the plain read's own kind and next step, a text too big to read
whole cut to its first lines (attack round 21, A4: a mentioned PNG bomb was dropped
`bad_params` about an offset the agent never sent)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client, text_of


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    crc = struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return struct.pack(">I", len(data)) + kind + data + crc


def _png_bomb(path: Path) -> None:
    """A PNG whose header says 30,000 x 30,000 pixels (over the limit), with one row."""
    width = height = 30_000
    rows = zlib.compress(b"\x00" * (width + 1))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", rows)
        + _png_chunk(b"IEND", b"")
    )


def _files(workspace: Path) -> list[str]:
    _png_bomb(workspace / "bomb.png")
    (workspace / "blob.bin").write_bytes(bytes(range(256)) * 64)
    (workspace / "broken.ipynb").write_text('{"cells": [')
    (workspace / "broken.pdf").write_bytes(b"%PDF-1.4\nnot a pdf at all\n")
    (workspace / "folder").mkdir()
    (workspace / "huge.txt").write_text("".join(f"line {n} {'x' * 60}\n" for n in range(60_000)))
    return ["bomb.png", "blob.bin", "broken.ipynb", "broken.pdf", "folder", "huge.txt"]


async def test_a_mention_is_refused_as_a_plain_read_is(workspace: Path) -> None:
    names = _files(workspace)
    env = mcp_env(private_runtime_dir())
    kinds: dict[str, str] = {}
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        for name in names:
            plain = await client.call_tool("read", {"file_path": name, "session": f"r-{name}"})
            answer = await call(client, "attachments", mentions=[name], session=f"m-{name}")
            dropped = [d for d in answer["dropped"] if d["type"] == "file"]
            if not plain.is_error or name == "huge.txt":
                # A text too big to read whole is cut, never dropped: its first lines
                # (the ranged read the plain read's refusal names).
                assert dropped == [], (name, dropped)
                continue
            kind = kinds[name] = error_kind(plain)
            [entry] = dropped
            assert entry["reason"].startswith(f"{kind}: "), (name, kind, entry["reason"])
            assert "offset" not in entry["reason"], (name, entry["reason"])
            # The same next step: the plain read's message is the reason's.
            message = plain.structured_content["error"]["message"]  # type: ignore[index]
            assert message[:60] in entry["reason"] or kind == "not_found", (name, text_of(plain))
    assert kinds == {
        "bomb.png": "too_large",
        "blob.bin": "binary",
        "broken.pdf": "corrupt",
        "folder": "is_directory",
    }


async def test_a_mention_resolves_its_path_exactly_as_read_does(workspace: Path) -> None:
    """Attack round 22, finding 8: `a.txt/` was attached (its contents) while `read`
    refuses it `not_found`; the path's form (a trailing slash or dot) was lost."""
    (workspace / "a.txt").write_text("hello\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "b.txt").write_text("bee\n")
    spellings = ["a.txt/", "a.txt/.", "a.txt//", "./a.txt", "a.txt/..", "sub/", "sub/./b.txt"]
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        for name in spellings:
            plain = await client.call_tool("read", {"file_path": name, "session": f"r-{name}"})
            answer = await call(
                client, "attachments", mentions=[name], types=["file"], session=f"m-{name}"
            )
            dropped = [d for d in answer["dropped"] if d["type"] == "file"]
            attached = [a for a in answer["attachments"] if a["type"] == "file"]
            if plain.is_error:
                assert attached == [], (name, attached)
                [entry] = dropped
                assert entry["reason"].startswith(f"{error_kind(plain)}: "), (name, entry)
            else:
                assert dropped == [], (name, dropped)
                assert len(attached) == 1, (name, answer)
