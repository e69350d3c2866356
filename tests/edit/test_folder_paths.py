"""A path that ends in a slash (or in `/.`, `/..`) names a folder. Every call that
creates, changes or moves a file refuses it as `bad_params` with the call that works,
on every front end: `write_file`/`write` to `new/` made a file named `new`, and an edit
of `a.txt/` changed `a.txt` (POSIX opens neither). mkdir, and a folder moved to `x/`,
are served: there the slash names what they make."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from mcp import Client

from conftest import Session
from mcp_helpers import error_kind, mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError

FOLDERISH = ("new/", "new/.", "new//", "sub/new/", "a.txt/", "a.txt/.")


def refused(core: Readkeeper, method: str, **params: object) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, method, params)
    return caught.value


def _entries(workspace: Path) -> list[str]:
    return sorted(str(p.relative_to(workspace)) for p in workspace.rglob("*"))


@pytest.fixture
def tree(workspace: Path) -> list[str]:
    (workspace / "a.txt").write_text("one\n")
    (workspace / "sub").mkdir()
    return _entries(workspace)


@pytest.mark.parametrize("path", FOLDERISH)
def test_write_to_a_folder_path_is_refused_and_makes_nothing(
    core: Readkeeper, workspace: Path, tree: list[str], path: str
) -> None:
    calls.call(core, "read", {"file_path": "a.txt"})
    error = refused(core, "write", file_path=path, content="x\n")
    assert error.kind == "bad_params"
    assert error.data["field"] == "file_path"
    assert "names a folder" in error.message
    assert "readkeeper/write" in error.message  # the call that writes a file in it
    assert "name.txt" in error.message
    assert _entries(workspace) == tree
    assert (workspace / "a.txt").read_text() == "one\n"


@pytest.mark.parametrize("path", ["a.txt/", "a.txt/."])
def test_edits_of_a_folder_path_are_refused(
    core: Readkeeper, workspace: Path, tree: list[str], path: str
) -> None:
    calls.call(core, "read", {"file_path": "a.txt"})
    for method, params in (
        ("edit", {"old_string": "one", "new_string": "two"}),
        ("patch", {"edits": [{"old_string": "one", "new_string": "two"}]}),
        ("edit", {"anchor_edits": [{"op": "replace", "start": "1", "lines": ["two"]}]}),
    ):
        error = refused(core, method, file_path=path, **params)
        assert error.kind == "bad_params", (method, error.message)
    assert (workspace / "a.txt").read_text() == "one\n"


@pytest.mark.parametrize(
    ("source", "destination"),
    [("a.txt", "b/"), ("a.txt", "b/."), ("a.txt/", "b.txt"), ("a.txt", "sub/")],
)
def test_a_file_moved_by_a_folder_path_is_refused(
    core: Readkeeper, workspace: Path, tree: list[str], source: str, destination: str
) -> None:
    error = refused(core, "move", source=source, destination=destination)
    assert error.kind == "bad_params"
    assert "names a folder" in error.message
    assert _entries(workspace) == tree


def test_a_folder_moves_to_a_folder_path_and_mkdir_takes_one(
    core: Readkeeper, workspace: Path, tree: list[str]
) -> None:
    calls.call(core, "move", {"source": "sub/", "destination": "moved/"})
    assert (workspace / "moved").is_dir()
    calls.call(core, "mkdir", {"path": "made/"})
    assert (workspace / "made").is_dir()


async def test_over_lsp_write_to_a_folder_path_is_refused(lsp: Session, workspace: Path) -> None:
    error = await lsp.error(
        "readkeeper/write", {"file_path": str(workspace / "new") + "/", "content": "x"}
    )
    assert error.data["kind"] == "bad_params"
    assert not (workspace / "new").exists()


Connect = Callable[[list[str]], AbstractAsyncContextManager[Client]]


@pytest.fixture
def connect(workspace: Path) -> Connect:
    env = mcp_env(private_runtime_dir())
    return lambda tools: stdio_client([*tools, "--standalone", "--root", str(workspace)], env)


async def test_over_mcp_both_tool_sets_refuse_a_folder_path(
    connect: Connect, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\n")
    async with connect([]) as client:
        result = await client.call_tool("write", {"file_path": "new/", "content": "x"})
        assert error_kind(result) == "bad_params"
        assert "the write tool with" in text_of(result)
    async with connect(["--tools", "filesystem"]) as client:
        result = await client.call_tool("write_file", {"path": "new/", "content": "x"})
        assert error_kind(result) == "bad_params"
        assert "write_file with" in text_of(result)
        result = await client.call_tool("move_file", {"source": "a.txt", "destination": "b/"})
        assert error_kind(result) == "bad_params"
    assert sorted(os.listdir(workspace)) == ["a.txt"]


@pytest.mark.parametrize("path", ["a.txt/", "a.txt/."])
def test_a_read_by_a_folder_path_is_refused_by_the_same_rule(
    core: Readkeeper, tree: list[str], path: str
) -> None:
    error = refused(core, "read", file_path=path)
    assert error.kind == "not_found"
    assert "names a folder" in error.message
