"""MCP progress notifications of long tool calls, through `readkeeper mcp` as a subprocess
and the SDK's own client with a progress callback: a search and a PDF render report
growing progress, all before the result; fast work, and a call without a progress
token, get none.

"Long" is deterministic: READKEEPER_PROGRESS_AFTER_MS=0 begins progress at the work's
first step, and a minute is more than any call here takes.
"""

from __future__ import annotations

from pathlib import Path

from document_samples import numbered_pdf

from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of


def tree(workspace: Path) -> None:
    for n in range(30):
        folder = workspace / f"pkg{n % 5}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{n}.py").write_text(f"VALUE_{n} = {n}  # needle\n" * 20)


class Recorder:
    """The SDK's progress callback: every (progress, total, message), in order."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, total, message))


def growing(seen: list[tuple[float, float | None, str | None]]) -> None:
    values = [progress for progress, _, _ in seen]
    assert values == sorted(set(values)), values  # MCP: it grows with each notification


async def test_a_search_and_a_render_report_progress_before_their_result(
    workspace: Path,
) -> None:
    tree(workspace)
    (workspace / "doc.pdf").write_bytes(numbered_pdf(3, lines=5))
    env = mcp_env(private_runtime_dir(), READKEEPER_PROGRESS_AFTER_MS="0")
    async with stdio_client(["--root", str(workspace)], env) as client:
        searched = Recorder()
        result = await client.call_tool("grep", {"pattern": "needle"}, progress_callback=searched)
        assert not result.is_error, text_of(result)
        # Every notification came before the result: the callback has them all now.
        assert len(searched.seen) >= 3, searched.seen
        growing(searched.seen)
        assert searched.seen[0][2] is not None
        assert searched.seen[0][2].startswith("searching ")
        assert searched.seen[-1][2] == "done"

        drawn = Recorder()
        result = await client.call_tool(
            "read",
            {"file_path": "doc.pdf", "pages": "1-3", "render": True},
            progress_callback=drawn,
        )
        assert not result.is_error, text_of(result)
        growing(drawn.seen)
        messages = [message for _, _, message in drawn.seen]
        assert messages == ["page 1 drawn", "page 2 drawn", "page 3 drawn", "done"]


async def test_fast_work_and_calls_without_a_token_get_no_progress(workspace: Path) -> None:
    tree(workspace)
    quiet = mcp_env(private_runtime_dir(), READKEEPER_PROGRESS_AFTER_MS="60000")
    async with stdio_client(["--root", str(workspace)], quiet) as client:
        under = Recorder()
        result = await client.call_tool("grep", {"pattern": "needle"}, progress_callback=under)
        assert not result.is_error, text_of(result)
        assert under.seen == []
    eager = mcp_env(private_runtime_dir(), READKEEPER_PROGRESS_AFTER_MS="0")
    async with stdio_client(["--root", str(workspace)], eager) as client:
        # A small text read has no long steps.
        small = Recorder()
        result = await client.call_tool(
            "read", {"file_path": "pkg0/mod0.py"}, progress_callback=small
        )
        assert not result.is_error, text_of(result)
        assert small.seen == []
        # And without a callback the client sends no token: the call simply answers.
        result = await client.call_tool("grep", {"pattern": "needle"})
        assert not result.is_error, text_of(result)
