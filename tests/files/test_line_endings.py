"""The line ending a read reports and the one an edit writes, judged the same way
whether or not the text has a CR (a text without one is judged without counting)."""

from __future__ import annotations

import pytest

from readkeeper.edit.endings import dominant_eol
from readkeeper.files.encodings import line_ending
from readkeeper.read.diffs import bounded_diff
from readkeeper.settings import Settings

CRLF_SETTING = Settings(new_file_line_ending="crlf")


@pytest.mark.parametrize(
    ("text", "reported", "written"),
    [
        ("", "none", "\r\n"),
        ("one line", "none", "\r\n"),
        ("a lone\rcarriage return", "none", "\r\n"),
        ("a\nb\n", "lf", "\n"),
        ("a\nb", "lf", "\n"),
        ("a\r\nb\r\n", "crlf", "\r\n"),
        ("a\r\nb\nc\n", "mixed", "\n"),
        ("a\r\nb\r\nc\n", "mixed", "\r\n"),
        ("a\rb\nc\n", "lf", "\n"),
    ],
)
def test_the_line_ending_reported_and_written(text: str, reported: str, written: str) -> None:
    assert line_ending(text) == reported
    assert dominant_eol(text, CRLF_SETTING) == written


@pytest.mark.parametrize(
    ("before", "after", "only_endings"),
    [
        ("a\nb\n", "a\r\nb\r\n", True),
        ("a\r\nb\r\n", "a\nb\n", True),
        ("a\nb\n", "a\nc\n", False),
        ("a\r\nb\r\n", "a\r\nc\r\n", False),
        ("a\rb\n", "a\nb\n", False),  # a lone CR is text, not a line ending
    ],
)
def test_a_diff_says_when_only_the_line_endings_changed(
    before: str, after: str, only_endings: bool
) -> None:
    diff, _ = bounded_diff(before, after, "a.txt")
    assert diff.startswith("Only line endings changed") == only_endings
