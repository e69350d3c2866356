"""An MCP server's reads are counted exactly from the first one (issue 34): a standalone
server loads the token table from its start, and a read that comes before the load is
done waits for it rather than answering a bound (`tokens_upper_bound`)."""

from __future__ import annotations

from pathlib import Path

from mcp_helpers import call, mcp_env, private_runtime_dir, stdio_client
from readkeeper.read.tokens import TokenCounter

COUNTER = TokenCounter()


def tokens_of(path: Path) -> int:
    """The exact tokens of the whole file's numbered lines, as a read sends them."""
    lines = path.read_text().splitlines()
    return COUNTER.count("\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, 1)))


async def test_the_first_read_of_a_standalone_server_is_counted(workspace: Path) -> None:
    (workspace / "a.py").write_text("".join(f"value_{i} = {i}  # ligne {i}\n" for i in range(26)))
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        first = await call(client, "read", file_path=str(workspace / "a.py"))
    file = first["file"]
    assert "tokens_upper_bound" not in file
    assert file["tokens"] == tokens_of(workspace / "a.py") < (workspace / "a.py").stat().st_size


async def test_the_first_read_of_a_server_that_may_attach_is_counted(workspace: Path) -> None:
    """No editor's server to attach to: its own core counts, from the first read."""
    (workspace / "b.txt").write_text("hello there\n" * 30)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace)], env) as client:
        first = await call(client, "read", file_path=str(workspace / "b.txt"))
    file = first["file"]
    assert "tokens_upper_bound" not in file
    assert file["tokens"] == tokens_of(workspace / "b.txt")
