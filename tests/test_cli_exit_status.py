"""One exit-status rule for every command (server/exit_status.py, docs/cli.md): 0 done,
1 looked and found nothing, 2 refused (any error kind, a usage error, a bad --root, no
server to ask). `read` refusals exited 1 while `grep`, `glob` and `ls` ones exited 2."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
import warm_server

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
        warm_server.command(*args),
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


DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_exit_status_the_docs_give_a_refusal_is_the_one_it_exits_with(
    folder: Path, tmp_path: Path
) -> None:
    """Attack round 16: troubleshooting.md said a CLI refusal exits 1 (it exits 2, as
    cli.md's table says). Each page's "exit code/status N" of a refusal is checked."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    refused = _status(("read", "missing.py"), folder, runtime).returncode
    said = {
        page.name: re.findall(r"exit (?:code|status) (\d+)", page.read_text())
        for page in DOCS.rglob("*.md")
    }
    assert said["troubleshooting.md"], "the page says what a refusal exits with"
    assert {int(n) for found in said.values() for n in found} == {refused}
    assert re.search(rf"\| {refused} \| refused", (DOCS / "cli.md").read_text())


def test_a_cli_refusal_names_the_command_and_flags_that_work(folder: Path, tmp_path: Path) -> None:
    """Attack round 16: CLI refusals said `offset=1, limit=500` (its flags are --offset
    and --limit) and `readkeeper/stat` (a method the CLI lacks)."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    (folder / "big.log").write_text("".join(f"line {i} lorem ipsum\n" for i in range(20_000)))
    for args in (("read", "big.log"), ("ls", "a.py"), ("read", "a.py", "--offset", "99")):
        done = _status(args, folder, runtime)
        assert done.returncode == 2
        assert "readkeeper/" not in done.stderr
        assert not re.search(r"\b(?:offset|limit|pages)=", done.stderr), done.stderr
        commands = re.findall(r"`(readkeeper [^`]*)`", done.stderr)
        assert commands, done.stderr
        for command in commands:
            followed = _status(tuple(shlex.split(command)[1:]), folder, runtime)
            # done, or (a placeholder pattern) looked and found nothing: never refused
            assert followed.returncode in (0, 1), (command, followed.stderr)
