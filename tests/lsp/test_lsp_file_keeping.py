"""An edit or write changes a file's text and nothing else: its extended attributes stay,
its legacy encoding is read as what it is, and every byte outside the edited span keeps
its value (no NUL byte appears in a text file that had none)."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

import pytest

from conftest import Session


async def edit(lsp: Session, path: Path, old: str, new: str) -> Any:
    return await lsp.client.request(
        "readkeeper/edit", {"file_path": str(path), "old_string": old, "new_string": new}
    )


def user_xattrs_supported(folder: Path) -> bool:
    probe = folder / ".xattr-probe"
    probe.write_bytes(b"")
    try:
        os.setxattr(probe, "user.probe", b"1")
    except (OSError, AttributeError):
        return False
    finally:
        probe.unlink()
    return True


async def test_edit_and_write_keep_extended_attributes(lsp: Session, workspace: Path) -> None:
    if not user_xattrs_supported(workspace):
        pytest.skip("this filesystem does not take user.* extended attributes")
    path = workspace / "x.txt"
    path.write_text("orig line\n")
    os.setxattr(path, "user.keep", b"1")
    os.setxattr(path, "user.comment", b"reviewed \x00 binary")
    await lsp.read(path)
    await edit(lsp, path, "orig line", "agent line")
    assert path.read_text() == "agent line\n"
    assert os.getxattr(path, "user.keep") == b"1"
    await lsp.client.request("readkeeper/write", {"file_path": str(path), "content": "new\n"})
    assert path.read_text() == "new\n"
    assert os.getxattr(path, "user.keep") == b"1"
    assert os.getxattr(path, "user.comment") == b"reviewed \x00 binary"


def posix_acl(*entries: tuple[int, int, int]) -> bytes:
    """The bytes of a system.posix_acl_access value (version 2, then tag, perm, id)."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


async def test_an_edit_keeps_a_posix_acl(lsp: Session, workspace: Path) -> None:
    path = workspace / "shared.txt"
    path.write_text("orig line\n")
    anyone = 0xFFFFFFFF
    acl = posix_acl(
        (1, 6, anyone), (2, 6, 65534), (4, 4, anyone), (0x10, 6, anyone), (0x20, 4, anyone)
    )
    try:
        os.setxattr(path, "system.posix_acl_access", acl)
    except OSError as exc:
        pytest.skip(f"this filesystem or user cannot set a POSIX ACL ({exc.strerror})")
    await lsp.read(path)
    await edit(lsp, path, "orig line", "agent line")
    assert path.read_text() == "agent line\n"
    assert os.getxattr(path, "system.posix_acl_access") == acl


JAPANESE = (
    "# 設定ファイルの読み込み\n"
    "def load(path):\n"
    "    # ファイルが存在しない場合は空の辞書を返す\n"
    "    return {}  # 値を設定する\n"
)
CHINESE = (
    "# 配置文件的读取\n"
    "def load(path):\n"
    "    # 如果文件不存在则返回空字典\n"
    "    return {}  # 设置默认值\n"
)
# (name, text, how it is stored, the encodings a reader may fairly call it)
LEGACY = [
    ("short-cp1252.txt", "é\n", "cp1252", {"cp1252"}),
    ("portuguese.txt", "ação não\nvalue = 1\n", "cp1252", {"cp1252"}),
    ("copyright.c", "/* © 2020 ACME */\nint x;\n", "latin-1", {"cp1252", "iso8859-1"}),
    ("german.txt", "Grüße\ntwo\nschön\n", "latin-1", {"cp1252", "iso8859-1"}),
    ("japanese.py", JAPANESE, "shift_jis", {"shift_jis", "cp932"}),
    ("chinese.py", CHINESE, "gb18030", {"gb18030", "gbk", "gb2312"}),
]


@pytest.mark.parametrize(("name", "text", "codec", "labels"), LEGACY, ids=[c[0] for c in LEGACY])
async def test_legacy_files_read_and_edit_in_their_own_encoding(
    lsp: Session, workspace: Path, name: str, text: str, codec: str, labels: set[str]
) -> None:
    path = workspace / name
    path.write_bytes(text.encode(codec))
    file = (await lsp.read(path))["file"]
    assert file["encoding"] in labels
    shown = "\n".join(line.split("\t", 1)[1] for line in file["content"].split("\n"))
    assert shown == text.rstrip("\n")
    last = text.splitlines()[-1]
    await edit(lsp, path, last, last + " ok")
    after = text.replace(last, last + " ok").encode(codec)
    assert path.read_bytes() == after
    assert b"\x00" not in path.read_bytes()


async def test_an_edit_never_adds_a_nul_byte(lsp: Session, workspace: Path) -> None:
    path = workspace / "plain.txt"
    path.write_bytes("café = 1\n".encode("cp1252"))
    await lsp.read(path)
    error = await lsp.error(
        "readkeeper/edit",
        {"file_path": str(path), "old_string": "= 1", "new_string": "= 1\x00"},
    )
    assert error.data["kind"] == "unsupported"
    assert "NUL" in error.message
    assert path.read_bytes() == "café = 1\n".encode("cp1252")
