"""One exit-status rule for every command (server/exit_status.py, docs/cli.md): 0 done,
1 looked and found nothing, 2 refused (any error kind, a usage error, a bad --root, no
server to ask). `read` refusals exited 1 while `grep`, `glob` and `ls` ones exited 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

READKEEPER = [sys.executable, "-m", "readkeeper"]

REFUSED = [
    ("read", "missing.py"),  # not_found
    ("read", "missing.py", "--json"),
    ("read", "sub"),  # is_directory
    ("read", "/"),  # outside_workspace
    ("read", "a.py", "--offset", "0"),  # bad_params
    ("read", "a.py", "--pages", "1"),  # bad_params: pages on a text file
    ("read", "n.ipynb", "--pages", "1"),  # bad_params: pages on a notebook
    ("read", "a.py", "--root", "nowhere"),
    ("grep", "("),
    ("grep", "def", "/"),
    ("grep", "def", "--json", ".."),
    ("grep", "def", "--root", "nowhere"),
    ("glob", ""),
    ("glob", "*", "a.py"),
    ("ls", "a.py"),
    ("ls", "/proc"),
    ("ls", "--depth", "0"),
    ("stats",),  # no server serves the folder
    ("stats", "--root", "nowhere"),
    ("mcp", "--root", "nowhere"),
    # argparse's own usage errors
    ("read",),
    ("read", "a.py", "--offset", "1e3"),
    ("grep", "x", "-C", "99999999999"),
    ("settings", "--json"),
    ("no-such-command",),
    ("--log-level", "NOPE", "settings"),
]
NOTHING_FOUND = [("grep", "absent"), ("glob", "*.zzz"), ("ls", "empty")]
DONE = [("read", "a.py"), ("grep", "def"), ("glob", "*.py"), ("ls",), ("settings",)]


@pytest.fixture
def folder(workspace: Path) -> Path:
    (workspace / "a.py").write_text("def f():\n    return 1\n")
    (workspace / "sub").mkdir()
    (workspace / "empty").mkdir()
    (workspace / "n.ipynb").write_text(
        '{"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": ["1"], '
        '"outputs": [], "execution_count": null}], "metadata": {}, "nbformat": 4, '
        '"nbformat_minor": 5}'
    )
    return workspace


def _status(args: tuple[str, ...], cwd: Path, runtime: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "XDG_RUNTIME_DIR": str(runtime)}
    return subprocess.run(
        [*READKEEPER, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    ("args", "status"),
    [(a, 2) for a in REFUSED] + [(a, 1) for a in NOTHING_FOUND] + [(a, 0) for a in DONE],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else str(v),
)
def test_every_command_exits_by_one_rule(
    folder: Path, tmp_path: Path, args: tuple[str, ...], status: int
) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    done = _status(args, folder, runtime)
    assert done.returncode == status, (done.stdout[-300:], done.stderr[-300:])
    assert "Traceback" not in done.stderr
    if status == 2 and "--json" not in args:
        assert done.stderr.strip(), "a refusal says why on stderr"
