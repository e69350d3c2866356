"""fileio.read_small_in: the one rule for a small side file (an ignore file, a `.git`
file) read by name in an open folder: regular files only, never through a symlink,
never blocking, never past its cap."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from readkeeper.files.fileio import read_small, read_small_in


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[int]:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield fd
    finally:
        os.close(fd)


def test_a_regular_file_is_read_up_to_its_cap(tmp_path: Path, folder: int) -> None:
    (tmp_path / "a").write_bytes(b"x" * 100)
    assert read_small_in(folder, "a", 10) == b"x" * 10
    assert read_small_in(folder, b"a", 1000) == b"x" * 100  # names as bytes too


def test_a_missing_file_is_file_not_found(folder: int) -> None:
    with pytest.raises(FileNotFoundError):
        read_small_in(folder, "missing", 10)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path, folder: int) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(OSError, match="not a regular file"):
        read_small_in(folder, "pipe", 10)


def test_a_symlink_is_not_followed(tmp_path: Path, folder: int) -> None:
    (tmp_path / "target").write_text("secret")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    with pytest.raises(OSError, match="not a regular file"):
        read_small_in(folder, "link", 10)


def test_a_folder_is_refused(tmp_path: Path, folder: int) -> None:
    (tmp_path / "sub").mkdir()
    with pytest.raises(OSError, match="not a regular file"):
        read_small_in(folder, "sub", 10)


def test_a_path_is_read_by_its_last_name_in_its_folder(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"abc")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    assert read_small(str(tmp_path / "a"), 2) == b"ab"
    assert read_small(os.fsencode(tmp_path / "a"), 10) == b"abc"
    with pytest.raises(OSError, match="not a regular file"):
        read_small(str(tmp_path / "link"), 10)
