"""Errors name a next call the front end showing them offers: the LSP method, the MCP
tool with its arguments, the CLI command with its flags; never a shell command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import warm_server

from conftest import Session
from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.hints import call, for_cli, for_mcp
from readkeeper.mcp.tools import METHOD_TOOLS

SHELL_WORDS = ("`ls", "e.g. grep", "grep -n", "`find", "`cat")


def test_one_next_call_in_each_front_ends_words() -> None:
    written = f"List it ({call('list', path='/w/a b')}), then read it (readkeeper/read)."
    assert (
        written == 'List it (readkeeper/list {"path": "/w/a b"}), then read it (readkeeper/read).'
    )
    assert for_mcp(written, METHOD_TOOLS) == (
        'List it (the list tool with {"path": "/w/a b"}), then read it (the read tool).'
    )
    assert (
        for_cli(written) == "List it (`readkeeper ls '/w/a b'`), then read it (`readkeeper read`)."
    )
    ranged = call("read", file_path="/w/x.py", offset=3, limit=2)
    assert for_cli(ranged) == "`readkeeper read /w/x.py --offset 3 --limit 2`"
    # A method a front end lacks is said as one it does not offer, never as a call to
    # make; stat, as the listing of its folder, which each has (attack round 16).
    lacking = for_mcp("(readkeeper/move)", METHOD_TOOLS)
    assert lacking == (
        "(readkeeper's move (a method of its language server; this MCP server does not offer it))"
    )
    stat = call("stat", path="/w/a.py")
    assert for_mcp(stat, METHOD_TOOLS).startswith('the list tool with {"path": "/w"}')
    assert for_cli(stat).startswith("`readkeeper ls /w`")
    # A method offered under another tool name is said as that tool.
    many = call("readMany", file_paths=["a.py"])
    assert for_mcp(many, METHOD_TOOLS) == 'the read_many tool with {"file_paths": ["a.py"]}'
    assert "readkeeper/" not in for_cli("(readkeeper/edit)")


async def test_lsp_errors_name_methods(lsp: Session, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    folder = await lsp.read_error(workspace / "sub")
    assert f'readkeeper/list {{"path": "{workspace / "sub"}"}}' in folder.message
    missing = await lsp.read_error(workspace / "sub" / "zzqqxx.txt")
    assert "readkeeper/list" in missing.message
    assert not any(word in folder.message + missing.message for word in SHELL_WORDS)


async def test_mcp_errors_name_tools_with_arguments(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    async with stdio_client(
        ["--root", str(workspace), "--standalone"], mcp_env(private_runtime_dir())
    ) as client:
        folder = text_of(await client.call_tool("read", {"file_path": "sub"}))
        assert f'the list tool with {{"path": "{workspace / "sub"}"}}' in folder
        missing = text_of(await client.call_tool("read", {"file_path": "sub/zzqqxx.txt"}))
        assert "the glob tool with" in missing
        assert "readkeeper/" not in folder + missing
        assert not any(word in folder + missing for word in SHELL_WORDS)


def test_cli_errors_name_commands(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    done = subprocess.run(
        warm_server.command("read", "sub"),
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert f"`readkeeper ls {workspace / 'sub'}`" in done.stderr
    assert not any(word in done.stderr for word in SHELL_WORDS)


def test_core_refusals_suggest_no_shell_command(core: Readkeeper, workspace: Path) -> None:
    """The refusals that used to say `ls`, `grep -n` or `sed -i` now name a method."""
    (workspace / "m.py").write_text("def f():\n    return 1\n")
    (workspace / "big.txt").write_text("x\n" * 200_000)
    (workspace / "sub").mkdir()
    messages = []
    for params in (
        {"file_path": "m.py", "symbol": "zzzzqqqq"},
        {"file_path": "sub"},
        {"file_path": "big.txt"},
    ):
        with pytest.raises(ReadkeeperError) as caught:
            calls.call(core, "read", params)
        messages.append(caught.value.message)
    calls.call(core, "read", {"file_path": "big.txt", "offset": 1, "limit": 1})
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(
            core, "edit", {"file_path": "big.txt", "old_string": "x\nx\n", "new_string": "y\n"}
        )
    messages.append(caught.value.message)
    for message in messages:
        assert "readkeeper/" in message, message
        assert not any(word in message for word in (*SHELL_WORDS, "sed -i")), message
