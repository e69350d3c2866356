"""A chain of folders thousands deep, as a hostile repository holds one (outside rounds
44-46): made and removed a level at a time, since its whole path is longer than some
calls take and shutil.rmtree recurses a level a frame."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def chain(root: Path, depth: int) -> Path:
    """`depth` folders `x` one in another beneath `root`, `0.txt` ("alpha") in the
    deepest, which is returned."""
    here = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("x", dir_fd=here)
            below = os.open("x", os.O_RDONLY | os.O_DIRECTORY, dir_fd=here)
            os.close(here)
            here = below
        with open(os.open("0.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=here), "w") as f:
            f.write("alpha\n")
    finally:
        os.close(here)
    return root / ("x/" * depth).rstrip("/")


def unchain(root: Path) -> None:
    """Remove the chain beneath `root` and whatever else lies in its folders, the
    deepest first."""
    folders = [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        while "x" in os.listdir(folders[-1]):
            folders.append(os.open("x", os.O_RDONLY | os.O_DIRECTORY, dir_fd=folders[-1]))
        while folders:
            here = folders.pop()
            try:
                for entry in os.scandir(here):
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.name, dir_fd=here)
                    else:
                        os.unlink(entry.name, dir_fd=here)
            finally:
                os.close(here)
    finally:
        for fd in folders:
            os.close(fd)
