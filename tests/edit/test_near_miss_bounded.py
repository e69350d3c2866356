"""The near miss a `no_match` shows is looked for within a bound: rapidfuzz's comparison
costs the product of its two texts, so `old_string` is judged by its first
NEAR_MISS_CHARS characters and each window of the file by a quarter more (round 38, A1:
an old_string of 32,000 spaces against 120 lines of 2,000 took 117 s, and one of 450,000
never answered, every other call of the server waiting behind it). The spy below
records what the comparison is given: the bound holds whatever the old_string."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import rapidfuzz.process

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.edit.matching import NEAR_MISS_CHARS
from readkeeper.errors import ReadkeeperError


@pytest.mark.parametrize("spaces", [8_000, 450_000])
def test_a_long_old_string_is_judged_by_its_first_characters(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch, spaces: int
) -> None:
    (workspace / "sp.txt").write_text("".join(" " * 1990 + f"x{i}\n" for i in range(120)))
    calls.call(core, "read", {"file_path": "sp.txt"})
    given: list[tuple[int, int]] = []
    compare = rapidfuzz.process.extractOne

    def spy(query: str, choices: list[str], **options: Any) -> Any:
        given.append((len(query), max(map(len, choices))))
        return compare(query, choices, **options)

    monkeypatch.setattr(rapidfuzz.process, "extractOne", spy)
    with pytest.raises(ReadkeeperError) as refused:
        calls.call(
            core,
            "edit",
            {"file_path": "sp.txt", "old_string": " " * spaces + "Q", "new_string": "y"},
        )
    assert refused.value.kind == "no_match", refused.value.message
    assert "The closest text is at line" in refused.value.message
    [(query, widest)] = given
    assert query <= NEAR_MISS_CHARS
    assert widest <= NEAR_MISS_CHARS + NEAR_MISS_CHARS // 4 + 16


def test_a_near_miss_of_a_usual_slip_is_still_found(core: Readkeeper, workspace: Path) -> None:
    (workspace / "m.py").write_text(
        "".join(f"value_{i} = compute({i})  # note\n" for i in range(600))
    )
    calls.call(core, "read", {"file_path": "m.py"})
    with pytest.raises(ReadkeeperError) as refused:
        calls.call(
            core,
            "edit",
            {
                "file_path": "m.py",
                "old_string": "value_17 = compute(17)  # nxte",
                "new_string": "y",
            },
        )
    assert "The closest text is at line 18" in refused.value.message, refused.value.message
