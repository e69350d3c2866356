"""No way out of the workspace, under a race (issue 10): while another process swaps a
name with a symlink out of the workspace, as fast as the kernel allows, reads, creates,
edits and writes through the real server must never touch the outside.

Checking a path's real path and then opening it by name is a race: the name can become
a symlink out in between. Each test runs `TRIES` requests (20 at a time) against a
swapper process exchanging the name (a file, or its parent folder) with a symlink to
the same name outside the workspace (renameat2 RENAME_EXCHANGE), then counts:

- escapes: a read that returned the outside secret, a file created outside, an outside
  file whose bytes changed (or a leftover temporary file beside it);
- errors without `data.kind`: every failure must be a readkeeper refusal, never a raw
  OSError turned into -32603;
- and that the race was live: some tries met the inside name and some the link.

The watcher is off (`watch: false`): it plays no part in these operations, and tens of
thousands of rename events a second would only cost the shared machine CPU.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from sandbox_helpers import (
    LIVE_TRIES_FACTOR,
    SECRET,
    Tally,
    in_batches,
    leaked,
    listing,
    outside_folder,
    sandbox_session,
)
from swapper import exchange, swapping

from conftest import Session
from readkeeper.client import JsonRpcException

TRIES = 1000
RACE_SETTINGS = {"watch": False}


@pytest_asyncio.fixture
async def server(workspace: Path, tmp_path: Path) -> AsyncIterator[Session]:
    async with sandbox_session(workspace, tmp_path / "server.log", RACE_SETTINGS) as session:
        yield session


def settle_into(tally: Tally, what: str) -> Any:
    """A `settle` for `in_batches`: errors to the tally, results checked for the secret."""

    def settle(i: int, outcome: Any) -> None:
        tally.tries += 1
        if isinstance(outcome, BaseException):
            tally.error(outcome, f"{what} {i}")
        elif leaked(outcome):
            tally.escapes.append(f"{what} {i}: the result carries the outside secret")
        else:
            tally.ok += 1

    return settle


# --- reads ----------------------------------------------------------------------------------


async def test_a_read_never_returns_a_file_swapped_for_a_link_out(
    server: Session, workspace: Path, tmp_path: Path
) -> None:
    secret = outside_folder(tmp_path) / "r.txt"
    secret.write_text(f"{SECRET}\n")
    target = workspace / "r.txt"
    target.write_text("inside\n")
    link = workspace / ".r.txt.link"
    link.symlink_to(secret)
    tally = Tally()
    with swapping(target, link):
        await in_batches(
            TRIES,
            lambda i: server.read(target, force=True),
            settle_into(tally, "read"),
            until=tally.live,
        )
    tally.assert_sealed()


async def test_a_read_never_returns_a_file_whose_folder_is_swapped_for_a_link_out(
    server: Session, workspace: Path, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    (outside / "r.txt").write_text(f"{SECRET}\n")
    folder = workspace / "rd"
    folder.mkdir()
    (folder / "r.txt").write_text("inside\n")
    link = workspace / ".rd.link"
    link.symlink_to(outside, target_is_directory=True)
    target = folder / "r.txt"
    tally = Tally()
    with swapping(folder, link):
        await in_batches(
            TRIES,
            lambda i: server.read(target, force=True),
            settle_into(tally, "read"),
            until=tally.live,
        )
    tally.assert_sealed()


# --- creates, edits and writes under a swapped folder ---------------------------------------


async def test_a_create_never_lands_in_a_folder_swapped_in_from_outside(
    server: Session, workspace: Path, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    folder = workspace / "d"
    folder.mkdir()
    link = workspace / ".d.link"
    link.symlink_to(outside, target_is_directory=True)
    tally = Tally()

    async def create(i: int) -> Any:
        path = folder / f"new-{i}.txt"
        return await server.client.request(
            "readkeeper/write", {"file_path": str(path), "content": f"created {i}\n"}
        )

    with swapping(folder, link):
        await in_batches(TRIES, create, settle_into(tally, "create"), until=tally.live)
    tally.escapes += [f"created outside: {name}" for name in listing(outside)]
    tally.assert_sealed()


def no_error(i: int, outcome: Any) -> None:
    assert not isinstance(outcome, BaseException), f"try {i}: {outcome!r}"


def twin_folders(workspace: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """ws/e and an outside folder, and ws/.e.link to the outside one."""
    outside = outside_folder(tmp_path)
    folder = workspace / "e"
    folder.mkdir()
    link = workspace / ".e.link"
    link.symlink_to(outside, target_is_directory=True)
    return folder, outside, link


def twin_files(folder: Path, outside: Path, round_: int, count: int) -> list[str]:
    """`count` files in `folder` and the same in `outside`, byte for byte (so a change
    that follows the link out passes every content check): their names."""
    names = [f"f{round_}-{i}.txt" for i in range(count)]
    for name in names:
        for where in (folder, outside):
            (where / name).write_text(f"file {name}\nkeep this line\n")
    return names


def outside_changes(outside: Path, before: dict[str, bytes]) -> list[str]:
    now = {name: (outside / name).read_bytes() for name in listing(outside)}
    changed = [f"modified outside: {n}" for n in before if now.get(n) != before[n]]
    return changed + [f"created outside: {n}" for n in now if n not in before]


async def _race_changes(
    server: Session, workspace: Path, tmp_path: Path, method: str, params: Any
) -> None:
    """Read each file first (an edit or write needs it), then race one `method` request
    per file against the swapper; the outside twins must end as they began."""
    folder, outside, link = twin_folders(workspace, tmp_path)
    tally = Tally()
    before: dict[str, bytes] = {}
    # Rounds of fresh files (each file takes one try) until the race was met, at most
    # as many tries in all as in_batches' `until` allows.
    for round_ in range(LIVE_TRIES_FACTOR):
        names = twin_files(folder, outside, round_, TRIES)
        before |= {name: (outside / name).read_bytes() for name in names}
        paths = [folder / name for name in names]
        await in_batches(TRIES, lambda i, paths=paths: server.read(paths[i]), no_error)

        async def change(i: int, paths: list[Path] = paths) -> Any:
            return await server.client.request(method, {"file_path": str(paths[i]), **params(i)})

        with swapping(folder, link):
            await in_batches(TRIES, change, settle_into(tally, method))
        if folder.is_symlink():
            exchange(folder, link)
        if tally.live(any_ok=False):
            break
    tally.escapes += outside_changes(outside, before)
    # That a change can succeed here at all, shown after the race (as below).
    control = folder / "control.txt"
    control.write_text("keep this line\n")
    await server.read(control)
    await server.client.request(method, {"file_path": str(control), **params(TRIES)})
    assert control.read_text() != "keep this line\n"
    tally.assert_sealed(any_ok=False)


async def test_an_edit_never_changes_a_file_whose_folder_is_swapped_for_a_link_out(
    server: Session, workspace: Path, tmp_path: Path
) -> None:
    await _race_changes(
        server,
        workspace,
        tmp_path,
        "readkeeper/edit",
        lambda i: {"old_string": "keep this line", "new_string": f"edited {i}"},
    )


async def test_a_write_never_replaces_a_file_whose_folder_is_swapped_for_a_link_out(
    server: Session, workspace: Path, tmp_path: Path
) -> None:
    await _race_changes(
        server,
        workspace,
        tmp_path,
        "readkeeper/write",
        lambda i: {"content": f"rewritten {i}\n"},
    )


# --- edits and writes of a file swapped for a link out --------------------------------------

LINES = ("line A", "line B")


async def _race_file_changes(server: Session, workspace: Path, tmp_path: Path, method: str) -> None:
    """One file, swapped with a link to its outside twin, which holds the secret and
    the same edited line. Each try reads the file and changes that line to its other
    spelling, whatever the read saw (so a read that got out is followed by a change
    that would get out too); one try at a time, since each depends on the last."""
    twin = outside_folder(tmp_path) / "f.txt"
    twin.write_text(f"{SECRET}\nline A\n")
    before = twin.read_bytes()
    target = workspace / "f.txt"
    target.write_text("inside\nline A\n")
    link = workspace / ".f.txt.link"
    link.symlink_to(twin)
    tally = Tally()

    async def one(i: int) -> tuple[Any, Any]:
        try:
            seen = await server.read(target, force=True)
        except JsonRpcException as exc:
            return exc, None
        old, new = LINES if LINES[0] in str(seen) else LINES[::-1]
        if method == "readkeeper/edit":
            params = {"old_string": old, "new_string": new}
        else:
            params = {"content": f"inside\n{new}\n"}
        try:
            changed = await server.client.request(method, {"file_path": str(target), **params})
        except JsonRpcException as exc:
            changed = exc
        return seen, changed

    def settle(i: int, outcome: Any) -> None:
        if isinstance(outcome, BaseException):
            raise outcome
        tally.tries += 1
        for what, part in zip(("read", method), outcome, strict=True):
            if isinstance(part, BaseException):
                tally.error(part, f"{what} {i}")
            elif part is not None and leaked(part):
                tally.escapes.append(f"{what} {i}: the result carries the outside secret")
        if outcome[1] is not None and not isinstance(outcome[1], BaseException):
            tally.ok += 1

    with swapping(target, link):
        await in_batches(TRIES, one, settle, batch=1, until=lambda: tally.live(any_ok=False))
    if twin.read_bytes() != before:
        tally.escapes.append(f"modified outside: {twin.name}")
    tally.escapes += [f"created outside: {n}" for n in listing(twin.parent) if n != twin.name]
    # That a change can succeed here at all (else refusing every change would pass) is
    # shown after the race, not by a try that happened to slip between two swaps: on a
    # loaded machine every read and change may run across one (and be refused `stale`).
    if target.is_symlink():
        exchange(target, link)
    held = target.read_text()
    seen, changed = await one(TRIES)
    assert not isinstance(seen, BaseException), seen
    assert not isinstance(changed, BaseException), changed
    assert target.read_text() not in (held, twin.read_text())
    tally.assert_sealed(any_ok=False)


async def test_an_edit_never_changes_a_file_swapped_for_a_link_out(
    server: Session, workspace: Path, tmp_path: Path
) -> None:
    await _race_file_changes(server, workspace, tmp_path, "readkeeper/edit")


async def test_a_write_never_replaces_a_file_swapped_for_a_link_out(
    server: Session, workspace: Path, tmp_path: Path
) -> None:
    await _race_file_changes(server, workspace, tmp_path, "readkeeper/write")


# --- guesses beside a swapped folder --------------------------------------------------------


async def test_a_miss_beside_a_folder_swapped_for_a_link_out_guesses_nothing_outside(
    server: Session, workspace: Path, tmp_path: Path
) -> None:
    """Round 47: did-you-mean listed the folder a link swapped in led to (56 of 1,214
    reads of a missing `d/d/passwdd` with `d/d` swapped for a link to /etc guessed
    /etc's `passwd`, `shadow`). Neither the message nor the suggestions name anything
    outside."""
    outside = outside_folder(tmp_path)
    for name in ("passwd", "passwd-", "shadow"):
        (outside / name).write_text(f"{SECRET}\n")
    folder = workspace / "dd"
    folder.mkdir()
    (folder / "f.txt").write_text("inside\n")
    link = workspace / ".dd.link"
    link.symlink_to(outside, target_is_directory=True)
    tally = Tally()

    def settle(i: int, outcome: Any) -> None:
        tally.tries += 1
        assert isinstance(outcome, JsonRpcException), outcome
        tally.error(outcome, f"read {i}")
        said = f"{outcome.message} {outcome.data}"
        if "passwd" in said.replace("passwdd", "") or "shadow" in said:
            tally.escapes.append(f"read {i}: {said[:300]}")

    with swapping(folder, link):
        await in_batches(300, lambda i: server.read(folder / "passwdd"), settle)
    assert tally.escapes == [], tally.summary()
    assert tally.without_kind == [], tally.summary()
