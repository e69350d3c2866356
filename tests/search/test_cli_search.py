"""`readkeeper grep`, `readkeeper glob` and `readkeeper ls` as a person runs them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import orjson
import pytest
import warm_server


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        warm_server.command(*args), cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_grep_glob_and_ls(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("one\nneedle\nthree\n")
    (workspace / "b.txt").write_text("NEEDLE\n")
    assert run("grep", "needle", "-C", "1", cwd=workspace).stdout == (
        "src/a.py-1-one\nsrc/a.py:2:needle\nsrc/a.py-3-three\n"
    )
    assert run("grep", "-i", "-l", "needle", cwd=workspace).stdout == "b.txt\nsrc/a.py\n"
    assert run("grep", "-c", "needle", "src", cwd=workspace).stdout == "src/a.py:1\n"
    assert run("grep", "absent", cwd=workspace).returncode == 1
    assert run("glob", "**/*.py", cwd=workspace).stdout == "src/a.py\n"
    listed = run("ls", "--depth", "2", cwd=workspace).stdout.splitlines()
    assert [line.split()[-1] for line in listed] == ["b.txt", "src/", "src/a.py"]
    as_json = json.loads(run("ls", "src", "--json", cwd=workspace).stdout)
    assert as_json["entries"] == [{"name": "a.py", "kind": "file", "size": 17}]


def test_bad_input_exits_2_with_the_kind(workspace: Path) -> None:
    done = run("grep", "a(b", cwd=workspace)
    assert done.returncode == 2
    assert "bad_params" in done.stderr
    assert "position 1" in done.stderr


def test_a_control_character_in_a_line_is_shown_as_a_read_shows_it(workspace: Path) -> None:
    """Piped, the line as the file has it, as `readkeeper read` prints it (terminal_text.show:
    only a terminal gets controls escaped, tests/test_cli_terminal.py); a CR escaped."""
    (workspace / "a.txt").write_text("needle \x1b[31mred\rx\n", newline="")
    assert run("grep", "needle", cwd=workspace).stdout == "a.txt:1:needle \x1b[31mred\\rx\n"


def test_ls_shows_a_files_size_and_a_dash_for_a_folder(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "b.txt").write_text("abc\n")
    assert run("ls", cwd=workspace).stdout == f"{4:>10}  b.txt\n{'-':>10}  src/\n"


def test_printable_text_in_a_line_is_shown_as_it_is(workspace: Path) -> None:
    (workspace / "a.txt").write_text('needle "é" \\ \t tab\n')
    assert run("grep", "needle", cwd=workspace).stdout == 'a.txt:1:needle "é" \\ \t tab\n'


@pytest.mark.parametrize("command", [["ls", "--json", "."], ["glob", "--json", "*"]])
def test_json_naming_a_file_not_utf8_is_valid_unicode(workspace: Path, command: list[str]) -> None:
    """A program reads `--json`: a name that is not UTF-8 is its escape text, never raw
    bytes or JSON's lone-surrogate escape (strict decoders refuse both)."""
    with open(os.path.join(os.fsencode(workspace), b"\xff.txt"), "wb") as file:
        file.write(b"x\n")
    ran = subprocess.run(
        warm_server.command(*command), cwd=workspace, capture_output=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    assert "\\udcff.txt" in json.dumps(orjson.loads(ran.stdout))  # strict: UTF-8, no lone half
