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
