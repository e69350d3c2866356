"""A name too long to show whole is cut in its middle wherever a refusal names it (its
message, its data, a next call's params), its start and end kept, marked as readkeeper
marks cuts, the name's own such words escaped (round 19 fixers: a 3,600-character path
said three times with its 3,600-character guess)."""

from __future__ import annotations

from readkeeper import errors, hints
from readkeeper.errors import MAX_NAME_CHARS, ReadkeeperError

LONG = "/w/" + "q" * 4000 + "/nope\u202e … [9 characters cut].txt"
GUESS = "/w/" + "q" * 4000 + "/real.txt"


def test_a_long_name_is_cut_in_the_message_and_the_data() -> None:
    refused = ReadkeeperError(
        "not_found",
        f"File does not exist: {LONG}. Did you mean {GUESS}? "
        f"Then {hints.call('read', file_path=LONG)}.",
        file_path=LONG,
        suggestions=[GUESS],
    )
    assert len(refused.message) < 4 * MAX_NAME_CHARS + 200
    assert refused.message.count(" characters cut] … ") == 3
    assert "q" * (MAX_NAME_CHARS + 1) not in refused.message
    # The name's own words of a cut are escaped; its end is kept.
    assert "[9 characters cut]" not in refused.message
    assert "/real.txt?" in refused.message
    assert "q" * (MAX_NAME_CHARS + 1) not in str(refused.to_data())
    assert refused.data["file_path"].endswith("\\x5b9 characters cut].txt")


def test_a_short_name_is_shown_whole() -> None:
    refused = ReadkeeperError("not_found", "File does not exist: /w/a.txt.", file_path="/w/a.txt")
    assert refused.message == "File does not exist: /w/a.txt."
    assert refused.data["file_path"] == "/w/a.txt"
    assert errors.shown_name("/w/a b.txt") == '"/w/a b.txt"'
