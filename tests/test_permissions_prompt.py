"""Reading outside the workspace: the user is asked, and the answer is remembered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from conftest import start_session
from readkeeper.client import ReadkeeperClient


def answering(choice: str | None, asked: list[str]) -> ReadkeeperClient:
    client = ReadkeeperClient()

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def prompt(client: ReadkeeperClient, params: types.ShowMessageRequestParams) -> Any:
        asked.append(params.message)
        titles = [a.title for a in params.actions or []]
        assert titles == ["Allow once", "Allow for this session", "Deny"]
        return None if choice is None else types.MessageActionItem(title=choice)

    return client


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere" / "notes.txt"
    path.parent.mkdir()
    path.write_text("outside the roots\n")
    return path


async def test_allow_once_reads_once(workspace: Path, outside: Path) -> None:
    asked: list[str] = []
    session = await start_session(workspace, client=answering("Allow once", asked))
    try:
        file = (await session.read(outside))["file"]
        assert file["content"] == "     1\toutside the roots"
        assert str(outside) in asked[0]
        await session.read(outside, force=True)  # asks again: the grant was used up
        assert len(asked) == 2
    finally:
        await session.client.close()


async def test_allow_for_the_session_is_remembered(workspace: Path, outside: Path) -> None:
    asked: list[str] = []
    session = await start_session(workspace, client=answering("Allow for this session", asked))
    try:
        await session.read(outside, session="chat")
        await session.read(outside, session="chat", force=True)
        assert len(asked) == 1
        await session.read(outside, session="another chat")
        assert len(asked) == 2  # another session is asked for itself
    finally:
        await session.client.close()


@pytest.mark.parametrize("choice", ["Deny", None])
async def test_deny_or_dismiss_refuses(workspace: Path, outside: Path, choice: str | None) -> None:
    asked: list[str] = []
    session = await start_session(workspace, client=answering(choice, asked))
    try:
        error = await session.read_error(outside)
        assert error.data["kind"] == "outside_workspace"
        assert asked
    finally:
        await session.client.close()


async def test_a_client_without_message_requests_is_refused_without_asking(
    workspace: Path, outside: Path
) -> None:
    asked: list[str] = []
    client = answering("Allow once", asked)
    session = await start_session(workspace, client=client, editor="emacs")
    try:
        error = await session.read_error(outside)
        assert error.data["kind"] == "outside_workspace"
        assert "allowed_paths" in error.message
    finally:
        await session.client.close()
