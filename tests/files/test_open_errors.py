"""What each failure to open a file is told as (fileio.opening_error, refusals.os_error):
the refusal's kind and the next step. Root opens any file, so the errors are made as the
kernel gives them."""

from __future__ import annotations

import errno
import os

from readkeeper.edit.refusals import os_error
from readkeeper.files import fileio, reach
from readkeeper.files.beneath import Moved


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


def test_a_tree_changed_under_an_open_is_stale_for_a_read_and_a_change() -> None:
    # The one rule (fileio.race): a symlink on the way (ELOOP, beneath.Moved) or a way
    # out (EXDEV) is the tree changing under the call, never a fault of readkeeper's.
    for exc in (
        Moved(errno.ELOOP, "a component of the path changed", "/ws/d"),
        OSError(errno.ELOOP, os.strerror(errno.ELOOP)),
        OSError(errno.EXDEV, os.strerror(errno.EXDEV)),
    ):
        for error in (fileio.opening_error("/ws/d", exc), os_error("/ws/d", exc)):
            assert error.kind == "stale", exc
            assert error.data == {"file_path": "/ws/d", "moved": True}
            assert "Read it again" in error.message


def test_a_name_too_long_for_the_system_is_bad_params_naming_the_limit() -> None:
    exc = OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG))
    for error in (fileio.opening_error("/ws/" + "b" * 300, exc), os_error("/ws/x", exc)):
        assert error.kind == "bad_params"
        assert "each name is at most 255 bytes" in error.message
        assert "glob" in error.message


def test_a_path_gone_after_it_was_resolved_is_not_found() -> None:
    for code in (errno.ENOENT, errno.ENOTDIR):
        error = fileio.opening_error("/ws/a.txt", OSError(code, os.strerror(code)))
        assert error.kind == "not_found"
        assert "Read it again" in error.message


def test_a_path_too_long_is_known_by_its_text() -> None:
    assert not reach.too_long("/ws/" + "n" * 255)
    assert reach.too_long("/ws/" + "n" * 256)
    assert reach.too_long("/ws/" + "é" * 128)  # 256 bytes
    assert not reach.too_long("/" + "/".join(["n" * 200] * 20)[:4094])
    assert reach.too_long("/" + "/".join(["n" * 200] * 21)[:4095])
