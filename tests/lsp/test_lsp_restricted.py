"""Restricted mode: an editor that does not trust the workspace (VS Code's Workspace
Trust) starts the server with the initialization option `trusted: false`. The server
then reads and edits inside the workspace as always, but nothing the repository could
choose widens the sandbox or runs a program: `allowed_paths` is ignored from every
source, git status is off, and no later settings message lifts it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from conftest import Session, start_session
from helpers import eventually
from readkeeper.client import ReadkeeperClient


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace, with one file, that `allowed_paths` names."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "secret.txt").write_text("not the repository's to grant\n")
    return folder.resolve()


async def _outside_kind(session: Session, outside: Path) -> str:
    error = await session.read_error(outside / "secret.txt")
    return str(error.data["kind"])


async def test_allowed_paths_reach_outside_the_workspace_when_trusted(
    workspace: Path, outside: Path
) -> None:
    # The control: without `trusted: false` the same setting does widen the sandbox.
    session = await start_session(workspace, settings={"allowed_paths": [str(outside)]})
    try:
        file = (await session.read(outside / "secret.txt"))["file"]
        assert "not the repository's" in file["content"]
    finally:
        await session.client.close()


@pytest.mark.parametrize("source", ["initialization_options", "environment"])
async def test_restricted_mode_ignores_allowed_paths(
    workspace: Path, outside: Path, source: str
) -> None:
    (workspace / "inside.txt").write_text("inside\n")
    settings: dict[str, Any] = {"trusted": False}
    env: dict[str, str] | None = None
    if source == "environment":
        env = {**os.environ, "READKEEPER_ALLOWED_PATHS": str(outside)}
    else:
        settings["allowed_paths"] = [str(outside)]
    session = await start_session(workspace, settings=settings, env=env)
    try:
        assert await _outside_kind(session, outside) == "outside_workspace"
        # Reads inside the workspace work as always.
        assert "inside" in (await session.read("inside.txt"))["file"]["content"]
        shown = [m.message for m in session.client.shown_messages]
        assert any("allowed_paths" in m.lower() and "restricted mode" in m for m in shown), shown
    finally:
        await session.client.close()


async def test_settings_sent_later_neither_widen_nor_lift_restricted_mode(
    workspace: Path, outside: Path
) -> None:
    asked: list[Any] = []
    client = ReadkeeperClient()

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def configuration(client: ReadkeeperClient, params: types.ConfigurationParams) -> Any:
        asked.append(params)
        return [{"allowed_paths": [str(outside)], "trusted": True}]

    session = await start_session(workspace, settings={"trusted": False}, client=client)
    try:
        await eventually(lambda: asked, "the server to pull its settings")
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={"readkeeper": {"allowed_paths": [str(outside)], "trusted": True}}
            )
        )
        # A request after the notice is handled after it (one connection, in order).
        await session.client.request("readkeeper/stats", {})
        assert await _outside_kind(session, outside) == "outside_workspace"
    finally:
        await client.close()


def _git(root: Path, *args: str) -> None:
    env = {"LC_ALL": "C", "PATH": os.environ["PATH"], "HOME": str(root.parent)}
    identity = ("-c", "user.name=t", "-c", "user.email=t@example.invalid")
    subprocess.run(["git", *identity, "-C", str(root), *args], check=True, env=env)


@pytest.mark.parametrize("trusted", [True, False])
async def test_git_status_is_off_in_restricted_mode(workspace: Path, trusted: bool) -> None:
    _git(workspace, "init", "-q")
    (workspace / "new.txt").write_text("n\n")
    session = await start_session(workspace, settings={} if trusted else {"trusted": False})
    try:
        result = await session.client.request("readkeeper/attachments", {"types": ["git_status"]})
        got = [a for a in result["attachments"] if a["type"] == "git_status"]
        dropped = [d for d in result["dropped"] if d["type"] == "git_status"]
        if trusted:
            assert len(got) == 1
            assert "new.txt" in got[0]["content"]
            return
        assert got == []
        assert len(dropped) == 1, result
        assert "restricted mode" in dropped[0]["reason"]
        assert "trust" in dropped[0]["reason"].lower()
    finally:
        await session.client.close()


async def test_a_relative_path_entry_never_runs_the_workspace_s_own_git(
    workspace: Path, tmp_path: Path
) -> None:
    # An empty PATH entry (a trailing ':' is a common slip) means "the current folder",
    # and git runs in the workspace: the repository's own `git` would run instead.
    _git(workspace, "init", "-q")
    marker = tmp_path / "workspace-git-ran"
    fake = workspace / "git"
    fake.write_text(f"#!/bin/sh\ntouch '{marker}'\nexit 1\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": os.pathsep + os.environ["PATH"]}
    session = await start_session(workspace, env=env)
    try:
        result = await session.client.request("readkeeper/attachments", {"types": ["git_status"]})
        assert not marker.exists()
        got = [a for a in result["attachments"] if a["type"] == "git_status"]
        assert len(got) == 1, result  # the real git answered
    finally:
        await session.client.close()


async def _lines_returned(session: Session) -> int:
    """How many of big.txt's lines a whole read returns (a whole read is cut to fit)."""
    return int((await session.read("big.txt", force=True))["file"]["num_lines"])


@pytest.mark.parametrize("trusted", [True, False])
async def test_restricted_mode_never_loosens_a_limit(workspace: Path, trusted: bool) -> None:
    # A hostile repository's settings raise the token cap a thousandfold so that one read
    # floods the agent's context: restricted mode keeps the default cap, from the
    # initialization options and from a later push alike. Trusted is the control.
    (workspace / "big.txt").write_text("".join(f"{i} {'word ' * 18}\n" for i in range(1_500)))
    client = ReadkeeperClient()
    settings: dict[str, Any] = {"max_tokens": 25_000_000}
    if not trusted:
        settings["trusted"] = False
    session = await start_session(workspace, settings=settings, client=client)
    try:
        assert (await _lines_returned(session) == 1_500) is trusted
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"readkeeper": {"maxTokens": 10**9}})
        )
        await session.client.request("readkeeper/stats", {})  # handled after the push
        assert (await _lines_returned(session) == 1_500) is trusted
        if not trusted:
            shown = [m.message for m in session.client.shown_messages]
            assert any("max_tokens" in m and "restricted mode" in m for m in shown), shown
    finally:
        await client.close()
