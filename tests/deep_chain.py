"""A folder chain deeper than Python's recursion limit, made and removed by descriptor
(its path is too long for one call, and pytest's own clean-up recurses per level)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path


def make_chain(root: Path, levels: int) -> None:
    """`levels` nested folders named d (too long a path for one mkdir: made by descriptor)."""
    fd = os.open(root, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        deeper = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    with open(os.open("deepest.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as file:
        file.write("x\n")
    os.close(fd)


def remove_chain(root: Path) -> None:
    """Remove what `make_chain` made (pytest's own clean-up recurses per level)."""
    fds = [os.open(root, os.O_RDONLY)]
    while True:
        try:
            fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
        except FileNotFoundError:
            break
    with contextlib.suppress(FileNotFoundError):
        os.unlink("deepest.txt", dir_fd=fds[-1])
    for parent in reversed(fds[:-1]):
        os.rmdir("d", dir_fd=parent)
    for fd in fds:
        os.close(fd)


def chains() -> Iterator[Callable[[Path, int], None]]:
    """A fixture's body: `make_chain`, each chain removed after the test."""
    made: list[Path] = []

    def make(root: Path, levels: int) -> None:
        made.append(root)
        make_chain(root, levels)

    yield make
    for root in made:
        remove_chain(root)
