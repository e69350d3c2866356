"""The line ending a read reports and the one an edit writes, judged the same way
whether or not the text has a CR (a text without one is judged without counting)."""

from __future__ import annotations

import pytest

from readkeeper.edit.endings import dominant_eol
from readkeeper.files.encodings import line_ending
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
