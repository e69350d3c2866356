"""Trees for the glob tests (tests/search/test_glob_*.py): files made by name, the files
a walk of its own finds, and those git does not ignore (the reference for ripgrep's
ignore rules)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def make(root: Path, names: list[str]) -> None:
    """A file of one line at each of `names` (relative to `root`), its folders made."""
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")


def there(root: Path) -> set[str]:
    """Every file under `root` but the .git folder's, by a walk of its own."""
    found = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        found |= {os.path.relpath(os.path.join(folder, f), root) for f in files}
    return found


def git_listed(root: Path) -> set[str]:
    """The files git does not ignore."""
    names = sorted(there(root))
    done = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "--no-index", *names],
        capture_output=True,
        text=True,
    )
    return set(names) - set(done.stdout.split())
