"""Outline and symbol reads through the real server, as an editor's agent calls them."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
from outline_samples import sample

from conftest import Session

TYPING = Path(typing.__file__).read_text(encoding="utf-8")


async def test_typing_py_read_whole_twice_is_an_outline_and_a_stub(
    lsp: Session, workspace: Path
) -> None:
    (workspace / "typing.py").write_text(TYPING)
    first = await lsp.read("typing.py")
    assert first["type"] == "outline"
    file = first["file"]
    assert file["file_path"] == str(workspace / "typing.py")
    assert file["partial"] is True
    assert file["total_lines"] == len(TYPING.splitlines())
    again = await lsp.read("typing.py")
    assert again["type"] == "file_unchanged"
    stats = await lsp.client.request("readkeeper/stats", {"session": ""})
    assert stats["session"]["dedup_hits"] == 1
    assert stats["session"]["tokens_returned"] == file["tokens"] < 5_000


async def test_symbol_read_then_edit_then_the_new_symbol(lsp: Session, workspace: Path) -> None:
    (workspace / "typing.py").write_text(TYPING)
    outline = (await lsp.read("typing.py"))["file"]
    assert "symbol=" in outline["note"]
    method = await lsp.read("typing.py", symbol="BinaryIO.write")
    assert method["type"] == "text"
    content = method["file"]["content"]
    assert "def write(self, s: Union[bytes, bytearray]) -> int:" in content
    assert (await lsp.read("typing.py", symbol="BinaryIO.write"))["type"] == "file_unchanged"
    edited = await lsp.client.request(
        "readkeeper/edit",
        {
            "file_path": "typing.py",
            "old_string": "    def write(self, s: Union[bytes, bytearray]) -> int:",
            "new_string": "    def write(self, s: bytes) -> int:",
        },
    )
    assert edited["replacements"] == 1
    after = await lsp.read("typing.py", symbol="BinaryIO.write")
    assert after["type"] == "text"
    assert "def write(self, s: bytes) -> int:" in after["file"]["content"]


@pytest.mark.ci_required
async def test_symbol_errors_carry_candidates_and_kinds(lsp: Session, workspace: Path) -> None:
    source = sample("typescript")  # a .d.ts from the extension's node_modules
    (workspace / source.name).write_text(source.text)
    found = await lsp.read(source.name, symbol=source.symbol)
    assert found["type"] == "text"
    error = await lsp.read_error(source.name, symbol="Range.craete")
    assert error.data["kind"] == "not_found"
    assert error.data["candidates"][0]["qualified_name"] == "Range.create"
    (workspace / "notes.txt").write_text("plain\n")
    unsupported = await lsp.read_error("notes.txt", symbol="plain")
    assert unsupported.data["kind"] == "unsupported"
    bad = await lsp.read_error(source.name, symbol="Range.create", limit="5")
    assert bad.data == {"kind": "bad_params", "field": "symbol"}


async def test_outline_setting_from_the_client(workspace: Path) -> None:
    from conftest import start_session

    source = sample("go")
    (workspace / source.name).write_text(source.text)
    session = await start_session(workspace, settings={"outlineOverTokens": 100})
    try:
        result = await session.read(source.name)
        assert result["type"] == "outline"
        assert result["file"]["language"] == "Go"
    finally:
        await session.client.close()
