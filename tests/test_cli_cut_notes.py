"""A cut listing's note in the CLI names the command that gets the rest (attack round
26: `readkeeper ls` said "the rest: list with --offset 1000", and `readkeeper list` is
no command). Each cut note of ls, glob and grep names only commands the CLI's own parser
takes, and each, run, answers with the entries that were left out."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from readkeeper.cli import build_parser

READKEEPER = [sys.executable, "-m", "readkeeper"]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*READKEEPER, *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_each_cut_note_names_a_command_that_gets_the_rest(workspace: Path) -> None:
    many = workspace / "many"
    many.mkdir()
    for n in range(1, 1101):
        (many / f"f{n}.txt").write_text(f"match {n}\n")
    parser = build_parser()
    for asked in (["ls", "many"], ["glob", "many/*.txt"], ["grep", "match", "many"]):
        done = _run(*asked, "--root", str(workspace), cwd=workspace)
        notes = [line for line in done.stderr.splitlines() if "the rest" in line]
        assert notes, (asked, done.stderr[-500:])
        for note in notes:
            # No bare method with a flag: "list with --offset 1000" ("the same search
            # with --offset 100" is the command just run, with one flag more).
            assert not re.search(r"\b(?!search\b)\w+ with --", note), note
            named = re.findall(r"`(readkeeper [^`]*)`", note)
            assert named or "the same search with --offset" in note, note
            for command in named:
                words = shlex.split(command)[1:]
                parser.parse_args(words)  # exits (2) on a command it lacks
                again = _run(*words, cwd=workspace)
                assert again.returncode == 0, (command, again.stderr[-500:])
                assert again.stdout.strip(), command
