"""Text readkeeper escapes, then cuts to a length, is cut between escapes, never inside
one (attack round 22): `errors.fault_reason` cut another party's text at 500 characters
after escaping it, so the cut could leave `\\u00` or a lone backslash at the end, which
reads as text the fault never held. The same for the data JSON of a refusal over MCP
and a setting's value shown in its warning."""

from __future__ import annotations

import json
import re

import pytest

from readkeeper import quoting
from readkeeper.errors import MAX_FAULT_CHARS, ReadkeeperError, fault_reason
from readkeeper.mcp.render import error_result
from readkeeper.setting_values import shown_value

# An escape readkeeper writes, whole: JSON's and printable's.
_WHOLE = re.compile(r"\\(?:u[0-9a-f]{4}|x[0-9a-f]{2}|[\\\"nrtbf/'])")


def ends_whole(text: str) -> bool:
    """Whether every backslash in `text` starts an escape that ends within it."""
    return _WHOLE.sub("", text).count("\\") == 0


@pytest.mark.parametrize("before", range(12))
def test_a_fault_reason_is_cut_between_escapes(before: int) -> None:
    # Each start puts the 500th character at another place of an escape.
    prefix = "x" * (MAX_FAULT_CHARS - len("ValueError: ") - before)
    reason = fault_reason(ValueError(prefix + "\x01\u202e\U000e0001" * 10))
    # The fault's words are one quoted string (errors.library_words), the cut after it.
    assert reason.startswith('ValueError: "xxx')
    quoted, cut = reason.removeprefix("ValueError: ").split(" … [")
    assert re.fullmatch(r"[\d,]+ characters cut\]", cut)
    assert json.loads(quoted).startswith(prefix)  # every escape whole
    assert ends_whole(quoted), quoted[-14:]
    assert MAX_FAULT_CHARS - 12 < len(quoted) - 2 <= MAX_FAULT_CHARS  # cut at an escape


@pytest.mark.parametrize("before", range(8))
def test_cut_escaped_keeps_each_escape_whole(before: int) -> None:
    text = quoting.printable("y" * (20 - before) + "\x00\u2028\U000e0001" * 4)
    for most in range(len(text) + 1):
        cut = quoting.cut_escaped(text, most)
        assert len(cut) <= most
        assert text.startswith(cut)
        assert ends_whole(cut), (most, cut[-14:])
        assert len(cut) >= most - 12


def test_the_data_of_an_mcp_refusal_is_cut_between_escapes() -> None:
    for pad in range(12):
        refusal = ReadkeeperError("bad_params", "no", where="w" * (3990 + pad) + "\x01" * 20)
        shown = error_result(refusal).content[0].text.split("\n")[-1]  # type: ignore[union-attr]
        assert len(shown) <= 4000
        assert ends_whole(shown), shown[-14:]
        assert shown.startswith('{"where": "www')


def test_a_long_setting_value_is_cut_between_escapes() -> None:
    for pad in range(12):
        shown = shown_value("z" * pad + "\x01" * 40)
        assert ends_whole(shown.removesuffix("...")), shown
