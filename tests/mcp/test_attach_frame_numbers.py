"""A number JSON has not (NaN, Infinity) crosses the attach socket as itself: orjson wrote
it as null, so an attached agent's `"offset": NaN` reached the editor's core as no
offset and ran with the default, where a core of its own refuses it (attack round 24)."""

from __future__ import annotations

import math
import socket
import struct

import pytest

from readkeeper.attach import framing


def test_a_number_json_has_not_reaches_the_other_side_as_itself() -> None:
    left, right = socket.socketpair()
    with left, right:
        for value in (math.nan, math.inf, -math.inf):
            framing.send(left, {"params": {"arguments": {"offset": value, "lines": ["a"]}}})
            got = framing.receive(right)
            assert got is not None
            offset = got["params"]["arguments"]["offset"]
            assert isinstance(offset, float), got
            assert math.isnan(offset) if math.isnan(value) else offset == value
        framing.send(left, {"result": None, "n": 1.5})  # null and finite numbers as before
        assert framing.receive(right) == {"result": None, "n": 1.5}


def test_a_number_of_thousands_of_digits_is_refused_in_our_words() -> None:
    """Round 42: the attach socket answered Python's words (`sys.set_int_max_str_digits`)
    where LSP and MCP say readkeeper's."""
    left, right = socket.socketpair()
    with left, right:
        body = b'{"id":3,"method":"readkeeper/read","params":{"offset":' + b"9" * 5000 + b"}}"
        left.sendall(struct.pack(">I", len(body)) + body)
        with pytest.raises(framing.FrameError) as refused:
            framing.receive(right)
    assert "a number in the message has over 4,300 digits" in str(refused.value)
    assert "set_int_max_str_digits" not in str(refused.value)
