"""readkeeper's own inotify reader (inotify.py), driven by real files: what each change
is noted as, and on which thread; the watches it keeps as folders appear, move and go;
and that nothing it is handed ends its thread."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import wait_until
from readkeeper.watch.beneath_watch import folder_entries
from readkeeper.watch.inotify import PAIR_SECONDS, Inotify
from readkeeper.watch.probes import limit_reason
from watch_helpers import (
    make,
    max_queued_events,
    needs_a_default_sized_queue,
    user_namespaces_work,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

Note = tuple[str, str, bool, "str | None", bool]  # src, kind, folder, dest, writing


class Recorder:
    """The watcher's side of the reader (`inotify.Hooks`): skips folders named in
    `skip`, keeps every note with the thread it came on."""

    def __init__(self, skip: frozenset[str] = frozenset({"node_modules"})) -> None:
        self.skip = skip
        self.notes: list[Note] = []
        self.threads: set[str] = set()
        self.overflows = 0
        self.limits: list[OSError] = []
        self.fail_next_note = False
        self.noted_at: dict[tuple[str, str], float] = {}  # (path, kind) -> first time
        self.vanished: list[bytes] = []  # given as subfolders, as if deleted since the scan
        self.removed_once_watched: set[str] = set()  # folder names deleted as they are walked
        self.gone: list[str] = []  # roots whose own folder went

    def subfolders(self, folder: bytes, fd: int, files: list[bytes] | None = None) -> list[bytes]:
        if os.fsdecode(os.path.basename(folder)) in self.removed_once_watched:
            shutil.rmtree(folder)  # gone between its watch and the look inside it
            return []
        found = sorted(folder_entries(fd, folder, files))
        # The walk takes the last first: a folder gone is met before the others.
        return [*(f for f in found if not self.skips(f)), *self.vanished]

    def skips(self, folder: bytes) -> bool:
        return os.fsdecode(os.path.basename(folder)) in self.skip

    def limit_reached(self, error: OSError) -> None:
        self.limits.append(error)

    def overflowed(self) -> None:
        self.overflows += 1

    def root_gone(self, root: str) -> None:
        self.gone.append(root)

    def note(
        self, src: str, kind: str, is_dir: bool, dest: str | None = None, writing: bool = False
    ) -> None:
        if self.fail_next_note:
            self.fail_next_note = False
            raise RuntimeError("a bug in the intake")
        self.threads.add(threading.current_thread().name)
        self.notes.append((src, kind, is_dir, dest, writing))
        self.noted_at.setdefault((src, kind), time.monotonic())

    def kinds(self, path: Path) -> list[str]:
        return [kind for src, kind, *_ in self.notes if src == str(path)]

    def wait(self, path: Path, kind: str) -> None:
        wait_until(lambda: kind in self.kinds(path), f"{kind} of {path}")


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def reader(workspace: Path, recorder: Recorder) -> Iterator[Inotify]:
    reading = Inotify(recorder)
    reading.watch(str(workspace))
    yield reading
    reading.stop()


def kernel_watches(reader: Inotify) -> int:
    """The watches the kernel holds for the reader's instance (/proc's fdinfo)."""
    fdinfo = Path(f"/proc/self/fdinfo/{reader._fd}").read_text()
    return sum(line.startswith("inotify wd:") for line in fdinfo.splitlines())


def sentinel(recorder: Recorder, workspace: Path, name: str = "sentinel") -> None:
    """Wait until a write made now has been noted: what was done before it was read."""
    make(workspace / name, "s\n")
    recorder.wait(workspace / name, "created")


def test_a_write_is_noted_as_it_goes_and_when_closed_on_the_readers_thread(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    path = make(workspace / "a.txt", "one\n")
    recorder.wait(path, "created")
    with path.open("a") as file:
        file.write("two\n")
        file.flush()
        wait_until(lambda: (str(path), "modified", False, None, True) in recorder.notes, "write")
    wait_until(lambda: (str(path), "modified", False, None, False) in recorder.notes, "close")
    path.unlink()
    recorder.wait(path, "deleted")
    assert recorder.threads == {"readkeeper-watch-inotify"}
    assert recorder.overflows == 0


def test_a_rename_is_one_move(reader: Inotify, recorder: Recorder, workspace: Path) -> None:
    make(workspace / "a.txt", "a\n")
    sentinel(recorder, workspace)
    os.rename(workspace / "a.txt", workspace / "b.txt")
    wait_until(lambda: recorder.kinds(workspace / "a.txt")[-1:] == ["moved"], "the move")
    assert (str(workspace / "a.txt"), "moved", False, str(workspace / "b.txt"), False) in (
        recorder.notes
    )
    sentinel(recorder, workspace, "later")
    assert "deleted" not in recorder.kinds(workspace / "a.txt")


def test_a_tree_moved_in_is_watched_and_what_it_holds_is_noted(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    # Built outside, so that nothing in it could have been seen by a watch.
    outside = workspace.parent / "outside"
    for name in ("x/y/z/deep.txt", "x/top.txt", "x/node_modules/pkg/index.js"):
        make(outside / name, "content\n")
    os.rename(outside / "x", workspace / "x")
    recorder.wait(workspace / "x/y/z/deep.txt", "created")
    recorder.wait(workspace / "x/top.txt", "created")
    assert (str(workspace / "x/top.txt"), "created", False, None, False) in recorder.notes
    expected = {str(workspace / p) for p in ("", "x", "x/y", "x/y/z")}
    assert set(reader.watched()) == {p.rstrip("/") for p in expected}
    # The watch of the deepest folder works, and the skipped folder has none.
    make(workspace / "x/y/z/new.txt", "new\n")
    recorder.wait(workspace / "x/y/z/new.txt", "created")
    make(workspace / "x/node_modules/pkg/more.js", "more\n")
    sentinel(recorder, workspace)
    assert not [n for n in recorder.notes if "node_modules/pkg" in n[0]]


def test_a_tree_moved_in_is_listed_once_per_folder(
    reader: Inotify, recorder: Recorder, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The look for the folders to watch also finds the files to report: a new tree is
    # not listed a second time for them.
    outside = workspace.parent / "outside"
    files = ("x/a.txt", "x/y/b.txt", "x/y/z/c.txt")
    for name in files:
        make(outside / name, "content\n")
    listed: list[str] = []
    scandir = os.scandir

    def listing(fd: int) -> Any:  # folders are listed from their descriptors
        listed.append(os.readlink(f"/proc/self/fd/{fd}"))
        return scandir(fd)

    monkeypatch.setattr(os, "scandir", listing)
    os.rename(outside / "x", workspace / "x")
    for name in files:
        recorder.wait(workspace / name, "created")
    assert sorted(listed) == [str(workspace / p) for p in ("x", "x/y", "x/y/z")]


def test_mkdir_p_is_watched_all_the_way_down(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    deep = workspace / "a" / "b" / "c"
    deep.mkdir(parents=True)
    make(deep / "f.txt", "f\n")  # may come before the folder's watch: noted either way
    recorder.wait(deep / "f.txt", "created")
    wait_until(lambda: str(deep) in reader.watched(), "the deepest folder's watch")


def test_a_folder_renamed_inside_keeps_its_watches_under_the_new_name(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    (workspace / "old" / "sub").mkdir(parents=True)
    wait_until(lambda: str(workspace / "old" / "sub") in reader.watched(), "the watches")
    os.rename(workspace / "old", workspace / "new")
    wait_until(lambda: "moved" in recorder.kinds(workspace / "old"), "the folder's move")
    assert (str(workspace / "old"), "moved", True, str(workspace / "new"), False) in recorder.notes
    sentinel(recorder, workspace)
    assert not [n for n in recorder.notes if n[0].startswith(str(workspace / "new"))]
    make(workspace / "new" / "sub" / "f.txt", "f\n")
    recorder.wait(workspace / "new" / "sub" / "f.txt", "created")
    assert not [n for n in recorder.notes if n[0].startswith(str(workspace / "old") + "/")]
    assert str(workspace / "new" / "sub") in reader.watched()
    assert str(workspace / "old" / "sub") not in reader.watched()
    assert kernel_watches(reader) == len(reader.watched()) == 3  # the root, new, new/sub


def test_a_folder_moved_out_is_deleted_and_no_longer_watched(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    make(workspace / "gone" / "sub" / "f.txt", "f\n")
    wait_until(lambda: str(workspace / "gone" / "sub") in reader.watched(), "the watches")
    outside = workspace.parent / "elsewhere"
    os.rename(workspace / "gone", outside)
    # The other half of the move never comes: after PAIR_SECONDS it is a deletion.
    wait_until(lambda: "deleted" in recorder.kinds(workspace / "gone"), "the deletion")
    assert ("moved" in recorder.kinds(workspace / "gone")) is False
    wait_until(lambda: str(workspace / "gone") not in reader.watched(), "the watches to go")
    assert [w for w in reader.watched() if w.startswith(str(workspace / "gone"))] == []
    assert kernel_watches(reader) == len(reader.watched()) == 1  # the kernel's too
    before = len(recorder.notes)
    (outside / "sub" / "f.txt").write_text("changed outside\n")
    sentinel(recorder, workspace)
    assert {n[0] for n in recorder.notes[before:]} == {str(workspace / "sentinel")}


def test_a_file_moved_out_is_deleted_after_the_pairing_wait(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    make(workspace / "f.txt", "f\n")
    sentinel(recorder, workspace)
    renamed_at = time.monotonic()
    os.rename(workspace / "f.txt", workspace.parent / "f.txt")
    recorder.wait(workspace / "f.txt", "deleted")
    # Not before its other half had the time to come; the coalescer waits longer still.
    assert recorder.noted_at[(str(workspace / "f.txt"), "deleted")] >= renamed_at + PAIR_SECONDS
    assert PAIR_SECONDS < 0.5


def test_a_deleted_folder_loses_its_watch(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    make(workspace / "d" / "f.txt", "f\n")
    wait_until(lambda: str(workspace / "d") in reader.watched(), "the watch")
    shutil.rmtree(workspace / "d")
    recorder.wait(workspace / "d", "deleted")
    wait_until(lambda: str(workspace / "d") not in reader.watched(), "the watch to go")


def test_a_failing_note_does_not_end_the_reader(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    recorder.fail_next_note = True
    make(workspace / "first.txt", "1\n")
    wait_until(lambda: recorder.overflows == 1, "the lost batch to count as an overflow")
    make(workspace / "second.txt", "2\n")
    recorder.wait(workspace / "second.txt", "created")


def test_unwatch_and_stop_release_everything(workspace: Path, recorder: Recorder) -> None:
    other = workspace.parent / "other"
    other.mkdir()
    reading = Inotify(recorder)
    reading.watch(str(workspace))
    reading.watch(str(other))
    reading.unwatch(str(other))
    assert reading.watched() == [str(workspace)]
    assert kernel_watches(reading) == 1
    make(other / "f.txt", "f\n")
    sentinel(recorder, workspace)
    assert recorder.kinds(other / "f.txt") == []
    threads = {t.name for t in threading.enumerate()}
    assert "readkeeper-watch-inotify" in threads
    reading.stop()
    assert "readkeeper-watch-inotify" not in {t.name for t in threading.enumerate()}
    with pytest.raises(OSError, match="stopped") as raised:
        reading.watch(str(workspace))  # the instance is closed
    assert raised.value.errno == errno.EBADF


@pytest.mark.parametrize(("name", "code"), [("missing", errno.ENOENT), ("file", errno.ENOTDIR)])
def test_a_root_that_cannot_be_watched_raises(
    workspace: Path, recorder: Recorder, name: str, code: int
) -> None:
    make(workspace / "file", "not a folder\n")
    reading = Inotify(recorder)
    try:
        with pytest.raises(OSError, match=name) as raised:  # the message names the path
            reading.watch(str(workspace / name))
        assert raised.value.errno == code
        assert reading.watched() == []
    finally:
        reading.stop()


def test_a_link_to_a_folder_outside_is_never_followed(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    outside = workspace.parent / "secrets"
    outside.mkdir()
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    recorder.wait(workspace / "link", "created")
    assert ("created", False) in [(k, d) for s, k, d, *_ in recorder.notes if s.endswith("link")]
    make(outside / "key.pem", "private\n")
    sentinel(recorder, workspace)
    assert str(outside) not in reader.watched()
    assert str(workspace / "link") not in reader.watched()
    assert not [n for n in recorder.notes if "key.pem" in n[0]]


def test_a_name_that_is_not_utf8_round_trips(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    name = b"caf\xe9.txt"  # Latin-1, not UTF-8
    path = os.path.join(os.fsencode(workspace), name)
    with open(path, "wb") as file:
        file.write(b"x\n")
    noted = os.fsdecode(path)
    wait_until(lambda: noted in [n[0] for n in recorder.notes], "the odd name")
    assert os.fsencode(noted) == path  # the same bytes, so the file can be looked at


def test_the_root_deleted_is_noted(reader: Inotify, recorder: Recorder, workspace: Path) -> None:
    os.chmod(workspace, 0o755)  # a record about the root itself, not its deletion
    sentinel(recorder, workspace)
    assert recorder.kinds(workspace) == []
    shutil.rmtree(workspace)
    wait_until(lambda: (str(workspace), "deleted", True, None, False) in recorder.notes, "it")
    wait_until(lambda: reader.watched() == [], "its watch to go")


def test_a_folder_that_vanishes_as_it_appears_costs_nothing(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    with reader._lock:  # the reader looks at the folder only once it is gone
        for i in range(5):
            (workspace / f"brief{i}").mkdir()
            (workspace / f"brief{i}").rmdir()
    sentinel(recorder, workspace)
    assert recorder.overflows == 0  # not a failure of the reader's, just a folder gone
    assert reader.watched() == [str(workspace)]


@needs_a_default_sized_queue
def test_after_an_overflow_the_watches_are_walked_again(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    for name in ("before", "old"):
        (workspace / name).mkdir()
    wait_until(lambda: str(workspace / "old") in reader.watched(), "the watches")
    a, b = make(workspace / "a.txt", ""), make(workspace / "b.txt", "")
    sentinel(recorder, workspace)
    # The reader is held while the kernel's queue fills (writes to two files in turn:
    # the kernel merges only a record identical to the one before), then folders are
    # renamed and made: their records are lost with the overflow.
    with reader._lock:
        fds = [os.open(a, os.O_WRONLY), os.open(b, os.O_WRONLY)]
        for i in range(max_queued_events() + 5_000):
            os.write(fds[i % 2], b"x")
        for fd in fds:
            os.close(fd)
        os.rename(workspace / "before", workspace / "after")  # its old name left empty
        os.rename(workspace / "old", workspace / "moved")
        (workspace / "old").mkdir()  # a new folder with the old name
        (workspace / "new").mkdir()
    wait_until(lambda: recorder.overflows == 1, "the overflow")
    wait_until(lambda: str(workspace / "new") in reader.watched(), "the new folder's watch")
    # The walk (the last name first) meets "old" before "moved", "after" after all.
    names = ("after", "moved", "new", "old")
    assert set(reader.watched()) == {str(workspace), *(str(workspace / n) for n in names)}
    assert kernel_watches(reader) == 5  # "after" and "moved" kept the watches they had
    make(workspace / "after" / "f.txt", "f\n")
    recorder.wait(workspace / "after" / "f.txt", "created")


_LIMITS = """
import errno, json, os, sys, time
from readkeeper.watch.beneath_watch import folder_entries
from readkeeper.watch.inotify import Inotify, WatchLimitReached

class Hooks:
    def __init__(self):
        self.limits, self.notes = [], []
    def subfolders(self, folder, fd, files=None):
        return sorted(folder_entries(fd, folder, files))
    def skips(self, folder):
        return False
    def limit_reached(self, error):
        self.limits.append(errno.errorcode[error.errno])
    def overflowed(self):
        pass
    def root_gone(self, root):
        pass
    def note(self, src, kind, is_dir, dest=None, writing=False):
        self.notes.append(os.path.basename(src))

big, small, tree = sys.argv[1], sys.argv[2], sys.argv[3]
out = {}
hooks = Hooks()
reader = Inotify(hooks)
try:
    reader.watch(big)
    out["setup"] = "watched"
except WatchLimitReached as exc:
    out["setup"] = errno.errorcode[exc.errno]
out["setup_limits"] = hooks.limits
reader.stop()  # its watches go with it

hooks = Hooks()
reader = Inotify(hooks)
reader.watch(small)  # two of the three watches
os.rename(tree, os.path.join(small, "tree"))  # a folder holding three: one watch left
deadline = time.monotonic() + 10
while not hooks.limits and time.monotonic() < deadline:
    time.sleep(0.01)
with open(os.path.join(small, "after.txt"), "w") as file:
    file.write("x")
while "after.txt" not in hooks.notes and time.monotonic() < deadline:
    time.sleep(0.01)
out["later_limits"] = hooks.limits
out["later_watched"] = len(reader.watched())
out["still_reading"] = "after.txt" in hooks.notes
reader.stop()
print(json.dumps(out))
"""


@pytest.mark.ci_required
def test_the_kernel_refusing_a_watch_is_reported_and_ends_only_a_setup(
    workspace: Path,
) -> None:
    if not user_namespaces_work():
        pytest.skip("needs unprivileged user namespaces (unshare -Ur) to lower the limit")
    big, small = workspace / "big", workspace / "small"
    for i in range(5):
        (big / f"d{i}").mkdir(parents=True)
    (small / "d").mkdir(parents=True)
    tree = workspace.parent / "tree"
    for name in ("a", "b", "c"):
        (tree / name).mkdir(parents=True)
    script = f"echo 3 > /proc/sys/user/max_inotify_watches && exec {sys.executable} -c "
    args = [_LIMITS, str(big), str(small), str(tree)]
    done = subprocess.run(
        ["unshare", "-Ur", "sh", "-c", script + '"$0" "$1" "$2" "$3"', *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    # Setting up a root: the refusal is reported, and the setup ends (the watcher falls
    # back). Later, on the reader's thread: reported, and the reader goes on.
    assert (out["setup"], out["setup_limits"]) == ("ENOSPC", ["ENOSPC"])
    assert out["later_limits"] == ["ENOSPC"]  # once: the walk of the new tree stops there
    assert out["later_watched"] == 3
    assert out["still_reading"] is True


def test_a_folder_gone_between_its_scan_and_its_watch_is_passed_over(
    workspace: Path, recorder: Recorder
) -> None:
    (workspace / "kept" / "deeper").mkdir(parents=True)
    recorder.vanished = [os.fsencode(workspace / "vanished")]
    reading = Inotify(recorder)
    try:
        reading.watch(str(workspace))  # the root is there: the setup goes on
        assert reading.watched() == [
            str(workspace / p).rstrip("/") for p in ("", "kept", "kept/deeper")
        ]
    finally:
        reading.stop()


def test_a_skipped_folder_made_later_gets_no_watch(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    (workspace / "node_modules" / "pkg").mkdir(parents=True)
    make(workspace / "node_modules" / "pkg" / "index.js", "x\n")
    sentinel(recorder, workspace)
    assert reader.watched() == [str(workspace)]
    assert not [n for n in recorder.notes if "pkg" in n[0]]


def test_a_skipped_folder_renamed_to_a_kept_name_is_watched(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    make(workspace / "node_modules" / "pkg" / "index.js", "x\n")
    sentinel(recorder, workspace)
    assert reader.watched() == [str(workspace)]
    os.rename(workspace / "node_modules", workspace / "vendored")
    recorder.wait(workspace / "vendored" / "pkg" / "index.js", "created")
    assert str(workspace / "vendored" / "pkg") in reader.watched()


def test_a_folder_gone_while_a_new_tree_is_walked_is_passed_over(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    outside = workspace.parent / "tree"
    make(outside / "a_kept" / "f.txt", "f\n")
    (outside / "z_gone").mkdir()  # sorted last: walked first, and deleted as it is
    recorder.removed_once_watched = {"z_gone"}
    os.rename(outside, workspace / "tree")
    recorder.wait(workspace / "tree" / "a_kept" / "f.txt", "created")
    assert recorder.overflows == 0


@pytest.mark.parametrize("how", ["deleted", "moved away"])
def test_a_root_whose_folder_goes_is_said_gone_and_its_watches_dropped(
    reader: Inotify, recorder: Recorder, workspace: Path, how: str
) -> None:
    # Moved away, its watches would go on reporting the renamed folder's changes under
    # the root's name; deleted, they are gone. Either way the watcher is told.
    make(workspace / "sub" / "a.txt", "a\n")
    sentinel(recorder, workspace)
    if how == "deleted":
        shutil.rmtree(workspace)
    else:
        workspace.rename(workspace.with_name("ws.old"))
    wait_until(lambda: recorder.gone == [str(workspace)], "the root said gone")
    assert reader.watched() == []
    wait_until(lambda: kernel_watches(reader) == 0, "every watch released")
    if how == "moved away":  # what is written in the renamed folder is not noted
        other = make(workspace.with_name("other") / "o.txt", "o\n").parent
        reader.watch(str(other))
        before = len(recorder.notes)
        make(workspace.with_name("ws.old") / "sub" / "b.txt", "b\n")
        sentinel(recorder, other)
        assert {src for src, *_ in recorder.notes[before:]} == {str(other / "sentinel")}


class Ended(BaseException):
    """What no `except Exception` of the reader catches."""


class Ending(Recorder):
    def note(
        self, src: str, kind: str, is_dir: bool, dest: str | None = None, writing: bool = False
    ) -> None:
        raise Ended("a step let it through")


def test_a_reader_that_ends_on_an_error_is_reported_for_the_watcher_to_leave(
    workspace: Path,
) -> None:
    """The watcher leaves inotify (Hooks.limit_reached) with the reason, and says so:
    never a dead reader behind a watcher that says it watches."""
    ending = Ending()
    reading = Inotify(ending)
    try:
        reading.watch(str(workspace))
        make(workspace / "first.txt", "1\n")
        wait_until(lambda: ending.limits, "the reader's end to be reported")
        (error,) = ending.limits
        assert limit_reason(error) == (
            'the inotify reader stopped on an unexpected error: Ended: "a step let it through"'
        )
    finally:
        reading.stop()
