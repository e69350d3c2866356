"""No way out of the workspace for a move or a mkdir, under a race: while another process
swaps a folder with a symlink to a folder outside (renameat2 RENAME_EXCHANGE, as fast as
the kernel allows), moves into it, moves out of it and mkdirs beneath it through the
real server must never create, remove or change anything outside
(tests/files/test_sandbox_races.py has the same race for reads, edits and writes).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from sandbox_helpers import (
    Tally,
    in_batches,
    listing,
    outside_folder,
    sandbox_session,
)
from swapper import exchange, swapping
from test_sandbox_races import settle_into

from conftest import Session

TRIES = 300


@pytest_asyncio.fixture
async def server(workspace: Path, tmp_path: Path) -> AsyncIterator[Session]:
    async with sandbox_session(workspace, tmp_path / "server.log", {"watch": False}) as session:
        yield session


def swapped_folder(workspace: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    outside = outside_folder(tmp_path)
    folder = workspace / "d"
    folder.mkdir()
    link = workspace / ".d.link"
    link.symlink_to(outside, target_is_directory=True)
    return folder, outside, link


def restored(folder: Path, link: Path) -> None:
    if folder.is_symlink():
        exchange(folder, link)


async def test_a_move_never_lands_in_a_folder_swapped_in_from_outside(
    server: Session, workspace: Path, tmp_path: Path
) -> None:
    folder, outside, link = swapped_folder(workspace, tmp_path)
    for i in range(TRIES):
        (workspace / f"m{i}.txt").write_text(f"moved {i}\n")
    tally = Tally()

    async def move(i: int) -> Any:
        return await server.client.request(
            "readkeeper/move",
            {"source": str(workspace / f"m{i}.txt"), "destination": str(folder / f"m{i}.txt")},
        )

    with swapping(folder, link):
        await in_batches(TRIES, move, settle_into(tally, "move"))
    tally.escapes += [f"moved outside: {name}" for name in listing(outside)]
    restored(folder, link)
    tally.assert_sealed(any_ok=False)
    # Every file is where it was or where it was sent inside: none lost.
    for i in range(TRIES):
        assert (workspace / f"m{i}.txt").exists() or (folder / f"m{i}.txt").exists(), i


async def test_a_move_never_takes_a_file_from_a_folder_swapped_in_from_outside(
    server: Session, workspace: Path, tmp_path: Path
) -> None:
    folder, outside, link = swapped_folder(workspace, tmp_path)
    for i in range(TRIES):
        (folder / f"f{i}.txt").write_text(f"inside {i}\n")
        (outside / f"f{i}.txt").write_text(f"outside {i}\n")
    before = listing(outside)
    tally = Tally()

    async def move(i: int) -> Any:
        return await server.client.request(
            "readkeeper/move",
            {"source": str(folder / f"f{i}.txt"), "destination": str(workspace / f"got{i}.txt")},
        )

    with swapping(folder, link):
        await in_batches(TRIES, move, settle_into(tally, "move"))
    restored(folder, link)
    tally.escapes += [
        f"taken from outside: {n}" for n in sorted(set(before) - set(listing(outside)))
    ]
    tally.escapes += [
        f"an outside file moved in: got{i}.txt"
        for i in range(TRIES)
        if (workspace / f"got{i}.txt").exists()
        and (workspace / f"got{i}.txt").read_text().startswith("outside")
    ]
    tally.assert_sealed(any_ok=False)


async def test_a_mkdir_never_makes_a_folder_in_one_swapped_in_from_outside(
    server: Session, workspace: Path, tmp_path: Path
) -> None:
    folder, outside, link = swapped_folder(workspace, tmp_path)
    tally = Tally()

    async def mkdir(i: int) -> Any:
        return await server.client.request(
            "readkeeper/mkdir", {"path": str(folder / f"new{i}" / "deeper")}
        )

    with swapping(folder, link):
        await in_batches(TRIES, mkdir, settle_into(tally, "mkdir"))
    tally.escapes += [f"made outside: {name}" for name in listing(outside)]
    restored(folder, link)
    tally.assert_sealed(any_ok=False)
    # That a mkdir can succeed here at all, shown after the race.
    await server.client.request("readkeeper/mkdir", {"path": str(folder / "control" / "x")})
    assert (folder / "control" / "x").is_dir()
