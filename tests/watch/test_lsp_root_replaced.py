"""A workspace root deleted and created again, through the real server: `rm -rf ws &&
git clone ... ws`, `mv ws ws.old && mkdir ws`. readkeeper opens the new folder (never a
symlink put in its place), watches it, says in `readkeeper/stats` whether it watches at
each step, and refuses an edit of a file read in the old tree until it is read again.
A root deleted for good gets a clear error, never "read it again".
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from readkeeper.client import JsonRpcException
from watch_helpers import Watched, make, serving, until


def remove_tree(root: Path) -> None:
    shutil.rmtree(root)


def move_away(root: Path) -> None:
    root.rename(root.with_name(root.name + ".old"))


def fill(root: Path) -> None:
    """What the new tree holds: a.txt as it was, b.txt changed."""
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    (root / "b.txt").write_text("bee, changed\n")


def clone_like(root: Path) -> None:
    """What `git clone` does: the folder first, its .git, then the files one by one."""
    root.mkdir()
    make(root / ".git" / "HEAD", "ref: refs/heads/main\n")
    make(root / "a.txt", "one\n")
    make(root / "b.txt", "bee, changed\n")


REPLACEMENTS: dict[str, tuple[Callable[[Path], None], Callable[[Path], None]]] = {
    "rm -rf, then files": (remove_tree, fill),
    "mv away, then mkdir": (move_away, fill),
    "rm -rf, then a clone": (remove_tree, clone_like),
}


async def error_of(w: Watched, method: str, params: dict[str, Any]) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await w.request(method, params)
    return caught.value


async def watching_again(w: Watched, state: str = "watching") -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        watcher = await w.watcher()
        roots = watcher["polled_roots"] if state == "polling" else watcher["watched_roots"]
        ok = watcher["state"] == state and list(roots) == [str(w.root)]
        return watcher if ok else None

    found: dict[str, Any] = await until(check, "the new folder to be watched")
    return found


async def missing(w: Watched) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        watcher = await w.watcher()
        return watcher if str(w.root) in watcher["missing_roots"] else None

    found: dict[str, Any] = await until(check, "the root to be said missing")
    return found


@pytest.mark.parametrize("replacement", list(REPLACEMENTS))
async def test_a_root_deleted_and_created_again_is_opened_and_watched_again(
    workspace: Path, replacement: str
) -> None:
    await replaced_while_served(workspace, *REPLACEMENTS[replacement], {}, "watching")


async def test_a_polled_root_deleted_and_created_again_is_polled_again(workspace: Path) -> None:
    polling = {"watcher": "polling", "watch_poll_interval_ms": 100}
    await replaced_while_served(workspace, move_away, fill, polling, "polling")


async def replaced_while_served(
    workspace: Path,
    remove: Callable[[Path], None],
    create: Callable[[Path], None],
    settings: dict[str, Any],
    state: str,
) -> None:
    """Read a.txt and b.txt, replace the root, and check every step (see the module)."""
    make(workspace / "a.txt", "one\n")
    make(workspace / "b.txt", "bee\n")
    async with serving(workspace, settings) as w:
        assert (await w.ready())["state"] == state
        await w.read("a.txt")
        await w.read("b.txt")

        remove(workspace)
        gone = await missing(w)  # never `watching` a folder that is not there
        assert gone["state"] == "root_missing"
        assert gone["watched_roots"] == []
        error = await error_of(w, "readkeeper/read", {"file_path": "a.txt"})
        assert error.data["kind"] == "not_found"
        assert error.data["root_missing"] is True
        assert "disappeared" not in error.message
        assert "is not there" in error.message

        create(workspace)
        watcher = await watching_again(w, state)
        assert watcher["missing_roots"] == {}

        # a.txt has the same bytes, but it is a file of another tree: read it first.
        edit = {"file_path": "a.txt", "old_string": "one", "new_string": "two"}
        refused = await error_of(w, "readkeeper/edit", edit)
        assert (refused.data["kind"], refused.data["root_replaced"]) == ("stale", True)
        assert "Read it again" in refused.message
        assert (workspace / "a.txt").read_text() == "one\n"
        refused = await error_of(w, "readkeeper/write", {"file_path": "b.txt", "content": "x\n"})
        assert refused.data["kind"] == "stale"
        assert (workspace / "b.txt").read_text() == "bee, changed\n"

        # A read is a new read: the content decides (a.txt unchanged, b.txt not).
        reread = await w.request("readkeeper/read", {"file_path": "a.txt"})
        assert reread["type"] in ("file_unchanged", "text")
        changed = await w.request("readkeeper/read", {"file_path": "b.txt"})
        assert "bee, changed" in str(changed["file"])
        done = await w.request("readkeeper/edit", edit)
        assert done["replacements"] == 1
        assert (workspace / "a.txt").read_text() == "two\n"
        created = await w.request("readkeeper/write", {"file_path": "c.txt", "content": "c\n"})
        assert created["created"] is True
        assert (workspace / "c.txt").read_text() == "c\n"

        # Notices come from the new folder.
        (workspace / "b.txt").write_text("bee, changed again\n")
        await until(
            lambda: any("+bee, changed again" in n["diff"] for n in w.pushed("b.txt")),
            "a notice of the change made in the new folder",
        )
        assert (await w.watcher())["state"] == state


async def test_a_root_deleted_for_good_gets_a_clear_error(workspace: Path) -> None:
    make(workspace / "a.txt", "one\n")
    async with serving(workspace) as w:
        await w.ready()
        await w.read("a.txt")
        shutil.rmtree(workspace)
        watcher = await missing(w)
        assert watcher["state"] == "root_missing"
        calls = [
            ("readkeeper/read", {"file_path": "a.txt"}),
            ("readkeeper/write", {"file_path": "new.txt", "content": "x\n"}),
            ("readkeeper/edit", {"file_path": "a.txt", "old_string": "one", "new_string": "2"}),
        ]
        for method, params in calls:
            error = await error_of(w, method, params)
            assert error.data["kind"] == "not_found", (method, error.message)
            assert error.data["root_missing"] is True
            assert f"{workspace} is not there" in error.message
            assert "disappeared" not in error.message
        assert not workspace.exists()  # nothing made it again


async def test_a_root_replaced_by_a_link_out_is_refused_never_followed(
    workspace: Path, tmp_path: Path
) -> None:
    make(workspace / "a.txt", "one\n")
    outside = tmp_path / "outside"
    make(outside / "a.txt", "SECRET\n")
    async with serving(workspace) as w:
        await w.ready()
        await w.read("a.txt")
        move_away(workspace)
        workspace.symlink_to(outside, target_is_directory=True)
        assert (await missing(w))["watched_roots"] == []
        error = await error_of(w, "readkeeper/read", {"file_path": "a.txt"})
        assert error.data["kind"] == "outside_workspace"
        assert "symbolic link" in error.message
        assert "SECRET" not in error.message
        for params in (
            {"file_path": "a.txt", "content": "x\n"},
            {"file_path": "new.txt", "content": "x\n"},
        ):
            refused = await error_of(w, "readkeeper/write", params)
            assert refused.data["kind"] == "outside_workspace"
        error = await error_of(
            w, "readkeeper/edit", {"file_path": "a.txt", "old_string": "SECRET", "new_string": "x"}
        )
        assert error.data["kind"] == "outside_workspace"
        assert sorted(p.name for p in outside.iterdir()) == ["a.txt"]
        assert (outside / "a.txt").read_text() == "SECRET\n"
        # Once a folder is back in its place, it is the root again.
        workspace.unlink()
        fill(workspace)
        await watching_again(w)
        reread = await w.request("readkeeper/read", {"file_path": "b.txt"})
        assert "bee, changed" in reread["file"]["content"]


async def test_an_allowed_folder_deleted_and_created_again_is_opened_again(
    workspace: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra"
    make(extra / "x.txt", "x1\n")
    async with serving(workspace, {"allowed_paths": [str(extra)]}) as w:
        await w.ready()
        await w.read(str(extra / "x.txt"))
        shutil.rmtree(extra)
        error = await error_of(w, "readkeeper/read", {"file_path": str(extra / "x.txt")})
        assert (error.data["kind"], error.data["root_missing"]) == ("not_found", True)
        make(extra / "x.txt", "x2\n")
        reread = await w.request("readkeeper/read", {"file_path": str(extra / "x.txt")})
        assert "x2" in str(reread["file"])
