"""The journal of temporary files (pending.py): what a killed writer left is removed at
the next start, and nothing else is: not a user's file that looks like a temporary
file, not a live writer's, not a file a symlink leads to."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from readkeeper.files import pending

pytestmark = pytest.mark.skipif(os.name != "posix", reason="flock")

# A writer that writes down a temporary file, creates it, says so, and waits: killed, it
# leaves the file and its journal as a kill -9 mid-write does.
WRITER = r"""
import os, sys
from readkeeper.files.pending import JOURNAL
folder, name = sys.argv[1], sys.argv[2]
JOURNAL.add(folder, name)
with open(os.path.join(folder, name), "wb") as f:
    f.write(b"half a write")
print("ready", flush=True)
sys.stdin.read()
"""


def writer(folder: Path, name: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), name],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    return process


def killed(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)


def journals() -> list[str]:
    where = Path(pending.folder())
    return sorted(p.name for p in where.iterdir()) if where.exists() else []


def test_a_killed_writers_leftover_is_removed_and_lookalikes_are_kept(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    lookalikes = [".a.txt.0badf00d.rk-tmp", ".rk-lease-probe.0000beef.rk-tmp", "notes.rk-tmp"]
    for name in lookalikes:
        (folder / name).write_text("the user's\n")
    process = writer(folder, ".a.txt.1f2e3d4c.rk-tmp")
    assert [n for n in journals() if n.startswith(f"{process.pid}.")]
    killed(process)
    assert (folder / ".a.txt.1f2e3d4c.rk-tmp").exists()
    assert pending.sweep() == 1
    assert sorted(p.name for p in folder.iterdir()) == sorted(lookalikes)
    # The dead writer's journal went with its file.
    assert not [n for n in journals() if n.startswith(f"{process.pid}.")]


def test_a_live_writers_temporary_file_is_left_alone(tmp_path: Path) -> None:
    process = writer(tmp_path, ".b.txt.0a0b0c0d.rk-tmp")
    try:
        pending.sweep()
        assert (tmp_path / ".b.txt.0a0b0c0d.rk-tmp").exists()
    finally:
        killed(process)
    pending.sweep()
    assert not (tmp_path / ".b.txt.0a0b0c0d.rk-tmp").exists()


def test_a_folder_replaced_by_a_link_is_not_followed(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    killed(writer(folder, ".c.txt.11112222.rk-tmp"))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".c.txt.11112222.rk-tmp").write_text("someone else's\n")
    folder.rename(tmp_path / "ws.old")
    folder.symlink_to(outside, target_is_directory=True)
    pending.sweep()
    assert (outside / ".c.txt.11112222.rk-tmp").read_text() == "someone else's\n"


def test_a_name_written_down_that_atomic_py_never_makes_is_not_removed(tmp_path: Path) -> None:
    # A journal is only ever read back by readkeeper; still, one naming a user's file
    # (not a hidden name ending in .rk-tmp) removes nothing.
    (tmp_path / "main.py").write_text("print()\n")
    killed(writer(tmp_path, "main.py"))
    assert pending.sweep() == 0
    assert (tmp_path / "main.py").exists()


def test_the_journal_is_emptied_when_no_write_is_in_flight(tmp_path: Path) -> None:
    journal = pending.Journal()
    first = journal.add(str(tmp_path), ".a.txt.00000001.rk-tmp")
    second = journal.add(str(tmp_path), ".b.txt.00000002.rk-tmp")
    assert first is not None
    assert second is not None
    fd = journal._fd
    assert fd is not None
    journal.done(first)
    assert os.fstat(fd).st_size == len(first) + len(second)
    journal.done(second)
    assert os.fstat(fd).st_size == 0


def test_a_clean_exit_leaves_no_journal(tmp_path: Path) -> None:
    script = (
        "import os, sys\n"
        "from readkeeper.files.pending import JOURNAL\n"
        "JOURNAL.done(JOURNAL.add(sys.argv[1], '.a.txt.00000003.rk-tmp'))\n"
        "print(os.getpid())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert not [n for n in journals() if n.startswith(f"{done.stdout.strip()}.")]
