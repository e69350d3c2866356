"""A name too long to show whole is cut in its middle wherever a refusal names it (its
message, its data, a next call's params), its start and end kept, marked as readkeeper
marks cuts, the name's own such words escaped (round 19 fixers: a 3,600-character path
said three times with its 3,600-character guess)."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from readkeeper import errors, hints, quoting
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


# errors.cut_middle: the one middle cut of a name (errors.cut_name, shown_name) and of
# an attachment's dropped source and reason (attachments/model.py).


def test_cut_middle_keeps_what_fits_each_end_exactly() -> None:
    text = "a" * 10 + "m" * 50 + "z" * 20
    assert errors.cut_middle(text, 10, 20) == "a" * 10 + " … [50 characters cut] … " + "z" * 20
    # One character more of budget at each end keeps one more; none kept is said too.
    assert errors.cut_middle(text, 11, 21).startswith("a" * 10 + "m … [48 characters")
    assert errors.cut_middle(text, 0, 0) == " … [80 characters cut] … "


def test_a_name_at_the_limit_is_whole_and_one_over_is_cut() -> None:
    at_limit = "/" + "n" * (MAX_NAME_CHARS - 1)
    assert errors.cut_name(at_limit) == at_limit
    assert errors.shown_name(at_limit) == at_limit
    over = at_limit + "x"
    cut = errors.cut_name(over)
    assert cut == over[:100] + f" … [{len(over) - 200} characters cut] … " + over[-100:]
    assert errors.shown_name(over) == cut


def test_cut_middle_never_splits_a_character_and_counts_escapes() -> None:
    # An astral character is one: kept whole or cut whole, never half a pair. One that
    # JSON escapes (a format character, U+E0001) costs six, so it does not fit in 4.
    tag, emoji = "\U000e0001", "\U0001f600"
    assert errors.cut_middle("ab" + emoji + "m" * 9, 3, 0).startswith("ab" + emoji + " … [9 ")
    assert errors.cut_middle("ab" + tag + "m" * 9, 4, 0).startswith("ab … [10 characters")
    assert errors.cut_middle("ab" + tag + "m" * 9, 8, 0).startswith("ab" + tag + " … [9 ")
    # A lone surrogate (an undecodable byte of a POSIX name) costs six too, at either end.
    lone = "\udc80"
    assert (
        errors.cut_middle("m" * 9 + lone + "yz", 0, 8) == " … [9 characters cut] … " + lone + "yz"
    )
    assert errors.cut_middle("m" * 9 + lone + "yz", 0, 7) == " … [10 characters cut] … yz"


def test_cut_middle_escapes_the_text_own_marker_words() -> None:
    own = " … [3 characters cut] … "
    text = "a" + own + "m" * 300 + own + "z"
    cut = errors.cut_middle(text, 40, 40)
    assert cut.count("[") == 1
    assert cut.count(" characters cut] … ") == 3
    assert cut.startswith("a … \\x5b3 characters cut] … ")
    assert cut.endswith(" … \\x5b3 characters cut] … z")
    # As a name shows it: each end a name (quoted: it has spaces), its words escaped as
    # JSON escapes them (the same name to a decoder).
    shown = errors.shown_name("/" + text)
    assert shown.count("[") == 1
    assert shown.startswith('"/a … \\u005b3')
    assert shown.endswith('z"')


def test_a_dropped_source_at_its_limit_is_whole_and_one_over_keeps_two_fifths() -> None:
    from readkeeper.attachments.model import MAX_DROPPED_SOURCE_CHARS as MOST
    from readkeeper.attachments.model import Dropped, dropped_shown

    at_limit = "/" + "s" * (MOST - 1)
    over = at_limit + "x"
    shown = dropped_shown([Dropped("file", at_limit, "r"), Dropped("file", over, "r")])
    assert shown[0]["source"] == at_limit
    head, tail = MOST * 2 // 5, MOST - MOST * 2 // 5
    cut = f"{over[:head]} … [{len(over) - head - tail} characters cut] … {over[-tail:]}"
    assert shown[1]["source"] == cut


MIDDLING = "/w/" + "q" * 800 + "/big.txt"  # long, as a real deep path may be


def test_a_next_call_names_a_path_of_a_real_length_whole_and_a_hostile_one_cut() -> None:
    # A call is sent as written: a 900-character path cut in it named a file that does
    # not exist (round 36, B6). Its prose still cuts the name; a guess is whole in data.
    refused = ReadkeeperError(
        "not_found",
        f"File does not exist: {MIDDLING}x. Did you mean {MIDDLING}? "
        f"Read it ({hints.call('read', file_path=MIDDLING)}).",
        file_path=MIDDLING + "x",
        suggestions=[MIDDLING],
    )
    whole = hints.call("read", file_path=MIDDLING)
    assert whole in refused.message, refused.message
    assert refused.message.count(" characters cut] … ") == 2  # the prose's two names
    assert refused.data["suggestions"] == [MIDDLING]
    assert " characters cut] … " in refused.data["file_path"]
    hostile = hints.call("read", file_path=LONG)
    assert " characters cut] … " in hostile
    assert len(hostile) < errors.MAX_CALL_NAME_CHARS + 100


def test_a_refusal_of_long_names_compiles_no_regex_of_them(monkeypatch: Any) -> None:
    """Round 44: a refusal compiled a regex of every long name it shows (25 ms for
    4,000 characters, in Python), and a forget of 1,000 such names made 1,000 refusals:
    27 s. A name too long to show whole is replaced as a string."""
    compiled: list[int] = []
    real = re.compile

    def compile_(pattern: Any, flags: int = 0) -> Any:
        compiled.append(len(pattern))
        return real(pattern, flags)

    monkeypatch.setattr(re, "compile", compile_)
    for char in ("q", "\u202e", "\x01"):
        name = "/w/" + char * 4000
        refused = ReadkeeperError("not_found", f"No {name}, nor {name}x.", file_path=name)
        assert refused.message.count(" characters cut] … ") == 2
    assert max(compiled, default=0) < 2 * MAX_NAME_CHARS


@given(st.text())
def test_printable_escapes_what_isprintable_rejects_and_nothing_else(text: str) -> None:
    expected = "".join(c if c.isprintable() else quoting.unprintable(c) for c in text)
    assert quoting.printable(text) == expected


@given(
    st.text(alphabet='ab" ', max_size=30),
    st.lists(st.text(alphabet='ab" ', min_size=1, max_size=4), max_size=4, unique=True),
)
def test_names_are_replaced_as_one_regex_of_them_would(text: str, names: list[str]) -> None:
    found = sorted(names, key=len, reverse=True)
    wanted = {name: f"<{index}>" for index, name in enumerate(found) if index % 2 == 0}
    if found:
        regex = re.compile("|".join(map(re.escape, found)))
        expected = regex.sub(lambda m: wanted.get(m.group(), m.group()), text)
    else:
        expected = text
    assert errors._replaced(text, found, wanted) == expected
