"""readkeeper's own inotify reader (inotify.py), driven by real files: what each change
is noted as, and on which thread; the watches it keeps as folders appear, move and go;
and that nothing it is handed ends its thread."""

from __future__ import annotations

import errno
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import wait_until
from readkeeper.watch.inotify import PAIR_SECONDS, Inotify
from watch_helpers import make

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

    def subfolders(self, folder: bytes) -> list[bytes]:
        with os.scandir(folder) as entries:
            found = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
        return [f for f in found if not self.skips(f)]

    def skips(self, folder: bytes) -> bool:
        return os.fsdecode(os.path.basename(folder)) in self.skip

    def limit_reached(self, error: OSError) -> None:
        self.limits.append(error)

    def overflowed(self) -> None:
        self.overflows += 1

    def note(
        self, src: str, kind: str, is_dir: bool, dest: str | None = None, writing: bool = False
    ) -> None:
        if self.fail_next_note:
            self.fail_next_note = False
            raise RuntimeError("a bug in the intake")
        self.threads.add(threading.current_thread().name)
        self.notes.append((src, kind, is_dir, dest, writing))

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
    expected = {str(workspace / p) for p in ("", "x", "x/y", "x/y/z")}
    assert set(reader.watched()) == {p.rstrip("/") for p in expected}
    # The watch of the deepest folder works, and the skipped folder has none.
    make(workspace / "x/y/z/new.txt", "new\n")
    recorder.wait(workspace / "x/y/z/new.txt", "created")
    make(workspace / "x/node_modules/pkg/more.js", "more\n")
    sentinel(recorder, workspace)
    assert not [n for n in recorder.notes if "node_modules/pkg" in n[0]]


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
    make(workspace / "new" / "sub" / "f.txt", "f\n")
    recorder.wait(workspace / "new" / "sub" / "f.txt", "created")
    assert not [n for n in recorder.notes if n[0].startswith(str(workspace / "old") + "/")]
    assert str(workspace / "new" / "sub") in reader.watched()
    assert str(workspace / "old" / "sub") not in reader.watched()


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
    before = len(recorder.notes)
    (outside / "sub" / "f.txt").write_text("changed outside\n")
    sentinel(recorder, workspace)
    assert {n[0] for n in recorder.notes[before:]} == {str(workspace / "sentinel")}


def test_a_file_moved_out_is_deleted_after_the_pairing_wait(
    reader: Inotify, recorder: Recorder, workspace: Path
) -> None:
    make(workspace / "f.txt", "f\n")
    sentinel(recorder, workspace)
    os.rename(workspace / "f.txt", workspace.parent / "f.txt")
    recorder.wait(workspace / "f.txt", "deleted")
    assert PAIR_SECONDS < 0.5  # the coalescer waits longer for a move's other half


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
