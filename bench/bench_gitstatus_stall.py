"""The time of a remembered git status refusal ("not run again") with N junk files in
.git/objects/pack (attack round 28: 2.5 s at 100,000). Usage: python
bench/bench_gitstatus_stall.py [N ...]; each N in a fresh repository under /tmp."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

from readkeeper.attachments import gitstatus
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError


def repository(n: int) -> str:
    root = os.path.realpath(tempfile.mkdtemp(prefix="rk-stall-"))
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    subprocess.run(["git", "init", "-q", root], check=True)
    with open(os.path.join(root, "a.txt"), "w") as f:
        f.write("a\n")
    subprocess.run(["git", "-C", root, "add", "a.txt"], check=True, env=env)
    subprocess.run(["git", "-C", root, "commit", "-qm1"], check=True, env=env)
    pack = os.path.join(root, ".git", "objects", "pack")
    for i in range(n):
        open(os.path.join(pack, f"junk{i:06d}"), "w").close()
    return root


def remembered(root: str) -> float:
    core = Readkeeper(roots=[root], client_settings={"git_timeout_ms": 2000})
    real = gitstatus._run

    def timed_out(*_args: Any) -> Any:
        raise TimeoutError

    gitstatus._run = timed_out  # type: ignore[assignment]
    try:
        with contextlib.suppress(ReadkeeperError):
            gitstatus.status(core.workspace, root, 2.0)
        start = time.perf_counter()
        try:
            gitstatus.status(core.workspace, root, 2.0)
        except ReadkeeperError as exc:
            if "not run again" not in exc.message:
                raise
        return time.perf_counter() - start
    finally:
        gitstatus._run = real  # type: ignore[assignment]
        core.close()


if __name__ == "__main__":
    for n in [int(a) for a in sys.argv[1:]] or [0, 100_000, 500_000]:
        root = repository(n)
        print(f"{n:>8,} junk pack files: remembered refusal {remembered(root) * 1000:8.1f} ms")
        subprocess.run(["rm", "-rf", root], check=True)
