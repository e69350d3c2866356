"""A command's own peak memory, measured without its parent's.

Linux keeps a process's peak RSS (`ru_maxrss`) across `exec`, and a child forked (or
vforked) from a big process starts its count at its parent's peak: a CLI started by a
pytest process that had built test images reported that process's 545 MB, not its own.
So the command is started by a small Python process of its own (`_WRAPPER`), which waits
for it and prints its `ru_maxrss`; /proc's VmHWM (per address space) is not carried
over, and serves for a process that is still running (`vm_peak_mb`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_WRAPPER = """
import json, os, subprocess, sys
child = subprocess.Popen(sys.argv[1:])
_, status, usage = os.wait4(child.pid, 0)
sys.stderr.write("\\n" + json.dumps({"peak_kb": usage.ru_maxrss,
                                    "code": os.waitstatus_to_exitcode(status)}) + "\\n")
"""


def run_with_peak(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 120
) -> tuple[str, float]:
    """`argv`'s standard output, and its peak RSS in MB."""
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return done.stdout, report["peak_kb"] / 1024


def vm_peak_mb(pid: int) -> float:
    """A running process's peak RSS in MB (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def mcp_server_pid(folder: Path) -> int:
    """The pid of the `readkeeper mcp` process serving `folder` (named in its argv), found
    in /proc: the server an SDK client started, whose pid the client does not give.
    Shared by tests/read/test_held_bytes.py and bench/bench_held_bytes.py."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"mcp" in argv and os.fsencode(folder) in argv:
                return int(entry)
    raise LookupError(f"no readkeeper mcp process serves {folder}")
