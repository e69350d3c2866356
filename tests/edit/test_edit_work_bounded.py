"""An edit's work is bounded by what it may make, whatever the old_string and the file:
the near miss a `no_match` shows is judged by old_string's first NEAR_MISS_CHARS
characters and each window of the file by a quarter more (rapidfuzz's comparison costs
their product; round 38, A1: an old_string of 32,000 spaces against 120 lines of 2,000
took 117 s, every other call waiting), and a replace_all whose text would pass the cap
is refused before that text is made (round 39). Spies record what each step is given."""

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


def test_a_replace_all_past_the_cap_is_refused_before_its_text_is_made(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One character replaced by 10,000 in a file of 200,000: the new text (2 GB) was
    # made before its too_large, and the server grew by 4 GB (round 39).
    from readkeeper.edit import edits

    (workspace / "f.txt").write_text("a" * 200_000)
    calls.call(core, "read", {"file_path": "f.txt"})
    planned: list[int] = []
    plan = edits.plan

    def spy(*args: Any) -> Any:
        planned.append(1)
        return plan(*args)

    monkeypatch.setattr(edits, "plan", spy)
    asked = {"file_path": "f.txt", "old_string": "a", "new_string": "b" * 10_000}
    with pytest.raises(ReadkeeperError) as refused:
        calls.call(core, "edit", {**asked, "replace_all": True})
    assert refused.value.kind == "too_large", refused.value.message
    assert "The change was not made" in refused.value.message
    assert planned == []
    assert (workspace / "f.txt").read_text() == "a" * 200_000


def test_a_near_miss_says_how_it_differs_only_of_an_old_string_compared_whole(
    core: Readkeeper, workspace: Path
) -> None:
    # A dedented copy of 40 lines and a new last line was told it "differs only in
    # whitespace": only its first 20 lines had been compared (round 39).
    lines = [f"    value_{i} = compute({i})" for i in range(40)]
    (workspace / "m.py").write_text("\n".join(lines) + "\n")
    calls.call(core, "read", {"file_path": "m.py"})
    old = "\n".join(line.strip() for line in lines) + "\nDROP TABLE users;"
    with pytest.raises(ReadkeeperError) as refused:
        calls.call(core, "edit", {"file_path": "m.py", "old_string": old, "new_string": "x"})
    assert refused.value.kind == "no_match", refused.value.message[:300]
    assert "differs only in whitespace" not in refused.value.message
    assert "The closest text is at lines 1-20" in refused.value.message
