"""A library's error as an agent is shown it over MCP: a damaged image's `corrupt` error
keeps what Pillow says (it cannot identify the image) but no object's repr or heap
address (`<_io.BytesIO object at 0x7f...>`): errors.library_detail, the one place a
library's words become readkeeper's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_helpers import error_kind, mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper.errors import fault_reason, library_detail

ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}| object at ")


async def test_a_damaged_image_error_carries_no_object_address(workspace: Path) -> None:
    (workspace / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nforged note text")
    (workspace / "broken.gif").write_bytes(b"GIF89a garbage garbage")
    args, env = ["--root", str(workspace)], mcp_env(private_runtime_dir())
    async with stdio_client(args, env) as client:
        for name in ("broken.png", "broken.gif"):
            answer = await client.call_tool("read", {"file_path": name})
            assert error_kind(answer) == "corrupt"
            shown = text_of(answer)
            assert "cannot identify image file" in shown
            assert ADDRESS.search(shown) is None, shown


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        (
            "cannot identify image file <_io.BytesIO object at 0x7fcb7017a7f0>",
            "cannot identify image file",
        ),
        ("bad <function f at 0x7f00deadbeef> here", "bad here"),
        ("pointer 0x7fcb7017a7f0 freed", "pointer 0x… freed"),
        ("Stream has ended unexpectedly", "Stream has ended unexpectedly"),
        ("<_io.BytesIO object at 0x7fcb7017a7f0>", "no detail given"),
    ],
)
def test_library_detail_leaves_out_reprs_and_addresses(said: str, shown: str) -> None:
    assert library_detail(said) == shown
    assert ADDRESS.search(library_detail(ValueError(said))) is None


def test_a_fault_names_no_address() -> None:
    reason = fault_reason(RuntimeError("<pygit2.Repository object at 0x7fcb7017a7f0> moved"))
    assert reason == 'RuntimeError: "moved"'  # a library's words: one quoted string
    assert fault_reason(ValueError("<x object at 0x7fcb7017a7f0>")) == "ValueError"
