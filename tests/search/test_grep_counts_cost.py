"""grep's `output: counts` costs a line per file, never a message per match: ripgrep is
asked for its own count (`--count-matches`), so a log of hundreds of thousands of
matching lines is counted whole, exactly, where reading ripgrep's JSON (a message per
match, buffered by ripgrep per file) stopped at the output cap, or past ripgrep's 1 GiB
data cap, and lost the file's count (attack round 12, attempt 3)."""

from __future__ import annotations

from pathlib import Path

from mcp_helpers import call, mcp_env, private_runtime_dir, stdio_client
from readkeeper.core import Readkeeper
from readkeeper.protocol.search import GrepParams
from readkeeper.search import grep as grep_module

LINES = 200_000  # four times grep's cap of output lines held per call


async def test_a_count_of_more_matches_than_output_lines_is_exact_over_mcp(
    workspace: Path,
) -> None:
    assert LINES > grep_module.COLLECT_CAP
    (workspace / "many.log").write_bytes(b"x INFO x\n" * LINES)
    (workspace / "notes.txt").write_text("x marks the spot\nno\n")
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        counted = await call(client, "grep", pattern="x", output="counts")
    assert counted["counts"] == [
        {"file_path": str(workspace / "many.log"), "count": 2 * LINES},  # every match
        {"file_path": str(workspace / "notes.txt"), "count": 1},
    ]
    assert not counted["partial"], counted
    assert "note" not in counted, counted


def test_counts_agree_with_the_matches_they_count(core: Readkeeper, workspace: Path) -> None:
    """Every match on a line counts, multiline matches too, and a glob or a name
    holding a line break keeps its count."""
    (workspace / "a.txt").write_text("ab ab\nab\nxx\n")
    (workspace / "b.md").write_text("ab\n")
    (workspace / "odd\nname.txt").write_text("ab ab ab\n")
    (workspace / "c.txt").write_text("a\nb\na\nb\n")

    def counts(**params: object) -> dict[str, int]:
        result = core.grep(GrepParams(**params))  # type: ignore[arg-type]
        assert not result["partial"], result
        return {Path(c["file_path"]).name: c["count"] for c in result["counts"]}

    assert counts(pattern="ab", output="counts") == {"a.txt": 3, "b.md": 1, "odd\nname.txt": 3}
    assert counts(pattern="ab", output="counts", glob="*.txt") == {"a.txt": 3, "odd\nname.txt": 3}
    assert counts(pattern="a\\nb", output="counts", multiline=True) == {"c.txt": 2}
