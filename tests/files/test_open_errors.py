"""What each failure to open a file is told as (fileio._open_error): the refusal's kind
and the next step. Root opens any file, so the errors are made as the kernel gives them."""

from __future__ import annotations

import errno
import os

from readkeeper.files import fileio


def test_a_permission_error_asks_for_the_file_to_be_made_readable() -> None:
    for code in (errno.EACCES, errno.EPERM):
        error = fileio._open_error("/ws/a.txt", PermissionError(code, os.strerror(code)))
        assert error.kind == "unsupported"
        assert error.message == (
            "Permission denied reading /ws/a.txt. Ask the user to make it readable."
        )
        assert error.data["file_path"] == "/ws/a.txt"


def test_another_error_names_the_file_and_the_systems_reason() -> None:
    error = fileio._open_error("/ws/a.txt", OSError(errno.EIO, os.strerror(errno.EIO)))
    assert error.kind == "unsupported"
    assert error.message == f"Cannot open /ws/a.txt: {os.strerror(errno.EIO)}."
