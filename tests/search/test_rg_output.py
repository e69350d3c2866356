"""ripgrep's output read whole, however it comes: in one write or many, past a read's
size and the pipe's, with the reader waiting for more between reads (rg_output.py
`BATCH_S`) or not, by a program started confined (the warm launcher's) or not; an
overlong line skipped; and every descriptor of a run closed after it."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from readkeeper.files.confined import widen_pipe
from readkeeper.search import rg, rg_output

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, pidfds")

FLAGS = ["--no-heading", "--line-number", "--color=never", "--regexp", "needle", "--", "."]


def _tree(root: Path) -> list[bytes]:
    """A file whose matches print past a read (1 MiB) and the pipe; their lines."""
    lines = [f"needle {n:06} {'x' * 70}" for n in range(40_000)]
    (root / "a.txt").write_text("".join(f"{line}\n" for line in lines))
    return [f"./a.txt:{n + 1}:{line}".encode() for n, line in enumerate(lines)]


@pytest.mark.parametrize("confined", [True, False])
@pytest.mark.parametrize("batch_s", [0.0, rg_output.BATCH_S])
def test_output_past_a_read_and_the_pipe_comes_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, confined: bool, batch_s: float
) -> None:
    expected = _tree(tmp_path)
    monkeypatch.setattr(rg_output, "BATCH_S", batch_s)
    ran = rg.run(str(tmp_path), FLAGS, max_lines=100_000, confined=confined)
    assert ran.returncode == 0
    assert not ran.cut
    assert not ran.timed_out
    assert ran.lines == expected


def test_a_run_leaves_no_descriptor_open(tmp_path: Path) -> None:
    _tree(tmp_path)
    for confined in (True, False):
        rg.run(str(tmp_path), FLAGS, max_lines=10, confined=confined)  # launchers started
    before = _open_descriptors()
    for confined in (True, False):
        for max_lines in (10, 100_000):  # cut (killed) and whole
            rg.run(str(tmp_path), FLAGS, max_lines=max_lines, confined=confined)
    # None opened is left open (a descriptor another test's thread closes meanwhile is
    # none of these runs': CI saw one go; a pipe reusing its number is a new pipe).
    assert _open_descriptors() - before == set()


def _open_descriptors() -> set[tuple[str, str]]:
    """Each descriptor this process has open, with what it is open on."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own, closed by now
            found.add((fd, os.readlink(f"/proc/self/fd/{fd}")))
    return found


def test_output_written_after_a_pause_is_read_up_to_the_end() -> None:
    """Lines that come while the reader waits on the program's end, and after."""
    script = (
        "import sys, time\nfor n in range(5):\n    print(n, flush=True)\n    time.sleep(0.02)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    widen_pipe(proc.stdout.fileno())
    output = rg_output.Output(proc, b"\n")
    try:
        pieces = [piece for chunk in output.pieces(time.monotonic() + 60) for piece in chunk]
    finally:
        output.close()
        proc.wait()
    assert pieces == [b"0", b"1", b"2", b"3", b"4"]
    assert not output.timed_out


def test_an_overlong_output_line_is_skipped_whole() -> None:
    stream = io.BufferedReader(
        io.BytesIO(b"a\n" + b"x" * (rg_output.MAX_OUTPUT_LINE_BYTES + 10) + b"\nb\n")
    )
    assert list(rg_output.bounded_lines(stream, b"\n")) == [b"a", b"b"]
