"""`readkeeper mcp` roots: `--root`, else the client's MCP roots, else the working folder,
but never the filesystem root or the home folder unless a `--root` names it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import warm_server

from mcp_helpers import (
    call,
    error_kind,
    mcp_env,
    private_runtime_dir,
    stdio_client,
    text_of,
)


async def test_the_filesystem_root_as_working_folder_is_refused() -> None:
    async with stdio_client([], cwd="/") as client:
        refused = await client.call_tool("read", {"file_path": "etc/hostname"})
        assert error_kind(refused) == "outside_workspace"
        assert "it is the filesystem root" in text_of(refused)
        assert "--root" in text_of(refused)


async def test_the_home_folder_as_working_folder_is_refused(tmp_path: Path) -> None:
    home = (tmp_path / "home").resolve()
    home.mkdir()
    (home / "notes.txt").write_text("private\n")
    env = mcp_env(private_runtime_dir(), home=home)
    async with stdio_client([], env, cwd=home) as client:
        refused = await client.call_tool("read", {"file_path": "notes.txt"})
        assert error_kind(refused) == "outside_workspace"
        assert "it is your home folder" in text_of(refused)


async def test_the_working_folder_is_the_root_when_nothing_else_names_one(
    workspace: Path,
) -> None:
    (workspace / "here.txt").write_text("here\n")
    async with stdio_client([], cwd=workspace) as client:
        read = await call(client, "read", file_path="here.txt")
        assert read["file"]["file_path"] == str(workspace / "here.txt")
        assert (await call(client, "stats"))["roots"] == [str(workspace)]


async def test_the_clients_roots_win_over_the_working_folder(workspace: Path) -> None:
    (workspace / "rooted.txt").write_text("rooted\n")

    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=workspace.as_uri(), name="ws")])

    async with stdio_client([], cwd="/", list_roots=list_roots) as client:
        read = await client.call_tool("read", {"file_path": "rooted.txt"})
        assert not read.is_error, text_of(read)
        assert "rooted" in text_of(read)
        assert (await call(client, "stats"))["roots"] == [str(workspace)]


async def test_an_explicit_root_may_be_the_home_folder(tmp_path: Path) -> None:
    home = (tmp_path / "home").resolve()
    home.mkdir()
    (home / "notes.txt").write_text("mine\n")
    env = mcp_env(private_runtime_dir(), home=home)
    async with stdio_client(["--root", str(home)], env, cwd="/") as client:
        read = await call(client, "read", file_path="notes.txt")
        assert read["file"]["file_path"] == str(home / "notes.txt")


def test_a_root_that_is_not_a_folder_is_refused_at_start(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    done = subprocess.run(
        warm_server.command("mcp", "--root", str(missing)),
        env=mcp_env(private_runtime_dir()),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    # Not there: most likely a typo, refused saying so (a client's root may be made later).
    assert f"--root {missing} does not exist; pass the project's folder." in done.stderr


async def test_a_client_root_that_is_a_file_is_refused(tmp_path: Path) -> None:
    # The client's MCP roots are held to the rule of every door: a root that is not a
    # folder when it is given is not taken (a link to a file neither).
    notes = (tmp_path / "notes.txt").resolve()
    notes.write_text("a file, not a folder\n")
    (tmp_path / "notes-link").symlink_to(notes)
    for given in (notes, tmp_path / "notes-link"):

        async def list_roots(context: Any, given: Path = given) -> types.ListRootsResult:
            return types.ListRootsResult(roots=[types.Root(uri=given.as_uri(), name="n")])

        env = mcp_env(private_runtime_dir())
        async with stdio_client(["--standalone"], env, cwd="/", list_roots=list_roots) as client:
            refused = await client.call_tool("read", {"file_path": str(notes)})
            assert error_kind(refused) == "outside_workspace", text_of(refused)
            assert f"{given} (the client's MCP roots): it is not a folder" in text_of(refused)
            assert "--root" in text_of(refused)


async def test_a_file_among_the_client_s_roots_leaves_its_folders_served(tmp_path: Path) -> None:
    # A client naming a file beside its project folders (an editor with a loose file
    # open): the file is not taken as a root, the folders are (every call was refused).
    project = (tmp_path / "project").resolve()
    project.mkdir()
    (project / "a.txt").write_text("alpha\n")
    loose = (tmp_path / "loose.txt").resolve()
    loose.write_text("a file, not a folder\n")

    async def list_roots(context: Any) -> types.ListRootsResult:
        given = [types.Root(uri=p.as_uri(), name=p.name) for p in (loose, project)]
        return types.ListRootsResult(roots=given)

    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone"], env, cwd="/", list_roots=list_roots) as client:
        read = await client.call_tool("read", {"file_path": str(project / "a.txt")})
        assert "alpha" in text_of(read), text_of(read)
        outside = await client.call_tool("read", {"file_path": str(loose)})
        assert error_kind(outside) == "outside_workspace", text_of(outside)


async def test_roots_named_through_a_link_are_reached_by_that_name(tmp_path: Path) -> None:
    # A path is judged by its text before anything is looked up: a root named through
    # a symlink (by --root, or by the client's MCP roots) is still reached by that name.
    real = (tmp_path / "real-project").resolve()
    real.mkdir()
    (real / "a.txt").write_text("alpha\n")
    spelled = tmp_path / "project"
    spelled.symlink_to(real)

    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=spelled.as_uri(), name="p")])

    env = mcp_env(private_runtime_dir())
    # The third: no root given, started in the project entered through the link, as a
    # shell does (getcwd() is the real path; $PWD keeps the spelling).
    for args, roots, cwd in (
        (["--standalone", "--root", str(spelled)], None, "/"),
        (["--standalone"], list_roots, "/"),
        (["--standalone"], None, str(spelled)),
    ):
        here = {**env, "PWD": cwd} if cwd != "/" else env
        async with stdio_client(args, here, cwd=cwd, list_roots=roots) as client:
            read = await call(client, "read", file_path=str(spelled / "a.txt"))
            assert read["file"]["file_path"] == str(real / "a.txt")
            assert (await call(client, "stats"))["roots"] == [str(real)]


async def test_a_client_s_thousands_of_long_roots_are_capped_and_cut(tmp_path: Path) -> None:
    """Round 44: 2,000 long bidi-named roots from roots/list were all taken, and stats
    (24 MB) and changes (34 MB) named each whole. Now an MCP client's roots are capped
    as an editor's folders are, and every answer names them cut, a few at most."""
    from readkeeper.files.paths import MAX_ROOTS

    project = (tmp_path / "project").resolve()
    project.mkdir()
    (project / "a.txt").write_text("alpha\n")
    long = [tmp_path / (("\u202e" * 80 + "/") * 15 + str(i)) for i in range(2_000)]

    async def list_roots(context: Any) -> types.ListRootsResult:
        given = [types.Root(uri=p.as_uri()) for p in (project, *long)]
        return types.ListRootsResult(roots=given)

    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone"], env, cwd="/", list_roots=list_roots) as client:
        stats = await client.call_tool("stats", {})
        assert stats.structured_content is not None
        roots = stats.structured_content["roots"]
        assert len(roots) == MAX_ROOTS
        assert roots[0] == str(project)
        assert len(text_of(stats)) < 100_000
        for _ in range(600):  # until the watcher is set up (its note names the roots)
            said = text_of(await client.call_tool("changes", {}))
            assert len(said) < 20_000
            if "still being set up" not in said:
                break
            await anyio.sleep(0.1)
        assert f"and {MAX_ROOTS - 1 - 5:,} more" in said
