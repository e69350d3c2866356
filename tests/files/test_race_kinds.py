"""A race is answered as a race, by every tool (attack round 11, A06b and A23): while
another process swaps a folder with a symlink to a folder outside (renameat2
RENAME_EXCHANGE, as fast as the kernel allows), a listing, a search, a glob, a mkdir and
a create beneath it are answered `stale` (read again) or, when the link was seen,
`outside_workspace`: never `internal` ("a fault in readkeeper"), `unsupported` ("not a
folder or a regular file") nor `bad_params` ("a file stands where one of its folders
should be"). test_sandbox_races.py and test_move_races.py hold the same race for what
gets out; this file, for what the agent is told.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from sandbox_helpers import Tally, assert_only, in_batches, listing, outside_folder, sandbox_session
from swapper import exchange, swapping
from test_sandbox_races import settle_into

from conftest import Session

TRIES = 300
RACE = ("stale", "outside_workspace")


@pytest_asyncio.fixture
async def server(workspace: Path, tmp_path: Path) -> AsyncIterator[Session]:
    async with sandbox_session(workspace, tmp_path / "server.log", {"watch": False}) as session:
        yield session


def swapped(workspace: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """ws/d (with files) and ws/.d.link to an outside folder holding their twins."""
    outside = outside_folder(tmp_path)
    folder = workspace / "d"
    folder.mkdir()
    for i in range(3):
        (folder / f"f{i}.txt").write_text("inside\n")
        (outside / f"f{i}.txt").write_text("outside\n")
    link = workspace / ".d.link"
    link.symlink_to(outside, target_is_directory=True)
    return folder, outside, link


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("readkeeper/list", {"path": "d"}),
        ("readkeeper/grep", {"pattern": "inside", "path": "d"}),
        ("readkeeper/glob", {"pattern": "*", "path": "d"}),
        ("readkeeper/stat", {"path": "d"}),
    ],
)
async def test_a_look_at_a_folder_swapped_for_a_link_out_is_stale_never_a_fault(
    server: Session, workspace: Path, tmp_path: Path, method: str, params: dict[str, Any]
) -> None:
    folder, _, link = swapped(workspace, tmp_path)
    tally = Tally()
    with swapping(folder, link):
        await in_batches(
            TRIES, lambda i: server.client.request(method, params), settle_into(tally, method)
        )
    tally.assert_sealed(any_ok=False)
    assert_only(tally, *RACE)
    if folder.is_symlink():
        exchange(folder, link)
    await server.client.request(method, params)  # the next call works


@pytest.mark.parametrize("method", ["readkeeper/mkdir", "readkeeper/write"])
async def test_a_create_beneath_a_folder_swapped_for_a_link_out_is_stale_never_bad_params(
    server: Session, workspace: Path, tmp_path: Path, method: str
) -> None:
    folder, outside, link = swapped(workspace, tmp_path)
    before = listing(outside)
    tally = Tally()

    async def create(i: int) -> Any:
        if method == "readkeeper/mkdir":
            return await server.client.request(method, {"path": f"d/new-{i}/deeper"})
        params = {"file_path": f"d/new-{i}/f.txt", "content": "new\n"}
        return await server.client.request(method, params)

    with swapping(folder, link):
        await in_batches(TRIES, create, settle_into(tally, method))
    assert listing(outside) == before
    tally.assert_sealed(any_ok=False)
    assert_only(tally, *RACE)
