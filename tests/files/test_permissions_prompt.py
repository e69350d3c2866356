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


async def test_a_link_out_asks_naming_the_link_and_its_text_and_reads_once_allowed(
    workspace: Path, outside: Path
) -> None:
    link = workspace / "notes-link.txt"
    link.symlink_to(outside)
    client = Prompted("Allow once")
    session = await start_session(workspace, client=client)
    try:
        file = (await session.read(link))["file"]
        assert file["content"] == "     1\toutside the roots"
        assert file["file_path"] == str(outside)  # looked up once the user allowed it
        message = client.prompts[0][0]
        assert f"{link} (a symbolic link to {outside})" in message
    finally:
        await client.close()


async def test_a_missing_file_outside_is_asked_about_like_one_that_is_there(
    workspace: Path, outside: Path
) -> None:
    # The agent learns nothing of what is outside before the user answers: the refusal
    # and the question read the same for a file that is there and one that is not.
    missing = outside.parent / "gone.txt"
    client = Prompted("Deny")
    session = await start_session(workspace, client=client)
    try:
        there = await session.read_error(outside)
        gone = await session.read_error(missing)
        assert there.message.replace(str(outside), "P") == gone.message.replace(str(missing), "P")
        assert there.data["kind"] == gone.data["kind"] == "outside_workspace"
        asked = [m for m, _ in client.prompts]
        assert asked == [
            f"The agent wants to read {p}, outside the workspace." for p in (outside, missing)
        ]
    finally:
        await client.close()
    client = Prompted("Allow once")
    session = await start_session(workspace, client=client)
    try:
        error = await session.read_error(missing)  # allowed: now it is looked up
        assert error.data["kind"] == "not_found"
        assert "list" not in error.message  # its folder is not the user's to list
    finally:
        await client.close()
