"""Every whole-number setting at a hostile value in the environment of `readkeeper mcp`
(its only settings source): the server keeps reading, telling changes and answering
attachments (attack15 f2: READKEEPER_ATTACHMENTS_TIMEOUT_MS=1e13 made every
`attachments` call fail `internal` with an OverflowError)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import eventually
from mcp_helpers import call, mcp_env, private_runtime_dir, stdio_client
from readkeeper.settings import SETTINGS

NUMBERS = [s for s in SETTINGS if s.minimum is not None]


@pytest.mark.parametrize("value", [str(10**13), str(2**63), "1e308", "inf", "nan", "-1", "0"])
async def test_a_hostile_number_in_every_setting_leaves_the_mcp_server_working(
    workspace: Path, value: str
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("one\ntwo\nthree\n")
    env = mcp_env(private_runtime_dir(), **{s.env_var: value for s in NUMBERS})
    async with stdio_client(["--root", str(workspace)], env) as client:

        async def watching() -> bool:
            return bool((await call(client, "stats"))["watcher"]["state"] == "watching")

        await eventually(watching, "the watcher to watch", 60)
        read = await call(client, "read", file_path="notes.txt", force=True)
        assert read["file"]["num_lines"] == 3
        notes.write_text("one\ntwo\nthree\nfour\n")

        async def noticed() -> bool:
            return bool((await call(client, "changes"))["changes"])

        await eventually(noticed, "a change notice for notes.txt", 60)
        assert "used_tokens" in await call(client, "attachments")
        watcher = (await call(client, "stats"))["watcher"]
        assert (watcher["state"], watcher["failure"]) == ("watching", None)
