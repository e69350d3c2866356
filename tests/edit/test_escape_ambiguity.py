"""A file's literal `\\r` (a backslash, an r) and a CR shown escaped read alike, so an
old_string copied from either may mean either: when both occur the edit is refused
`ambiguous_match` naming the lines of each, and a read's note names the lines that hold
escaped line breaks (and the lines readkeeper cut), so the agent can tell them apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import text_file
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import EditParams


@pytest.mark.parametrize(
    ("data", "literal", "escaped"),
    [(b'p = "a\\rb"\np = "a\rb"\n', [1], [2]), (b'q = "a\rb"\nq = "a\\rb"\n', [2], [1])],
)
def test_an_old_string_that_matches_as_written_and_unescaped_is_refused(
    core: Readkeeper, workspace: Path, data: bytes, literal: list[int], escaped: list[int]
) -> None:
    path = workspace / "amb.txt"
    path.write_bytes(data)
    file = text_file(core, path)
    rows = str(file["content"]).split("\n")
    assert rows[0].split("\t", 1)[1] == rows[1].split("\t", 1)[1]  # shown alike
    assert f"Line {escaped[0]} holds text shown escaped: line breaks other than LF" in str(
        file["note"]
    )
    copied = rows[1].split("\t", 1)[1]
    with pytest.raises(ReadkeeperError) as refused:
        core.edit(EditParams(file_path=str(path), old_string=copied, new_string="EDITED"))
    assert refused.value.kind == "ambiguous_match"
    assert refused.value.data["literal_lines"] == literal
    assert refused.value.data["escaped_lines"] == escaped
    assert "read's note lists" in refused.value.message
    assert path.read_bytes() == data
    # With a neighbour that only one of them has, the edit is no longer ambiguous.
    path.write_bytes(data + b"tail\n")
    text_file(core, path)
    whole = copied + "\ntail"
    core.edit(EditParams(file_path=str(path), old_string=whole, new_string="EDITED"))
    assert path.read_bytes() == data.split(b"\n")[0] + b"\nEDITED\n"


def test_an_escape_only_one_way_still_matches(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "one.txt"
    path.write_bytes(b"a\rb\nc\n")
    text_file(core, path)
    core.edit(EditParams(file_path=str(path), old_string="a\\rb", new_string="x\\ry"))
    assert path.read_bytes() == b"x\ry\nc\n"


def test_the_note_names_the_lines_readkeeper_cut(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_line_chars": 50})
    path = workspace / "cut.txt"
    fake = "short … [line cut: 100 more characters]"
    path.write_text(f"{fake}\nok\n{'b' * 52}\n")
    file = text_file(core, path)
    rows = str(file["content"]).split("\n")
    assert rows[2].endswith("… [line cut: 2 more characters]")
    assert "Line 3 was cut" in str(file["note"])
    # The file's own marker is shown escaped, and named as such (attack round 23's F3).
    assert rows[0].endswith("short … \\x5bline cut: 100 more characters]")
    assert "Line 1 holds text shown escaped" in str(file["note"])
    assert file["truncated_lines"] == 1
