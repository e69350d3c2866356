"""A command run with `--root` from another folder names next steps that work when run
from that same folder: each command it suggests repeats `--root` (before, `readkeeper
ls /w` or `readkeeper glob '**/x'` ran on the current folder's workspace, where the
path was outside it or the pattern found nothing). Run where the root is the current
folder, the suggestions stay as short as they were."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import warm_server

from readkeeper.exit_status import NOTHING_FOUND


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        warm_server.command(*args), cwd=cwd, capture_output=True, text=True, timeout=60
    )


def commands(said: str) -> list[list[str]]:
    return [shlex.split(c) for c in re.findall(r"`(readkeeper [^`]*)`", said)]


def _tree(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("x = 1\n")
    elsewhere = workspace.parent / "elsewhere"
    elsewhere.mkdir()
    return elsewhere


def test_each_suggested_command_repeats_the_root_and_works_from_the_same_folder(
    workspace: Path,
) -> None:
    elsewhere = _tree(workspace)
    for asked in (["read", "src"], ["ls", "absent"], ["grep", "x", "absent"]):
        done = run(*asked, "--root", str(workspace), cwd=elsewhere)
        assert done.returncode != 0, done
        suggested = commands(done.stderr)
        assert suggested, done.stderr
        for words in suggested:
            assert words[words.index("--root") + 1] == str(workspace), words
            again = run(*words[1:], cwd=elsewhere)
            # Answered on the same workspace: found, or nothing found (1, as grep says).
            assert again.returncode in (0, NOTHING_FOUND), (words, again.stderr)
            assert str(workspace) not in again.stderr, (words, again.stderr)


def test_a_root_given_relative_is_named_absolute(workspace: Path) -> None:
    elsewhere = _tree(workspace)
    done = run("ls", "absent", "--root", "../ws", cwd=elsewhere)
    roots = {words[words.index("--root") + 1] for words in commands(done.stderr)}
    assert roots == {str(workspace)}, done.stderr


def test_no_root_is_named_when_it_is_the_current_folder(workspace: Path) -> None:
    _tree(workspace)
    for given in ([], ["--root", "."], ["--root", str(workspace)]):
        done = run("ls", "absent", *given, cwd=workspace)
        suggested = commands(done.stderr)
        assert suggested, done.stderr
        assert all("--root" not in words for words in suggested), done.stderr
