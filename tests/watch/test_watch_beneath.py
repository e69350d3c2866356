"""The inotify reader lists and watches only folders beneath its root (beneath_watch.py):
a folder swapped for a symlink out of the root between the reader's steps (its listing
and the watches of what it listed) is never listed nor watched through the link, and
once the real folder is back, its changes are noticed again.

The swap is made by the hooks themselves, at the one moment that matters: just after
the folder was listed. The watches held are read from the kernel (/proc's fdinfo of the
reader's inotify descriptor), by inode, so a watch that landed outside shows whatever
name the reader keeps for it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import wait_until
from readkeeper.files.ignore import IgnoreRules
from readkeeper.watch.beneath_watch import folder_entries
from readkeeper.watch.inotify import Inotify
from watch_helpers import make

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


class Swapper:
    """The watcher's side of the reader (`inotify.Hooks`). Right after it lists the
    folder named `swap`, it moves that folder into `stash` (inside the root) and puts a
    symlink to `outside` in its place, once; it keeps every note."""

    def __init__(self, swap: Path, stash: Path, outside: Path) -> None:
        self.swap, self.stash, self.outside = os.fsencode(swap), stash, outside
        self.swapped = threading.Event()
        self.notes: list[tuple[str, str]] = []
        self.listed: list[bytes] = []

    def subfolders(self, folder: bytes, fd: int, files: list[bytes] | None = None) -> list[bytes]:
        self.listed.append(folder)
        found = sorted(folder_entries(fd, folder, files))
        if folder == self.swap and not self.swapped.is_set():
            os.rename(folder, self.stash / os.fsdecode(os.path.basename(folder)))
            os.symlink(self.outside, folder, target_is_directory=True)
            self.swapped.set()
        return found

    def skips(self, folder: bytes) -> bool:
        return False

    def limit_reached(self, error: OSError) -> None:
        raise AssertionError(f"no watch should be refused for lack of room: {error}")

    def overflowed(self) -> None:
        pass

    def root_gone(self, root: str) -> None:
        pass

    def note(
        self, src: str, kind: str, is_dir: bool, dest: str | None = None, writing: bool = False
    ) -> None:
        self.notes.append((src, kind))

    def wait(self, path: Path, kind: str) -> None:
        wait_until(lambda: (str(path), kind) in self.notes, f"{kind} of {path}")


def watched_inodes(reader: Inotify) -> set[int]:
    """The inodes the kernel holds a watch on for the reader's instance."""
    inodes = set()
    for line in Path(f"/proc/self/fdinfo/{reader._fd}").read_text().splitlines():
        if line.startswith("inotify wd:"):
            fields = dict(part.split(":", 1) for part in line.split()[1:])
            inodes.add(int(fields["ino"], 16))
    return inodes


def inodes_under(top: Path) -> set[int]:
    found = {top.stat().st_ino}
    for folder, subs, _ in os.walk(top):
        found |= {os.stat(os.path.join(folder, s)).st_ino for s in subs}
    return found


@pytest.fixture
def outside(workspace: Path) -> Path:
    """A tree outside the root, shaped like the one inside."""
    out = workspace.parent / "out" / "dir"
    make(out / "deep" / "f.py", "outside\n")
    for i in range(8):
        (out / f"d{i}").mkdir()
    return out


@pytest.fixture
def readers() -> Iterator[list[Inotify]]:
    made: list[Inotify] = []
    yield made
    for reader in made:
        reader.stop()


def settled(reader: Inotify, hooks: Swapper, workspace: Path, name: str) -> None:
    """Wait until a write made now was noted and the reader has nothing left to do."""
    make(workspace / name, "s\n")
    hooks.wait(workspace / name, "created")
    wait_until(reader.quiet, "the reader caught up")


def test_a_folder_swapped_for_a_symlink_as_the_root_is_set_up_is_not_followed(
    workspace: Path, outside: Path, readers: list[Inotify]
) -> None:
    sub = workspace / "sub"
    make(sub / "deep" / "f.py", "inside\n")
    for i in range(8):
        (sub / f"d{i}").mkdir()
    (workspace / "zstash").mkdir()  # listed after "sub", walked before it
    hooks = Swapper(sub, workspace / "zstash", outside)
    reader = Inotify(hooks)
    readers.append(reader)
    reader.watch(str(workspace))
    assert hooks.swapped.is_set()
    settled(reader, hooks, workspace, "sentinel1")
    assert not watched_inodes(reader) & inodes_under(outside)
    assert not [f for f in hooks.listed if f.startswith(os.fsencode(sub) + b"/")]

    os.unlink(sub)  # the real folder back in its place: its changes are heard again
    os.rename(workspace / "zstash" / "sub", sub)
    settled(reader, hooks, workspace, "sentinel2")
    make(sub / "deep" / "f.py", "changed\n")
    hooks.wait(sub / "deep" / "f.py", "modified")
    assert (sub / "deep").stat().st_ino in watched_inodes(reader)
    assert not watched_inodes(reader) & inodes_under(outside)


def test_a_tree_moved_in_then_flipped_to_a_symlink_is_not_followed(
    workspace: Path, outside: Path, readers: list[Inotify]
) -> None:
    (workspace / "zstash").mkdir()
    tree = workspace / "t"
    hooks = Swapper(tree, workspace / "zstash", outside)
    reader = Inotify(hooks)
    readers.append(reader)
    reader.watch(str(workspace))
    incoming = workspace.parent / "incoming"
    make(incoming / "deep" / "f.py", "inside\n")
    for i in range(8):
        (incoming / f"d{i}").mkdir()
    os.rename(incoming, tree)  # walked on the reader's thread, flipped as it is listed
    wait_until(hooks.swapped.is_set, "the tree moved in listed")
    settled(reader, hooks, workspace, "sentinel1")
    assert not watched_inodes(reader) & inodes_under(outside)
    assert not [f for f in hooks.listed if f.startswith(os.fsencode(tree) + b"/")]

    os.unlink(tree)
    os.rename(workspace / "zstash" / "t", tree)
    settled(reader, hooks, workspace, "sentinel2")
    make(tree / "deep" / "f.py", "changed\n")
    hooks.wait(tree / "deep" / "f.py", "modified")
    assert (tree / "deep").stat().st_ino in watched_inodes(reader)
    assert not watched_inodes(reader) & inodes_under(outside)


def test_ignore_files_are_read_beneath_the_root_only(workspace: Path, outside: Path) -> None:
    # The outside twin ignores every .py file; the real folder ignores nothing.
    make(outside / ".gitignore", "*.py\n")
    make(outside / ".git" / "info" / "exclude", "*.md\n")
    make(workspace / "sub" / "keep.py", "k\n")
    make(workspace / "sub" / ".gitignore", "*.log\n")
    os.rename(workspace / "sub", workspace / "real")
    os.symlink(outside, workspace / "sub", target_is_directory=True)  # swapped since the walk
    os.symlink(outside / ".git", workspace / ".git", target_is_directory=True)
    rules = IgnoreRules(str(workspace), [])
    assert not rules.ignored(str(workspace / "sub" / "keep.py"))
    assert not rules.ignored(str(workspace / "notes.md"))  # the outside .git's exclude
    assert rules.ignored(str(workspace / "real" / "x.log"))  # a real one is still read


_NO_PROC = """
import errno, json, os, sys
from readkeeper.watch.inotify import Inotify
ws, out, fake = sys.argv[1:4]
if fake == "links":  # a /proc whose fd links all name the folder outside
    os.makedirs("/proc/self/fd")
    for n in range(1024):
        os.symlink(out, f"/proc/self/fd/{n}")

class Hooks:
    def subfolders(self, folder, fd, files=None):
        return []
    def skips(self, folder):
        return False
    def limit_reached(self, error):
        pass
    def overflowed(self):
        pass
    def root_gone(self, root):
        pass
    def note(self, *args, **kwargs):
        pass

reader = Inotify(Hooks())
try:
    reader.watch(ws)
    result = "watched"
except OSError as exc:
    result = errno.errorcode.get(exc.errno, str(exc.errno))
print(json.dumps({"result": result, "watched": reader.watched()}))
reader.stop()
"""


@pytest.mark.parametrize("fake", ["empty", "links"])
def test_without_a_true_proc_no_watch_is_added(workspace: Path, outside: Path, fake: str) -> None:
    # /proc hidden under an empty tmpfs, or one whose fd links lead outside: the watch
    # is refused (the watcher falls back to polling), never added by path.
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to hide /proc in a mount namespace")
    script = 'mount -t tmpfs none /proc && exec "$0" -c "$1" "$2" "$3" "$4"'
    args = [sys.executable, _NO_PROC, str(workspace), str(outside), fake]
    done = subprocess.run(
        ["unshare", "-Urm", "sh", "-c", script, *args], capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0 and "mount" in done.stderr:
        pytest.skip(f"cannot mount in a user namespace here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"result": "EACCES", "watched": []}
