"""Each memory file is judged alone: one that cannot be attached (binary, unreadable,
gone) is listed in `dropped` with its own reason, and the others are attached. One bad
file (a 3 GB sparse all-NUL copilot-instructions.md) used to drop the whole memory
source, so a good CLAUDE.md beside it never reached the agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import Session
from readkeeper.core import Readkeeper
from readkeeper.protocol import AttachmentsParams


def _hostile_github(root: Path) -> Path:
    bad = root / ".github" / "copilot-instructions.md"
    bad.parent.mkdir(parents=True, exist_ok=True)
    with bad.open("wb") as f:
        f.truncate(3 << 30)  # sparse: all NUL, no disk taken
    return bad


def _memory(result: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    kept = [a["source"] for a in result["attachments"] if a["type"] == "memory"]
    dropped = [d for d in result["dropped"] if d["type"] == "memory"]
    return kept, dropped


def test_a_binary_memory_file_is_dropped_alone(core: Readkeeper, workspace: Path) -> None:
    (workspace / "CLAUDE.md").write_text("Use tabs.\n")
    (workspace / "AGENTS.md").write_text("Run the tests.\n")
    bad = _hostile_github(workspace)
    kept, dropped = _memory(core.attachments(AttachmentsParams(types=["memory"])))
    assert sorted(kept) == [str(workspace / "AGENTS.md"), str(workspace / "CLAUDE.md")]
    assert [d["source"] for d in dropped] == [str(bad)]
    assert dropped[0]["reason"].startswith("binary: ")


def test_a_bad_memory_file_above_a_mention_is_dropped_alone(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "mod.py").write_text("x = 1\n")
    (workspace / "pkg" / "AGENTS.md").write_bytes(b"\x00\x01\x02" * 100)
    (workspace / "pkg" / "CLAUDE.md").write_text("pkg rules\n")
    result = core.attachments(AttachmentsParams(types=["file", "memory"], mentions=["pkg/mod.py"]))
    kept, dropped = _memory(result)
    assert kept == [str(workspace / "pkg" / "CLAUDE.md")]
    assert [d["source"] for d in dropped] == [str(workspace / "pkg" / "AGENTS.md")]


async def test_over_lsp_the_good_memory_file_is_attached(lsp: Session, workspace: Path) -> None:
    (workspace / "CLAUDE.md").write_text("Use tabs.\n")
    bad = _hostile_github(workspace)
    result = await lsp.client.request("readkeeper/attachments", {"types": ["memory"]})
    [memory] = [a for a in result["attachments"] if a["type"] == "memory"]
    assert "Use tabs." in memory["content"]
    [refused] = [d for d in result["dropped"] if d["type"] == "memory"]
    assert refused["source"] == str(bad)
    assert "binary" in refused["reason"]


def test_a_memory_file_not_read_is_named_in_dropped_with_why(
    core: Readkeeper, workspace: Path, tmp_path: Path
) -> None:
    """A memory file that links out of the workspace, or is no regular file, is never
    read (it is not the workspace's own instruction), and says so: it was skipped
    without a word (attack round 24)."""
    outside = tmp_path / "outside-instructions.md"
    outside.write_text("SECRET outside rules\n")
    (workspace / "CLAUDE.md").symlink_to(outside)
    (workspace / "AGENTS.md").mkdir()  # a folder by a memory file's name
    (workspace / "QWEN.md").symlink_to(workspace / "missing.md")  # a link to nothing
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "mod.py").write_text("x = 1\n")
    (workspace / "pkg" / "CLAUDE.md").symlink_to(outside)
    for params in (
        AttachmentsParams(types=["memory"]),
        AttachmentsParams(types=["file", "memory"], mentions=["pkg/mod.py"]),
    ):
        result = core.attachments(params)
        kept, dropped = _memory(result)
        assert kept == []
        assert "SECRET" not in str(result)
        why = {d["source"]: d["reason"] for d in dropped}
        assert "links out of the workspace" in why.pop(str(workspace / "CLAUDE.md"))
        assert "not a regular file" in why.pop(str(workspace / "AGENTS.md"))
        assert "or to nothing" in why.pop(str(workspace / "QWEN.md"))
        if params.mentions:
            assert "links out of the workspace" in why.pop(str(workspace / "pkg" / "CLAUDE.md"))
        assert why == {}
