"""`readkeeper read --symbol` of a name the outline does not list (attack round 27, A7):
past the 20,000 symbols an outline lists, a `# target` heading was "No symbol "target"
..., and none with a similar name", and the hint to search was `readkeeper grep '<the
symbol'"'"'s name>' FILE`, a placeholder shell-quoted into a command that finds nothing.
Now the refusal says where the outline stopped, and each command it names, run as
written, finds the heading."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import warm_server

CAP = 20_000


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        warm_server.command(*args), cwd=cwd, capture_output=True, text=True, timeout=60
    )


def _commands(said: str) -> list[list[str]]:
    """The commands a message names, in backquotes, as argument lists."""
    return [shlex.split(found) for found in re.findall(r"`(readkeeper [^`]+)`", said)]


def test_a_symbol_past_the_cap_names_commands_that_find_it(workspace: Path) -> None:
    (workspace / "cap.md").write_text("# g\n" * (CAP + 1) + "# target\n")
    done = run("read", "cap.md", "--symbol", "target", cwd=workspace)
    assert done.returncode == 2, done.stderr
    assert "not_found" in done.stderr
    assert f"among the first {CAP:,} symbols" in done.stderr, done.stderr
    assert "<the symbol" not in done.stderr
    commands = _commands(done.stderr)
    assert [c[:2] for c in commands] == [["readkeeper", "grep"], ["readkeeper", "read"]]
    assert commands[0][2] == "target", commands
    for command in commands:
        found = run(*command[1:], cwd=workspace)
        assert found.returncode == 0, found.stderr
        assert f"{CAP + 2}" in found.stdout, found.stdout
        assert "# target" in found.stdout, found.stdout


def test_a_missing_symbols_search_names_it(workspace: Path) -> None:
    (workspace / "few.md").write_text("# Intro\ntext\n# Usage\n")
    done = run("read", "few.md", "--symbol", "Reader.load(x)", cwd=workspace)
    assert done.returncode == 2, done.stderr
    assert "<the symbol" not in done.stderr, done.stderr
    # The whole file's read, and the search for the name.
    whole, grep = _commands(done.stderr)
    assert whole == ["readkeeper", "read", str(workspace / "few.md")], whole
    assert grep[:3] == ["readkeeper", "grep", r"load\(x\)"], grep
    # Run as written it searches (nothing there: exit 1, "nothing found"), no error.
    assert run(*grep[1:], cwd=workspace).returncode == 1
