"""A read never counts as seeing what it did not show, through the real server over
LSP: after another program's change, a ranged, symbol or read_many read of other lines
leaves it unseen, so `readkeeper/write` is refused stale until a whole read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from conftest import Session

ORIGINAL = "".join(f"v{i} = {i}\n" for i in range(1, 101))
SOURCE = "def f1():\n    return 1\n\n\n" + ORIGINAL
THEIRS = SOURCE.replace("v80 = 80\n", "v80 = 'THEIR UNSEEN WORK'\n")

VIEWS: dict[str, tuple[str, dict[str, Any]]] = {
    "range": ("readkeeper/read", {"offset": 90, "limit": 5}),
    "symbol": ("readkeeper/read", {"symbol": "f1"}),
    "anchors": ("readkeeper/read", {"offset": 1, "limit": 3, "line_format": "anchors"}),
    "read_many": ("readkeeper/readMany", {"offset": 1, "limit": 3}),
}


def later(path: Path, text: str) -> None:
    """Write `text` as another program would, with an mtime that surely differs."""
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


@pytest.mark.parametrize("view", sorted(VIEWS))
async def test_a_write_after_a_partial_read_of_a_changed_file_is_stale(
    lsp: Session, workspace: Path, view: str
) -> None:
    path = workspace / "m.py"
    path.write_text(SOURCE)
    await lsp.read(path)
    later(path, THEIRS)
    method, params = VIEWS[view]
    where = {"file_paths": [str(path)]} if method.endswith("Many") else {"file_path": str(path)}
    await lsp.client.request(method, {**where, **params})
    write = {"file_path": str(path), "content": SOURCE}
    error = await lsp.error("readkeeper/write", write)
    assert error.data["kind"] == "stale"
    assert "THEIR UNSEEN WORK" in error.message
    assert "THEIR UNSEEN WORK" in path.read_text()
    await lsp.read(path)
    await lsp.client.request("readkeeper/write", write)
    assert path.read_text() == SOURCE
