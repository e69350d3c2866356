"""Reading outside the workspace: the user is asked, and the answer is remembered.

The client's prompt handler only records what it was shown; the test body checks it (an
assertion inside the handler would only turn into an error reply, which the server
takes as a refusal, so a wrong prompt could pass the Deny cases).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import start_session
from helpers import BUTTONS, Prompted


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere" / "notes.txt"
    path.parent.mkdir()
    path.write_text("outside the roots\n")
    return path


async def test_allow_once_reads_once(workspace: Path, outside: Path) -> None:
    client = Prompted("Allow once")
    session = await start_session(workspace, client=client)
    try:
        file = (await session.read(outside))["file"]
        assert file["content"] == "     1\toutside the roots"
        assert len(client.prompts) == 1
        assert str(outside) in client.prompts[0][0]
        await session.read(outside, force=True)  # asks again: the grant was used up
        assert client.buttons() == [BUTTONS, BUTTONS]
    finally:
        await client.close()


async def test_allow_for_the_session_is_remembered(workspace: Path, outside: Path) -> None:
    client = Prompted("Allow for this session")
    session = await start_session(workspace, client=client)
    try:
        await session.read(outside, session="chat")
        await session.read(outside, session="chat", force=True)
        assert client.buttons() == [BUTTONS]
        await session.read(outside, session="another chat")
        assert client.buttons() == [BUTTONS, BUTTONS]  # another session is asked for itself
    finally:
        await client.close()


@pytest.mark.parametrize("choice", ["Deny", None])
async def test_deny_or_dismiss_refuses(workspace: Path, outside: Path, choice: str | None) -> None:
    client = Prompted(choice)
    session = await start_session(workspace, client=client)
    try:
        error = await session.read_error(outside)
        assert error.data["kind"] == "outside_workspace"
        assert client.buttons() == [BUTTONS]  # the user was asked, with these buttons
        assert str(outside) in client.prompts[0][0]
    finally:
        await client.close()


async def test_a_client_without_message_requests_is_refused_without_asking(
    workspace: Path, outside: Path
) -> None:
    client = Prompted("Allow once")
    session = await start_session(workspace, client=client, editor="emacs")
    try:
        error = await session.read_error(outside)
        assert error.data["kind"] == "outside_workspace"
        assert "allowed_paths" in error.message
        assert client.prompts == []  # never asked: the client said it cannot show one
    finally:
        await client.close()
