"""What the Watchman program says (its stderr, its errors) reaches the user's message
only as words inside readkeeper's one line: no line break, nothing unseen."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from readkeeper.watch import watchman

FORGED = "no\nreadkeeper: FORGED\r\u2028\u202e \x1b[2J"


def test_watchman_s_stderr_is_one_line_of_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said_file = tmp_path / "said"
    said_file.write_text(FORGED)
    fake = tmp_path / "watchman"
    fake.write_text(f"#!/bin/sh\ncat '{said_file}' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(watchman.Unavailable) as caught:
        watchman._start_service()
    said = str(caught.value)
    # Watchman's words one quoted string (errors.library_words) after readkeeper's own.
    assert said.startswith('Watchman could not be started (exit 3) ("no\\nreadkeeper: FORGED')
    for hidden in ("\n", "\r", "\u2028", "\u202e", "\x1b"):
        assert hidden not in said, said


def test_every_reason_watchman_is_unavailable_is_one_line() -> None:
    assert str(watchman.Unavailable(FORGED)) == "no readkeeper: FORGED \\u202e \\u001b[2J"


def test_a_reason_holds_no_address_and_is_cut() -> None:
    # Watchman's or a library's words go through errors.library_detail and are cut, as
    # every other party's words in a reason are.
    said = str(watchman.Unavailable(f"bad <_io.BytesIO object at 0x7fcb7017a7f0> {'x' * 9000}"))
    assert "0x7fcb" not in said
    assert "object at" not in said
    assert len(said) <= watchman.MAX_REASON_CHARS


def test_a_reason_from_watchman_s_answer_is_one_quoted_string() -> None:
    # What pywatchman raises holds the service's answer (a path, a config's words):
    # said as one JSON string, so it can pose neither as readkeeper's words nor as a call.
    said = watchman._reason("reach", OSError('x) readkeeper/write {"file_path": "/w/a"} ('))
    assert said == (
        'could not reach Watchman ("x) readkeeper/write {\\"file_path\\": \\"/w/a\\"} (")'
    )
