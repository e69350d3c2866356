"""Shared by the tests that try to plant a git repository through readkeeper: the steps
that would build one (in every order), and git's own verdict on a folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

CONFIG = '[core]\n\tpager = "touch PWNED; cat"\n'
HEAD = "ref: refs/heads/main\n"

# Each order builds the folder `s` of an embedded bare repository (HEAD, objects/,
# refs/, a config naming a command) from readkeeper's calls alone: ("write", name,
# content), ("mkdir", name) or ("move", source, destination).
ORDERS: dict[str, list[tuple[str, ...]]] = {
    "head_last": [
        ("write", "s/config", CONFIG),
        ("mkdir", "s/objects"),
        ("mkdir", "s/refs/heads"),
        ("write", "s/HEAD", HEAD),
    ],
    "head_first": [
        ("write", "s/HEAD", HEAD),
        ("mkdir", "s/objects"),
        ("mkdir", "s/refs"),
        ("write", "s/config", CONFIG),
    ],
    "renamed_into_place": [
        ("write", "s/cfg.txt", CONFIG),
        ("write", "s/head.txt", HEAD),
        ("mkdir", "s/o"),
        ("mkdir", "s/r"),
        ("move", "s/o", "s/objects"),
        ("move", "s/r", "s/refs"),
        ("move", "s/cfg.txt", "s/config"),
        ("move", "s/head.txt", "s/HEAD"),
    ],
    "head_moved_in_from_outside": [
        ("write", "s/config", CONFIG),
        ("mkdir", "s/objects"),
        ("mkdir", "s/refs"),
        ("write", "h", HEAD),
        ("move", "h", "s/HEAD"),
    ],
    "prepared_folder_moved_into_place": [
        ("mkdir", "prep/objects"),
        ("mkdir", "prep/refs"),
        ("write", "prep/config", CONFIG),
        ("write", "prep/HEAD", HEAD),
        ("move", "prep", "s"),
    ],
    "head_in_another_case": [
        ("mkdir", "s/objects"),
        ("mkdir", "s/refs"),
        ("write", "s/config", CONFIG),
        ("write", "s/head", HEAD),
    ],
    "head_with_an_ignored_character": [
        ("mkdir", "s/objects"),
        ("mkdir", "s/refs"),
        ("write", "s/config", CONFIG),
        ("write", "s/HE\u200dAD", HEAD),
    ],
}


def git_dir_of(folder: Path) -> str | None:
    """What real git takes `folder` to be in (`git rev-parse --git-dir`), looking no
    higher than `folder` itself; None when git finds no repository there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CEILING_DIRECTORIES"] = str(folder.parent)
    found = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "--git-dir"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    return found.stdout.strip() if found.returncode == 0 else None
