"""Over LSP: a search or a ranged read after a change shows some lines of it and never
moves what the session holds of the others: `readkeeper/changes` reports their change
from the content read (state/readstate.py `held_before`, watch/tracks.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from watch_helpers import Watched, make, serving, until

INOTIFY = {"watcher": "inotify"}
ORIGINAL = "def tok():\n    return 1\n\n\nother = 2\nmore = 3\n"
CHANGED = "def tok2():\n    return 1\n\n\nother = 'CHANGED BY USER'\nmore = 3\n"


async def watching(w: Watched) -> None:
    async def now() -> bool:
        return (await w.watcher())["state"] == "watching"

    await until(now, "the watcher to watch")


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("readkeeper/grep", {"pattern": "tok"}),
        ("readkeeper/grep", {"pattern": "tok", "context": 1}),
        ("readkeeper/read", {"file_path": "a.py", "offset": 1, "limit": 1}),
    ],
)
async def test_lsp_a_partial_view_after_a_change_never_hides_the_rest_of_it(
    workspace: Path, method: str, params: dict[str, Any]
) -> None:
    path = make(workspace / "a.py", ORIGINAL)
    async with serving(workspace, INOTIFY) as w:
        await watching(w)
        await w.read("a.py")
        path.write_text(CHANGED)
        await w.sentinel()  # the change heard before the partial view
        await w.request(method, params)
        [change] = await w.changes()
        assert "-other = 2" in change["diff"]
        assert "+other = 'CHANGED BY USER'" in change["diff"]
        assert await w.changes() == []  # reported once
