"""A number a caller writes in a string (a page, an anchor's line, a symbol's "[N]") is
read whatever its digits: Python refuses to convert more than 4,300, and a page of
5,000 nines was an `internal` fault saying the call did nothing wrong (round 40). Such
a number reads as past every end, refused as one is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from document_samples import numbered_pdf

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError

NINES = "9" * 5000


@pytest.mark.parametrize(
    ("method", "params", "kinds"),
    [
        ("read", {"file_path": "d.pdf", "pages": NINES}, {"bad_params"}),
        ("read", {"file_path": "d.pdf", "pages": "1-" + NINES}, None),
        ("read", {"file_path": "d.pdf", "pages": NINES + "-"}, {"bad_params"}),
        ("read", {"file_path": "m.py", "symbol": f"f[{NINES}]"}, {"not_found", "bad_params"}),
        (
            "edit",
            {"file_path": "a.txt", "anchor_edits": [{"op": "delete", "start": NINES + "ab"}]},
            {"stale", "bad_params"},
        ),
    ],
)
def test_a_number_of_any_length_is_read_never_a_fault(
    core: Readkeeper, workspace: Path, method: str, params: dict[str, Any], kinds: Any
) -> None:
    (workspace / "d.pdf").write_bytes(numbered_pdf(2))
    (workspace / "a.txt").write_text("x\n")
    (workspace / "m.py").write_text("def f():\n    return 1\n\n\ndef f():\n    return 2\n")
    calls.call(core, "read", {"file_path": "a.txt", "line_format": "anchors"})
    if kinds is None:  # a range to past the end reads the pages there are
        assert calls.call(core, method, params)["type"] == "pdf"
        return
    with pytest.raises(ReadkeeperError) as refused:
        calls.call(core, method, params)
    assert refused.value.kind in kinds, refused.value.message[:300]


# --- a JSON number and a setting of any length (round 41) ---------------------------------

PYTHONS_ADVICE = "set_int_max_str_digits"


def test_a_json_number_of_thousands_of_digits_is_refused_in_our_words(workspace: Path) -> None:
    from raw_lsp import RawServer

    from mcp_helpers import exchange

    server = RawServer()
    try:
        body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":'
        server.send_bytes(body + NINES.encode() + b',"capabilities":{}}}')
        refused = server.response(1)
    finally:
        server.close()
    line = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":'
    answers = exchange(
        workspace, [line + b'{"file_path":"a.txt","offset":' + NINES.encode() + b"}}}"]
    )
    for error in (refused["error"], answers[2]["error"]):
        assert error["code"] == -32700, error
        assert "a number in the message has over 4,300 digits" in error["message"]
        assert PYTHONS_ADVICE not in error["message"]


def test_a_setting_of_thousands_of_digits_is_held_at_its_most() -> None:
    from readkeeper.settings import resolve_settings

    held, warnings = resolve_settings({"max_tokens": NINES})
    at_most, _ = resolve_settings({"max_tokens": "9" * 4000})
    assert held.max_tokens == at_most.max_tokens
    assert not any(PYTHONS_ADVICE in warning for warning in warnings), warnings
