"""The warm launchers (server/files/zygote.py, confined.py): one process per domain (the
folders a call may read, by device and inode), confined to it, starts each call's
program, so a program reads its own call's folders alone, never another call's; it
cannot write, cannot follow a symlink out, is killed when asked and reports how it
ended; a launcher that died is started again; none outlives readkeeper."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from readkeeper.files import landlock
from readkeeper.files.confined import MAX_LAUNCHERS, Launcher
from watch_core_helpers import wait_for

pytestmark = pytest.mark.skipif(landlock.abi() < 1, reason="the kernel has no Landlock")


def _program(name: str) -> str:
    found = shutil.which(name)
    assert found is not None
    return os.path.realpath(found)


@pytest.fixture
def launcher() -> Iterator[Launcher]:
    started = Launcher()
    yield started
    started.close()


def _run(launcher: Launcher, argv: list[str], cwd: Path, read: list[str]) -> tuple[int, str, str]:
    child = launcher.start(argv, cwd=str(cwd), read=read, run=landlock.SYSTEM_LIBRARIES, env={})
    out, err = child.stdout.read(), child.stderr.read()
    child.stdout.close()
    child.stderr.close()
    return child.wait(), out.decode(), err.decode()


def _folders(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
        (folder / "note.txt").write_text(f"{folder.name} text\n")
    return first, second


def test_each_child_reads_only_its_own_calls_folders(launcher: Launcher, tmp_path: Path) -> None:
    first, second = _folders(tmp_path)
    cat = _program("cat")
    assert _run(launcher, [cat, "first/note.txt"], tmp_path, ["first"])[:2] == (0, "first text\n")
    first_launcher = launcher.pid()
    # The next call is allowed `second` only: the first call's folder is not readable.
    code, out, err = _run(launcher, [cat, "first/note.txt"], tmp_path, ["second"])
    assert (code, out) == (1, "")
    assert "Permission denied" in err
    second_launcher = launcher.pid()
    assert second_launcher != first_launcher  # a domain of its own
    assert _run(launcher, [cat, "second/note.txt"], tmp_path, ["second"])[:2] == (
        0,
        "second text\n",
    )
    code, _, err = _run(launcher, [cat, str(first / "note.txt")], second, ["."])
    assert code == 1
    assert "Permission denied" in err
    assert launcher.pid() == second_launcher  # the same folders: the same warm launcher
    assert _run(launcher, [cat, "note.txt"], first, ["."])[:2] == (0, "first text\n")
    assert launcher.pid() == first_launcher
    assert sorted(launcher.pids()) == sorted([first_launcher, second_launcher])


def test_a_folder_put_in_place_of_another_gets_a_launcher_of_its_own(
    launcher: Launcher, tmp_path: Path
) -> None:
    """A launcher is confined to the folder a name led to when it started; the same name
    leading to another folder later (moved away, another put there) is another domain."""
    first, _ = _folders(tmp_path)
    cat = _program("cat")
    assert _run(launcher, [cat, "first/note.txt"], tmp_path, ["first"])[:2] == (0, "first text\n")
    before = launcher.pid()
    first.rename(tmp_path / "moved")
    first.mkdir()
    (first / "note.txt").write_text("new text\n")
    assert _run(launcher, [cat, "first/note.txt"], tmp_path, ["first"])[:2] == (0, "new text\n")
    assert launcher.pid() != before
    # The first launcher still holds the moved folder, and only it.
    code, _, err = _run(launcher, [cat, "first/note.txt"], tmp_path, ["moved"])
    assert (code, "Permission denied" in err) == (1, True)
    assert launcher.pid() == before


def test_past_the_cap_idle_launchers_retire_and_busy_ones_stay(
    launcher: Launcher, tmp_path: Path
) -> None:
    folders = [tmp_path / f"d{n}" for n in range(MAX_LAUNCHERS + 2)]
    for folder in folders:
        folder.mkdir()
        (folder / "note.txt").write_text(f"{folder.name}\n")
    busy = launcher.start(
        [_program("sleep"), "600"], cwd=str(folders[0]), read=["."],
        run=landlock.SYSTEM_LIBRARIES, env={},
    )  # fmt: skip
    busy_launcher = launcher.pid()
    cat = _program("cat")
    for folder in folders[1:]:
        assert _run(launcher, [cat, "note.txt"], folder, ["."])[:2] == (0, f"{folder.name}\n")
        assert len(launcher.pids()) <= MAX_LAUNCHERS + 1  # the busy one may stay over
    assert busy_launcher in launcher.pids()
    assert busy.poll() is None  # its program still runs
    busy.kill()
    assert busy.wait() == -signal.SIGKILL
    busy.stdout.close()
    busy.stderr.close()
    assert _run(launcher, [cat, "note.txt"], folders[1], ["."])[0] == 0
    assert len(launcher.pids()) == MAX_LAUNCHERS


def test_a_child_cannot_write_or_follow_a_symlink_out(launcher: Launcher, tmp_path: Path) -> None:
    first, second = _folders(tmp_path)
    (first / "link").symlink_to(second, target_is_directory=True)
    code, _, err = _run(launcher, [_program("touch"), "made.txt"], first, ["."])
    assert code == 1
    assert "Permission denied" in err
    assert not (first / "made.txt").exists()
    code, out, err = _run(launcher, [_program("cat"), "link/note.txt"], first, ["."])
    assert (code, out) == (1, "")
    assert "Permission denied" in err
    assert (first / "link" / "note.txt").read_text() == "second text\n"  # the link works


def test_a_child_is_killed_through_its_pidfd(launcher: Launcher, tmp_path: Path) -> None:
    child = launcher.start(
        [_program("sleep"), "60"],
        cwd=str(tmp_path),
        read=["."],
        run=landlock.SYSTEM_LIBRARIES,
        env={},
    )
    assert child.poll() is None
    child.kill()
    assert child.wait() == -signal.SIGKILL
    child.stdout.close()
    child.stderr.close()


def test_a_launcher_that_died_is_started_again(launcher: Launcher, tmp_path: Path) -> None:
    first, _ = _folders(tmp_path)
    cat = _program("cat")
    assert _run(launcher, [cat, "note.txt"], first, ["."])[0] == 0
    pid = launcher.pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)  # the launcher this test started
    assert _run(launcher, [cat, "note.txt"], first, ["."])[:2] == (0, "first text\n")
    assert launcher.pid() not in (None, pid)


def test_a_program_that_cannot_start_is_reported(launcher: Launcher, tmp_path: Path) -> None:
    code, _, err = _run(launcher, [str(tmp_path / "missing")], tmp_path, ["."])
    assert code == 127
    assert "confined launch failed" in err


@pytest.mark.parametrize("ended", ["closed", "killed"])
def test_a_child_blocked_for_good_does_not_outlive_its_launcher(tmp_path: Path, ended: str) -> None:
    """A program that never ends by itself (ripgrep waiting on a FIFO a repository
    planted as its .gitignore) ends with the launcher, whether the server closed it or
    died (its socket closed): no process is left behind, blocked forever."""
    launcher = Launcher()
    child = launcher.start(
        [_program("sleep"), "600"], cwd=str(tmp_path), read=["."],
        run=landlock.SYSTEM_LIBRARIES, env={},
    )  # fmt: skip
    pid = launcher.pid()
    assert pid is not None
    if ended == "killed":
        os.kill(pid, signal.SIGKILL)
    launcher.close()
    child.stdout.close()
    child.stderr.close()
    wait_for(lambda: _ended(child.pid), "the launcher's child to end with it", timeout=30)


def _ended(pid: int) -> bool:
    """Whether process `pid` has ended (gone, or a zombie its new parent has not reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def test_a_caller_that_dies_leaves_no_program_behind(tmp_path: Path) -> None:
    """The process that started the launcher dies without a word (SIGKILL, out of memory):
    its socket closes, and the launcher kills the programs it started before it ends."""
    script = (
        "import os, sys\n"
        "from readkeeper.files import landlock\n"
        "from readkeeper.files.confined import Launcher\n"
        f"child = Launcher().start([{_program('sleep')!r}, '600'], cwd={str(tmp_path)!r},"
        " read=['.'], run=landlock.SYSTEM_LIBRARIES, env={})\n"
        "print(child.pid, flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert ran.returncode == -signal.SIGKILL, ran.stderr
    pid = int(ran.stdout.split()[0])
    wait_for(lambda: _ended(pid), "the dead caller's program to end", timeout=30)
