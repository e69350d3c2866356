"""A folder chain deeper than Python's recursion limit, or one whose path is past
PATH_MAX, made and removed by descriptor (its path is too long for one call, and
pytest's own clean-up recurses per level)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

# Past PATH_MAX (4,096) whatever the root's own length: 17 levels of 250-byte names. Few
# levels, so a walk that resolves every path from `/` (as ripgrep does) stays quick under
# load: 2,100 levels named `d` cost ripgrep seconds, near a search's deadline.
LONG_NAME = "d" * 250
PAST_PATH_MAX = 17


def long_named(workspace: Path) -> Path:
    """14 folders of 250-character names (a path of about 3,600 characters, under
    PATH_MAX, so each call can name it), `real.txt` in the last: the folder returned."""
    folder = workspace
    for n in range(14):
        folder = folder / f"{'q' * 250}{n}"
    folder.mkdir(parents=True)
    (folder / "real.txt").write_text("x\n")
    return folder


def make_chain(
    root: Path, levels: int, name: str = "d", file: str = "deepest.txt", text: str = "x\n"
) -> Path:
    """`levels` nested folders named `name` (too long a path for one mkdir: made by
    descriptor), `file` holding `text` in the last, which is returned."""
    fd = os.open(root, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir(name, dir_fd=fd)
        deeper = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    with open(os.open(file, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as written:
        written.write(text)
    os.close(fd)
    return root / (f"{name}/" * levels).rstrip("/")


def remove_chain(root: Path, name: str = "d", file: str = "deepest.txt") -> None:
    """Remove what `make_chain` made (pytest's own clean-up recurses per level)."""
    fds = [os.open(root, os.O_RDONLY)]
    while True:
        try:
            fds.append(os.open(name, os.O_RDONLY, dir_fd=fds[-1]))
        except FileNotFoundError:
            break
    with contextlib.suppress(FileNotFoundError):
        os.unlink(file, dir_fd=fds[-1])
    for parent in reversed(fds[:-1]):
        os.rmdir(name, dir_fd=parent)
    for fd in fds:
        os.close(fd)


class MakeChain(Protocol):
    """What `chains` yields: `make_chain`, remembered for clean-up."""

    def __call__(self, root: Path, levels: int, name: str = "d") -> None: ...


def chains() -> Iterator[MakeChain]:
    """A fixture's body: `make_chain`, each chain removed after the test."""
    made: list[tuple[Path, str]] = []

    def make(root: Path, levels: int, name: str = "d") -> None:
        made.append((root, name))
        make_chain(root, levels, name)

    yield make
    for root, name in made:
        remove_chain(root, name)
