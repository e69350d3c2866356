"""A later partial view (a search, a range, a symbol, read_many's range) adds what it
shows and never moves what the session holds of the lines it did not show: `changes`
still reports their change (state/readstate.py `held_before`, watch/tracks.py)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from helpers import eventually
from mcp_helpers import call, core_client, text_of, until_watching

ORIGINAL = "def tok():\n    return 1\n\n\nother = 2\nmore = 3\n"
CHANGED = "def tok():\n    return 1\n\n\nother = 'CHANGED BY USER'\nmore = 3\n"
CHANGED_TOO = "def tok2():\n    return 1\n\n\nother = 'CHANGED BY USER'\nmore = 3\n"

# What the agent looks at after the change: each shows line 1 (or the symbol) only.
PARTIAL_VIEWS: dict[str, tuple[str, dict[str, Any]]] = {
    "grep": ("grep", {"pattern": "tok"}),
    "grep_with_context": ("grep", {"pattern": "tok", "context": 1}),
    "ranged_read": ("read", {"file_path": "a.py", "offset": 1, "limit": 1}),
    "symbol_read": ("read", {"file_path": "a.py", "symbol": "tok2"}),
    "read_many_range": ("read_many", {"file_paths": ["a.py"], "offset": 1, "limit": 2}),
}


async def unseen_change_reported(client: Client, tool: str = "changes") -> str:
    async def reported() -> str:
        # The diff is the text's (the structured result has the facts: mcp/facts.py).
        if tool == "changes":
            return text_of(await client.call_tool("changes", {}))
        return text_of(await client.call_tool("attachments", {"types": ["changes"]}))

    async def has_it() -> str:
        seen = await reported()
        return seen if "CHANGED BY USER" in seen else ""

    return await eventually(has_it, "the change of the line the search did not show")


@contextlib.asynccontextmanager
async def read_then_changed(workspace: Path, changed: str) -> AsyncIterator[Client]:
    """A client that read a.py whole (ORIGINAL), then a.py written `changed`."""
    path = workspace / "a.py"
    path.write_text(ORIGINAL)
    async with core_client(workspace) as client:
        await until_watching(client)
        await call(client, "read", file_path="a.py")
        path.write_text(changed)
        yield client


# Each view, the change then asked for by `changes`; grep's by the change notices too.
TOLD = [*((view, "changes") for view in sorted(PARTIAL_VIEWS)), ("grep", "attachments")]


@pytest.mark.parametrize(("view", "told_by"), TOLD)
async def test_a_partial_view_never_hides_a_change_of_lines_it_did_not_show(
    workspace: Path, view: str, told_by: str
) -> None:
    # line 1 is seen next; line 5 is never seen again
    async with read_then_changed(workspace, CHANGED_TOO) as client:
        tool, arguments = PARTIAL_VIEWS[view]
        await call(client, tool, **arguments)
        assert "-other = 2" in await unseen_change_reported(client, told_by)


async def test_a_whole_read_since_moves_the_baseline(workspace: Path) -> None:
    path = workspace / "a.py"
    async with read_then_changed(workspace, CHANGED) as client:
        await call(client, "grep", pattern="tok")
        await unseen_change_reported(client)  # told once...
        assert (await call(client, "changes"))["changes"] == []  # ...and only once
        path.write_text(CHANGED_TOO)
        await call(client, "read", file_path="a.py")  # the change shown whole
        await call(client, "grep", pattern="tok")
        assert (await call(client, "changes"))["changes"] == []
