"""The warm launcher (server/files/zygote.py, confined.py): one process forks a child per
call, and each child is confined to that call's folders alone, never a previous call's;
it cannot write, cannot follow a symlink out, is killed when asked and reports how it
ended; a launcher that died is started again."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from readkeeper.files import landlock
from readkeeper.files.confined import Child, Launcher
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
    pid = launcher.pid()
    # The next call is allowed `second` only: the first call's folder is not readable.
    code, out, err = _run(launcher, [cat, "first/note.txt"], tmp_path, ["second"])
    assert (code, out) == (1, "")
    assert "Permission denied" in err
    assert _run(launcher, [cat, "second/note.txt"], tmp_path, ["second"])[:2] == (
        0,
        "second text\n",
    )
    code, _, err = _run(launcher, [cat, str(first / "note.txt")], second, ["."])
    assert code == 1
    assert "Permission denied" in err
    assert launcher.pid() == pid  # one launcher served every call: it was warm


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


def _spare(launcher: Launcher) -> int:
    """The pid of the spare child the launcher keeps, once it is there (the launcher's
    one child between calls); waits for it."""
    pid = launcher.pid()
    assert pid is not None
    found: list[int] = []

    def there() -> bool:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        found[:] = [int(child) for child in children]
        return len(found) == 1 and _status(found[0], "NoNewPrivs") == "1"

    wait_for(there, "the launcher's spare child, confined")
    return found[0]


def _status(pid: int, field: str) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return line.split(":", 1)[1].strip()
    return ""


def _start(launcher: Launcher, argv: list[str], cwd: Path, read: list[str]) -> Child:
    return launcher.start(argv, cwd=str(cwd), read=read, run=landlock.SYSTEM_LIBRARIES, env={})


def test_a_spare_is_confined_before_its_call_and_serves_only_the_same_folders(
    launcher: Launcher, tmp_path: Path
) -> None:
    """The spare child confines itself to the last call's folders before any command
    comes (no_new_privs is set with the domain), holds no descriptor but its stdio and
    its socket, and takes the next call only when that call names the same folders: it
    can read no more than a fresh child of that call could."""
    _folders(tmp_path)
    cat = _program("cat")
    assert _run(launcher, [cat, "first/note.txt"], tmp_path, ["first"])[:2] == (0, "first text\n")
    spare = _spare(launcher)
    assert sorted(os.listdir(f"/proc/{spare}/fd")) == ["0", "1", "2", "3"]
    child = _start(launcher, [cat, "first/note.txt", "second/note.txt"], tmp_path, ["first"])
    out, err = child.stdout.read(), child.stderr.read()
    assert child.wait() == 1
    assert child.pid == spare  # the spare took it...
    assert out == b"first text\n"  # ...confined to the call's folder, not beyond
    assert b"second/note.txt: Permission denied" in err
    child.stdout.close()
    child.stderr.close()
    # Another call's folders: a fresh child, confined to those alone.
    spare = _spare(launcher)
    child = _start(launcher, [cat, "second/note.txt", "first/note.txt"], tmp_path, ["second"])
    out, err = child.stdout.read(), child.stderr.read()
    assert child.wait() == 1
    assert child.pid != spare
    wait_for(lambda: _ended(spare), "the spare that did not fit to end")
    assert out == b"second text\n"
    assert b"first/note.txt: Permission denied" in err
    child.stdout.close()
    child.stderr.close()


def test_a_folder_swapped_since_the_spare_was_made_is_not_read_through_it(
    launcher: Launcher, tmp_path: Path
) -> None:
    """The spare is confined to the folder its name named when it was made: a call
    after that folder was moved away and another put at its name gets a fresh child,
    which reads the folder there now (never the one moved away)."""
    first, _ = _folders(tmp_path)
    cat = _program("cat")
    assert _run(launcher, [cat, "note.txt"], first, ["."])[:2] == (0, "first text\n")
    spare = _spare(launcher)
    first.rename(tmp_path / "moved")
    first.mkdir()
    (first / "note.txt").write_text("new text\n")
    child = _start(launcher, [cat, "note.txt"], first, ["."])
    assert child.stdout.read() == b"new text\n"
    assert child.wait() == 0
    assert child.pid != spare
    child.stdout.close()
    child.stderr.close()


@pytest.mark.parametrize("ended", ["closed", "killed"])
def test_a_spare_does_not_outlive_its_launcher(tmp_path: Path, ended: str) -> None:
    launcher = Launcher()
    assert _run(launcher, [_program("true")], tmp_path, ["."])[0] == 0
    spare, pid = _spare(launcher), launcher.pid()
    assert pid is not None
    if ended == "killed":
        os.kill(pid, signal.SIGKILL)
    launcher.close()
    wait_for(lambda: _ended(spare), "the spare to end with its launcher", timeout=30)
