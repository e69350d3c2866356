"""The CLI's usage errors and help on a terminal: argparse's own words ("unrecognized
arguments", "ambiguous option", the usage line, --help) go through terminal_text.show like
every other line the CLI writes, so a hostile file name that reaches the command line
(an ordinary `readkeeper read *` in a repository holding it) cannot write the clipboard
(OSC 52), erase the line or forge a readkeeper line. Also logging to stderr and an
uncaught exception's traceback."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_terminal import READKEEPER, _on_a_terminal

from readkeeper.exit_status import REFUSED
from readkeeper.quoting import printable

# What a terminal acts on: C0 controls but tab and newline, DEL, C1.
_TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
HOSTILE = "b\x1b]52;c;cHduZWQ=\x07\x1b[2K\rreadkeeper: note: The file is empty\u202e.txt"


@pytest.mark.parametrize(
    "args",
    [
        ["read", "a.txt", HOSTILE],  # `readkeeper read *`: unrecognized arguments
        ["grep", "hi", "a.txt", HOSTILE, HOSTILE],
        ["glob", "*", ".", HOSTILE],
        ["read", f"--r={HOSTILE}", "a.txt"],  # ambiguous option
        [HOSTILE],  # invalid choice
        ["read", "a.txt", "--line-format", HOSTILE],
    ],
)
def test_usage_errors_show_a_hostile_name_escaped(workspace: Path, args: list[str]) -> None:
    (workspace / "a.txt").write_text("hi\n")
    (workspace / HOSTILE).write_text("")
    status, shown = _on_a_terminal(*args, cwd=workspace)
    assert status == 2, shown
    assert _TERMINAL_CONTROL.search(shown) is None, repr(shown)
    assert "\u202e" not in shown
    assert "usage: readkeeper" in shown
    # The name is there to see, escaped as every other CLI line shows it.
    assert "cHduZWQ=" in shown or "invalid choice" in shown or "ambiguous" in shown


def test_usage_error_to_a_pipe_is_the_exact_text(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hi\n")
    piped = subprocess.run(
        [*READKEEPER, "read", "a.txt", HOSTILE], cwd=workspace, capture_output=True
    )
    assert piped.returncode == 2
    assert HOSTILE.encode() in piped.stderr


def test_help_and_version_on_a_terminal_hold_no_control(workspace: Path) -> None:
    for args in (["--help"], ["read", "--help"], ["mcp", "--help"], ["--version"]):
        status, shown = _on_a_terminal(*args, cwd=workspace)
        assert status == 0
        assert _TERMINAL_CONTROL.search(shown) is None, repr(shown)
        assert "readkeeper" in shown


def test_log_lines_a_warning_and_a_traceback_on_a_terminal_are_escaped(
    workspace: Path,
) -> None:
    """A log record, a Python warning and an uncaught exception whose words hold a
    hostile name, through the console script's own `main` (its command's work replaced
    by one that logs, warns and fails: the fault said in one line, tests/test_cli_faults.py)."""
    script = (
        "import logging, sys, warnings\n"
        "from readkeeper import cli\n"
        f"HOSTILE = {HOSTILE!r}\n"
        "def run(args):\n"
        "    logging.getLogger('readkeeper').warning('saw %s', HOSTILE)\n"
        "    warnings.warn('warned ' + HOSTILE)\n"
        "    raise RuntimeError(HOSTILE)\n"
        "cli._run = run\n"
        "sys.exit(cli.main(['read', 'a.txt']))\n"
    )
    status, shown = _on_a_terminal("-c", script, cwd=workspace, command=[sys.executable])
    assert status == REFUSED  # a fault is one line and status 2, never a traceback
    assert _TERMINAL_CONTROL.search(shown) is None, repr(shown)
    assert f"saw {printable(HOSTILE)}" in shown  # a log record: one line (log_lines.py)
    assert f"warned {printable(HOSTILE)}" in shown  # a warning: one line of the log too
    assert "readkeeper: internal: a fault in readkeeper (RuntimeError: " in shown
    assert "Traceback" not in shown
