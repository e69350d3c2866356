"""A symbol read's did-you-mean is judged by the symbol's first characters: rapidfuzz's
comparison costs the product of the two names (round 39: a symbol of 2,000,000
characters against 1,000 names took 25 s, and eight such calls held every other call of
the server for minutes). The refusal's words cut the name without a regex of it, and
whether a name is plain is decided in C (`quoting.is_plain`, the same answer for every
character)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import rapidfuzz.process

from readkeeper import calls, quoting
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError


def test_a_long_symbol_is_judged_by_its_first_characters(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "m.py").write_text(
        "".join(f"def fn_{i}_{'q' * 200}():\n    return {i}\n\n" for i in range(50))
    )
    given: list[int] = []
    extract = rapidfuzz.process.extract

    def spy(query: str, choices: list[str], **options: Any) -> Any:
        given.append(len(query))
        return extract(query, choices, **options)

    monkeypatch.setattr(rapidfuzz.process, "extract", spy)
    with pytest.raises(ReadkeeperError) as refused:
        calls.call(core, "read", {"file_path": "m.py", "symbol": "fn_" + "Z" * 500_000})
    assert refused.value.kind == "not_found", refused.value.message
    assert given, "no guess was looked for"
    assert max(given) <= 256, given
    assert len(refused.value.message) < 2_000


def test_a_plain_name_is_judged_as_each_of_its_characters_is() -> None:
    for code in range(0x10000):
        char = chr(code)
        each = char.isalnum() or char in quoting.NAME_PUNCTUATION
        assert (quoting._PLAIN.fullmatch(char) is not None) == each, hex(code)
