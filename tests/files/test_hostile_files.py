"""Hostile and odd files through the real server: each gets a named error kind, and
what a killed writer left behind is cleaned up."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import Session, start_session


async def test_a_notebook_nested_100k_deep_is_corrupt_not_a_crash(
    lsp: Session, workspace: Path
) -> None:
    depth = 100_000
    (workspace / "deep.ipynb").write_text(
        '{"nbformat": 4, "cells": ' + "[" * depth + "]" * depth + "}"
    )
    damaged = await lsp.read("deep.ipynb")  # read as the text it is, to be repaired
    assert damaged["type"] == "text"
    assert "nested too deeply" in damaged["file"]["note"]
    # The server carries on.
    (workspace / "ok.txt").write_text("fine\n")
    assert (await lsp.read("ok.txt"))["type"] == "text"


@pytest.mark.skipif(not os.access("/proc/kmsg", os.R_OK), reason="/proc/kmsg is not readable")
async def test_a_kernel_interface_under_allowed_paths_is_unsupported(workspace: Path) -> None:
    session = await start_session(workspace, settings={"allowed_paths": ["/proc"]})
    try:
        error = await session.read_error("/proc/kmsg")
        assert error.data["kind"] == "unsupported"
        assert "kernel interface" in error.message
    finally:
        await session.client.close()


async def test_a_set_id_program_is_never_rewritten(lsp: Session, workspace: Path) -> None:
    for bits in (stat.S_ISUID, stat.S_ISGID):
        program = workspace / f"tool-{bits:o}.sh"  # a bare name (`tool-4000` is line-shaped)
        program.write_text("#!/bin/sh\necho hi\n")
        program.chmod(0o755 | bits)
        await lsp.read(program)
        error = await lsp.error(
            "readkeeper/write", {"file_path": str(program), "content": "#!/bin/sh\nid\n"}
        )
        refusal = f"{program} is a set-user-ID or set-group-ID program (mode {0o755 | bits:04o})"
        assert error.data["kind"] == "unsupported"
        assert error.message.startswith(refusal)
        edit = {"file_path": str(program), "old_string": "hi", "new_string": "bye"}
        error = await lsp.error("readkeeper/edit", edit)
        assert error.data["kind"] == "unsupported"
        assert error.message.startswith(refusal)
        assert program.read_text() == "#!/bin/sh\necho hi\n"
        assert stat.S_IMODE(program.stat().st_mode) == 0o755 | bits


async def test_a_users_file_named_like_a_temp_file_is_never_removed(
    lsp: Session, workspace: Path
) -> None:
    # Leftovers are known by the journal of the writer that made them (pending.py), not
    # by their names: an old file named as readkeeper names its temporary files, in a
    # folder written to, stays.
    folder = workspace / "src"
    folder.mkdir()
    lookalike = folder / ".big.log.1f2e3d4c.rk-tmp"
    lookalike.write_bytes(b"x" * 4096)
    os.utime(lookalike, ns=(1_000_000_000, 1_000_000_000))  # from before this server
    await lsp.client.request(
        "readkeeper/write", {"file_path": str(folder / "new.txt"), "content": "hello\n"}
    )
    assert lookalike.read_bytes() == b"x" * 4096
    assert (folder / "new.txt").read_text() == "hello\n"
