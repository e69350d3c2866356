"""Every number a CLI flag takes is held to the protocol's rule for a whole number (LSP's
integer range, protocol/convert.py): a number past it is a one-line usage error on every
command, never a traceback (an offset of 2**63 was an OverflowError) nor a value MCP and
LSP would refuse (2**31 was read)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from test_cli_edges import one_line, run

from readkeeper.cli import build_parser

# What each command needs besides the flag, so that only the flag can be wrong.
_POSITIONALS = {"read": ("a.txt",), "grep": ("x",), "glob": ("*",)}
_HUGE = (2**31, -(2**31) - 1, 2**63 - 1, 2**63, 2**70)


def _typed_flags() -> list[tuple[str, str, object]]:
    """(command, flag, type) for every option of every command that converts its value."""
    found = []
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, sub in commands.choices.items():
        for action in sub._actions:
            if action.option_strings and action.type is not None:
                found.append((command, action.option_strings[-1], action.type))
    return found


_FLAGS = _typed_flags()


def test_the_flags_are_found() -> None:
    named = {(command, flag) for command, flag, _ in _FLAGS}
    assert {("read", "--offset"), ("read", "--limit"), ("ls", "--depth")} <= named
    assert {("grep", "--context"), ("grep", "--max-matches"), ("mcp", "--port")} <= named


@pytest.mark.parametrize("flag", _FLAGS, ids=lambda f: f"{f[0]}{f[1]}")
def test_a_number_past_the_protocols_range_is_a_one_line_usage_error(
    workspace: Path, flag: tuple[str, str, object]
) -> None:
    command, option, _ = flag
    (workspace / "a.txt").write_text("hello\n")
    for number in _HUGE:
        value = f"127.0.0.1:{number}" if option == "--tcp" else str(number)
        done = run(command, *_POSITIONALS.get(command, ()), option, value, cwd=workspace)
        assert done.returncode == 2, (option, value, done.stdout, done.stderr)
        said = one_line(done.stderr)
        assert f"argument {option}" in said or option in said, said
        assert done.stdout == ""


def test_no_flag_converts_a_number_its_own_way() -> None:
    # `int` has no range: a flag that uses it skips the rule the others keep.
    assert [f"{c} {o}" for c, o, kind in _FLAGS if kind is int] == []


@pytest.mark.parametrize(
    "args",
    [
        ("read", "a.txt", "--offset", str(2**31 - 1)),
        ("read", "a.txt", "--limit", str(2**31 - 1)),
        ("grep", "hello", "--offset", str(2**31 - 1)),
        ("grep", "hello", "--max-matches", str(2**31 - 1)),
        ("glob", "*", "--offset", str(2**31 - 1)),
        ("ls", "--offset", str(2**31 - 1)),
    ],
)
def test_the_largest_number_in_range_is_served_or_refused_in_one_line(
    workspace: Path, args: tuple[str, ...]
) -> None:
    (workspace / "a.txt").write_text("hello\n")
    done = run(*args, cwd=workspace)
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode in (0, 1, 2)
    if done.stderr.strip():
        one_line(done.stderr)
