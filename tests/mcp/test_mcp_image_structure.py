"""Images built of floods of chunks or frames through `readkeeper mcp` (where they were
found): a PNG of one pixel in 100,000 chunks and one of 1 MB colour profiles are refused
`too_large` at once, the same on a forced re-read; a GIF of 100,000 frames is shown with
"at least N frames"; a small read is answered after each."""

from __future__ import annotations

from pathlib import Path

from image_structure import gif_frames, png_idat_flood, png_profiles

from mcp_helpers import error_kind, mcp_env, ok, private_runtime_dir, stdio_client, text_of

STEPS = 100_000  # image_scan.STRUCTURE_STEPS


async def test_structure_floods_over_mcp(workspace: Path) -> None:
    (workspace / "idat.png").write_bytes(png_idat_flood(STEPS + 10))
    (workspace / "iccp.png").write_bytes(png_profiles(6))
    (workspace / "many.gif").write_bytes(gif_frames(STEPS + 10))
    (workspace / "s.txt").write_text("small\n")
    args, env = ["--root", str(workspace)], mcp_env(private_runtime_dir())
    async with stdio_client(args, env) as client:
        for name in ("idat.png", "iccp.png"):
            for force in (False, True):
                refused = await client.call_tool("read", {"file_path": name, "force": force})
                assert error_kind(refused) == "too_large"
                assert "image tool" in text_of(refused)
            assert "small" in await ok(client, "read", file_path="s.txt", force=True)
        shown = await ok(client, "read", file_path="many.gif")
        assert "at least" in shown, shown
        assert "small" in await ok(client, "read", file_path="s.txt", force=True)
