"""`readkeeper read` never lets a file write readkeeper's lines or drive the terminal:
to a terminal (a pty here) every control but tab and newline is escaped, to a pipe the
numbered lines go as they are (no line break but LF in them), and `--json` is exact."""

from __future__ import annotations

import itertools
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from forgery import assert_own_lines, contents, names

READKEEPER = [sys.executable, "-m", "readkeeper"]
# What a terminal acts on: C0 controls but tab and newline, DEL, C1 (ESC starts them all).
_TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_fresh = itertools.count()


def _on_a_terminal(*args: str, cwd: Path, command: list[str] = READKEEPER) -> tuple[int, str]:
    """Run `readkeeper ARGS` (`command` ARGS) with stdout and stderr on a pty: its exit
    status and what the terminal received (its own CR before each LF taken out)."""
    controller, terminal = pty.openpty()
    with subprocess.Popen(
        [*command, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal
    ) as proc:
        os.close(terminal)
        received = bytearray()
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the pty's other end closed
                break
            if not chunk:
                break
            received += chunk
        status = proc.wait(timeout=60)
    os.close(controller)
    return status, received.decode("utf-8", "replace").replace("\r\n", "\n")


def test_terminal_escapes_are_shown_not_acted_on(workspace: Path) -> None:
    attack = "ok\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b[1A\x1b[2Kgone\x9b31m\n"
    (workspace / "t.txt").write_text(attack)
    status, shown = _on_a_terminal("read", "t.txt", cwd=workspace)
    assert status == 0
    assert shown == "     1\tok\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07\\x1b[1A\\x1b[2Kgone\\x9b31m\n"
    # To a pipe the line is the file's (numbered); as JSON it is exact.
    piped = subprocess.run([*READKEEPER, "read", "t.txt"], cwd=workspace, capture_output=True)
    assert piped.stdout.decode() == "     1\t" + attack
    exact = subprocess.run(
        [*READKEEPER, "read", "t.txt", "--json"], cwd=workspace, capture_output=True
    )
    assert json.loads(exact.stdout)["file"]["content"] == "     1\t" + attack.removesuffix("\n")


def test_a_name_with_terminal_escapes_is_escaped_in_the_error(workspace: Path) -> None:
    status, shown = _on_a_terminal("read", "missing\x1b]0;pwned\x07.txt", cwd=workspace)
    assert status == 2
    assert "\x1b" not in shown
    assert "\x07" not in shown
    assert shown.startswith("readkeeper: not_found: ")


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(content=contents, name=names)
def test_any_file_on_a_terminal_is_readkeepers_lines_and_no_control(
    workspace: Path, content: str, name: str
) -> None:
    folder = workspace / f"c{next(_fresh)}"
    folder.mkdir()
    (folder / name).write_bytes(content.encode())
    status, shown = _on_a_terminal("read", name, cwd=folder)
    assert status == 0, shown
    assert not _TERMINAL_CONTROL.search(shown.replace("\t", "")), repr(shown)
    assert_own_lines(shown)
    piped = subprocess.run([*READKEEPER, "read", name], cwd=folder, capture_output=True)
    assert_own_lines(piped.stdout.decode())


def test_search_commands_on_a_terminal_show_controls_escaped(workspace: Path) -> None:
    """grep, glob and ls print a file's lines and names too: the same rule as read."""
    attack = "ok\x1b]0;pwned\x07\x1b[2J"
    folder = workspace / f"s{next(_fresh)}"
    folder.mkdir()
    (folder / f"n{attack}.txt").write_text(f"find {attack}\n")
    for command in (["grep", "find"], ["glob", "*.txt"], ["ls", "."], ["grep", "nothing["]):
        status, shown = _on_a_terminal(*command, cwd=folder)
        assert status in (0, 2), shown
        assert not _TERMINAL_CONTROL.search(shown.replace("\t", "")), (command, repr(shown))
        assert "pwned" in shown or command[1] == "nothing[", (command, shown)


# What JSON leaves raw in a string that a terminal acts on (C1, DEL) or shows reordered
# or hidden (bidirectional and zero-width format characters, NEL and separators).
RAW_IN_JSON = ["\x9b", "\x7f", "\u202e", "\u2066", "\u2069", "\u200b", "\x85", "\u2028"]


def test_json_of_every_command_escapes_what_a_terminal_acts_on_even_piped(
    workspace: Path,
) -> None:
    """`--json` is for a program, which reads JSON's escapes as the same characters; so
    they are escaped wherever it goes (piped to a pager or a log that a person shows
    later), and the decoded value is exact (attack round 9, finding 3)."""
    folder = workspace / f"j{next(_fresh)}"
    folder.mkdir()
    odd = "n" + "".join(RAW_IN_JSON) + "gnp.exe.txt"
    (folder / odd).write_text("find me\n")
    for command in (["read", odd], ["grep", "find"], ["glob", "*.txt"], ["ls", "."]):
        ran = subprocess.run(
            [*READKEEPER, *command, "--json"], cwd=folder, capture_output=True, text=True
        )
        assert ran.returncode == 0, (command, ran.stderr)
        assert not [char for char in RAW_IN_JSON if char in ran.stdout], (command, ran.stdout)
        assert odd in json.dumps(json.loads(ran.stdout), ensure_ascii=False), command
    for command in (["read", odd], ["grep", "find"], ["glob", "*.txt"], ["ls", "."]):
        status, shown = _on_a_terminal(*command, cwd=folder)
        assert status == 0, (command, shown)
        assert not [char for char in RAW_IN_JSON if char in shown], (command, shown)


def test_demo_on_a_terminal_escapes_what_names_hold(tmp_path: Path) -> None:
    """The demo prints the server's answers, paths among them (its workspace lies in
    TMPDIR): the same rule as every other command's output (attack round 9, finding 3)."""
    odd = tmp_path / ("t\x9b31m\u202e\u2066x\u2069")
    odd.mkdir()
    controller, terminal = pty.openpty()
    env = {**os.environ, "TMPDIR": str(odd)}
    with subprocess.Popen(
        [*READKEEPER, "demo"], cwd=tmp_path, env=env, stdout=terminal, stderr=terminal
    ) as proc:
        os.close(terminal)
        received = bytearray()
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            received += chunk
        status = proc.wait(timeout=120)
    os.close(controller)
    shown = received.decode("utf-8", "replace")
    assert status == 0, shown
    assert "throwaway workspace at" in shown
    assert not [char for char in RAW_IN_JSON if char in shown], shown[:400]
    assert "\x1b[1m" in shown  # its own headings stay bold
