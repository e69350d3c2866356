"""Anchored reads and edits by anchor, and batches of plain edits, on the core: each
anchor checked against the file and against what the session was shown, every edit of
a call checked before any is applied, nothing written when one is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams
from readkeeper.read import room
from readkeeper.read.anchors import anchor, short_hash
from readkeeper.state.shown_lines import ShownLines, moved

SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


def read(core: Readkeeper, path: str, **params: Any) -> Any:
    return calls.call(core, "read", {"file_path": path, "line_format": "anchors", **params})


def anchors_of(result: Any) -> dict[int, str]:
    """Line number -> anchor, from an anchored read's content."""
    rows = result["file"]["content"].split("\n")
    found = {}
    for row in rows:
        head = row.split("\t", 1)[0]
        number = int("".join(c for c in head if c.isdigit()))
        found[number] = head
    return found


def edit(core: Readkeeper, path: str, **params: Any) -> Any:
    return calls.call(core, "edit", {"file_path": path, **params})


def refused(core: Readkeeper, path: str, **params: Any) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        edit(core, path, **params)
    return caught.value


def test_an_anchored_read_shows_number_hash_tab_and_cat_n_stays_the_default(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "a.py").write_text(SOURCE)
    plain = calls.call(core, "read", {"file_path": "a.py"})
    assert plain["file"]["content"].startswith("     1\tdef f():")
    anchored = read(core, "a.py", force=True)
    rows = anchored["file"]["content"].split("\n")
    assert rows[0] == f"1{short_hash('def f():')}\tdef f():"
    assert rows[1] == f"2{short_hash('    return 1')}\t    return 1"
    assert anchored["file"]["tokens"] == core.tokens.count(anchored["file"]["content"])


def test_anchor_edits_apply_bottom_to_top_in_one_write_keeping_bom_and_crlf(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_bytes(b"\xef\xbb\xbf" + SOURCE.replace("\n", "\r\n").encode())
    path.chmod(0o754)
    a = anchors_of(read(core, "a.py"))
    result = edit(
        core,
        "a.py",
        anchor_edits=[
            {"op": "replace", "start": a[2], "lines": ["    return 10"]},
            {"op": "delete", "start": a[3], "end": a[4]},
            {"op": "insert_before", "start": a[1], "lines": ["import os", ""]},
            {"op": "insert_after", "start": a[6], "lines": ["# end"]},
        ],
    )
    expected = "import os\n\ndef f():\n    return 10\ndef g():\n    return 2\n# end\n"
    assert path.read_bytes() == b"\xef\xbb\xbf" + expected.replace("\n", "\r\n").encode()
    assert path.stat().st_mode & 0o777 == 0o754
    assert result["replacements"] == 4
    assert result["lines"] == [1, 4, 5, 7]
    # The snippet carries the new anchors: a second edit needs no read.
    row = next(r for r in result["snippet"].split("\n") if r.endswith("\t    return 10"))
    edit(
        core,
        "a.py",
        anchor_edits=[{"op": "replace", "start": row.split("\t")[0], "lines": ["    return 11"]}],
    )
    assert b"return 11" in path.read_bytes()


def test_a_stale_anchor_is_refused_with_fresh_anchors_and_nothing_is_written(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    a = anchors_of(read(core, "a.py"))
    path.write_text(SOURCE.replace("return 1", "return 100"))  # another program
    before = path.read_bytes()
    error = refused(
        core,
        "a.py",
        anchor_edits=[
            {"op": "replace", "start": a[6], "lines": ["    return 20"]},  # still valid
            {"op": "replace", "start": a[2], "lines": ["    return 10"]},  # stale
        ],
    )
    assert error.kind == "stale"
    assert path.read_bytes() == before  # all or none: the valid edit was not applied
    fresh = anchor(2, "    return 100")
    assert f"{fresh}\t    return 100" in error.message
    assert error.data["stale"][0]["anchor"] == a[2]
    edit(core, "a.py", anchor_edits=[{"op": "replace", "start": fresh, "lines": ["    return 10"]}])
    assert path.read_text() == SOURCE.replace("return 1", "return 10")


def test_a_moved_line_is_found_nearby_and_the_answer_says_so(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    a = anchors_of(read(core, "a.py"))
    path.write_text("import os\nimport sys\n" + SOURCE)
    result = edit(core, "a.py", anchor_edits=[{"op": "delete", "start": a[5], "end": a[6]}])
    assert path.read_text() == "import os\nimport sys\n" + SOURCE.replace(
        "def g():\n    return 2\n", ""
    )
    assert result["relocated"] == [{"anchor": a[5], "line": 7}, {"anchor": a[6], "line": 8}]
    assert "is now line 7" in result["note"]
    # The other program's change is reported, as a merged single edit reports it.
    assert result["merged"] is True
    assert "+import sys" in result["external_change"]["diff"]
    assert "had changed since you read it" in result["note"]


def test_a_moved_line_that_is_not_unique_is_stale(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\n}\ny = 2\n")
    a = anchors_of(read(core, "a.py"))
    path.write_text("}\nx = 1\nz = 3\n}\ny = 2\n")  # line 2's "}" moved, and there are two
    before = path.read_bytes()
    assert refused(core, "a.py", anchor_edits=[{"op": "delete", "start": a[2]}]).kind == "stale"
    assert path.read_bytes() == before


def test_anchors_of_another_session_or_another_file_are_stale(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "a.py").write_text(SOURCE)
    (workspace / "b.py").write_text("one\ntwo\nthree\nfour\nfive\nsix\n")
    a = anchors_of(read(core, "a.py", session="A"))
    read(core, "a.py", session="B", offset=1, limit=1)  # B saw line 1 only
    read(core, "b.py", session="A")
    before = (workspace / "a.py").read_bytes(), (workspace / "b.py").read_bytes()
    other_session = refused(
        core, "a.py", session="B", anchor_edits=[{"op": "delete", "start": a[5]}]
    )
    assert other_session.kind == "stale"
    assert "not a line this session was shown" in other_session.message
    other_file = refused(core, "b.py", session="A", anchor_edits=[{"op": "delete", "start": a[2]}])
    assert other_file.kind == "stale"
    assert ((workspace / "a.py").read_bytes(), (workspace / "b.py").read_bytes()) == before


def test_a_ranged_anchored_read_validates_only_its_lines(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    read(core, "a.py", offset=5, limit=2)
    assert (
        refused(core, "a.py", anchor_edits=[{"op": "delete", "start": anchor(1, "def f():")}]).kind
        == "stale"
    )
    edit(
        core,
        "a.py",
        anchor_edits=[
            {"op": "delete", "start": anchor(5, "def g():"), "end": anchor(6, "    return 2")}
        ],
    )
    assert path.read_text() == "def f():\n    return 1\n\n\n"


@pytest.mark.parametrize(
    "bad",
    [
        [{"op": "replace", "start": "12", "lines": []}],
        [{"op": "replace", "start": "ab12", "lines": []}],
        [{"op": "replace", "start": "0ab", "lines": []}],
        [{"op": "insert_after", "start": "1ab", "end": "2ab", "lines": ["x"]}],
        [{"op": "insert_after", "start": "1ab", "lines": []}],
        [{"op": "delete", "start": "1ab", "lines": ["x"]}],
        [{"op": "replace", "start": "1ab"}],
        [{"op": "replace", "start": "3ab", "end": "2ab", "lines": []}],
        [{"op": "move", "start": "1ab", "lines": []}],
        [{"op": "replace", "start": "1--", "lines": []}],
        [],
        [
            {"op": "replace", "start": "1ab", "end": "3ab", "lines": []},
            {"op": "delete", "start": "2ab"},
        ],
        [
            {"op": "insert_after", "start": "1ab", "lines": ["x"]},
            {"op": "insert_before", "start": "2ab", "lines": ["y"]},
        ],
    ],
)
def test_malformed_or_overlapping_anchor_edits_are_bad_params(
    core: Readkeeper, workspace: Path, bad: list[Any]
) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    read(core, "a.py")
    before = path.read_bytes()
    error = refused(core, "a.py", anchor_edits=bad)
    assert error.kind == "bad_params"
    assert "anchor" in error.message or "op" in error.message
    assert path.read_bytes() == before


def test_what_is_no_anchor_names_the_anchored_read(core: Readkeeper, workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    read(core, "a.py")
    error = refused(core, "a.py", anchor_edits=[{"op": "delete", "start": "12"}])
    assert error.kind == "bad_params"
    anchored = json.dumps({"file_path": "a.py", "line_format": "anchors"})
    assert error.message.endswith(f"to get them: readkeeper/read {anchored}.")


def test_a_batch_of_plain_edits_is_all_or_none(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    calls.call(core, "read", {"file_path": "a.py"})
    before = path.read_bytes()
    missing = refused(
        core,
        "a.py",
        edits=[
            {"old_string": "return 1", "new_string": "return 10"},
            {"old_string": "return 3", "new_string": "return 30"},
        ],
    )
    assert missing.kind == "no_match"
    assert missing.message.startswith("edits[1]:")
    overlap = refused(
        core,
        "a.py",
        edits=[
            {"old_string": "def f():\n    return 1", "new_string": "x"},
            {"old_string": "return 1\n", "new_string": "y\n"},
        ],
    )
    assert overlap.kind == "bad_params"
    assert "overlap" in overlap.message
    many = [{"old_string": "return 1", "new_string": "return 10"}] * 1_001
    assert refused(core, "a.py", edits=many).kind == "bad_params"
    assert path.read_bytes() == before
    result = edit(
        core,
        "a.py",
        edits=[
            {"old_string": "return 2", "new_string": "return 20"},
            {"old_string": "return 1", "new_string": "return 10"},
        ],
    )
    assert path.read_text() == SOURCE.replace("return 1", "return 10").replace(
        "return 2", "return 20"
    )
    assert result["lines"] == [2, 6]


@pytest.mark.parametrize(
    "mixed",
    [
        {"edits": [{"old_string": "a", "new_string": "b"}], "old_string": "a", "new_string": "b"},
        {
            "edits": [{"old_string": "a", "new_string": "b"}],
            "anchor_edits": [{"op": "delete", "start": "1ab"}],
        },
        {"anchor_edits": [{"op": "delete", "start": "1ab"}], "cell_id": "x"},
    ],
)
def test_mixing_edit_forms_is_bad_params(core: Readkeeper, workspace: Path, mixed: Any) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    read(core, "a.py")
    error = refused(core, "a.py", **mixed)
    assert error.kind == "bad_params"
    assert "each in its own call" in error.message
    assert path.read_text() == SOURCE


def test_a_batch_that_would_break_a_notebook_is_refused(core: Readkeeper, workspace: Path) -> None:
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "id": "a1",
                "metadata": {},
                "source": "x = 1",
                "outputs": [],
                "execution_count": None,
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = workspace / "n.ipynb"
    path.write_text(json.dumps(notebook, indent=1) + "\n")
    calls.call(core, "read", {"file_path": "n.ipynb"})
    before = path.read_bytes()
    error = refused(
        core, "n.ipynb", edits=[{"old_string": '"cells": [', "new_string": '"cells": {'}]
    )
    assert error.kind == "bad_params"
    assert "invalid notebook" in error.message
    assert path.read_bytes() == before


def test_the_stub_rule_treats_another_line_format_as_another_view(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    calls.call(core, "read", {"file_path": "a.py"})
    # Held as cat -n only: an anchored re-read gives the lines, with anchors.
    assert read(core, "a.py")["type"] == "text"
    assert read(core, "a.py")["type"] == "file_unchanged"
    # Anchors hold the text too: a cat -n re-read is a stub.
    assert calls.call(core, "read", {"file_path": "a.py"})["type"] == "file_unchanged"
    path.write_text(SOURCE + "# more\n")
    # Changed: a cat -n re-read is a diff, an anchored one the lines (the diff carries
    # no anchors, and the ones held are of the old lines).
    changed = read(core, "a.py")
    assert changed["type"] == "text"
    assert anchors_of(changed)[7] == anchor(7, "# more")


def test_a_search_counts_as_seeing(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    calls.call(core, "grep", {"pattern": "return 2", "path": "a.py"})
    edit(
        core,
        "a.py",
        anchor_edits=[
            {"op": "replace", "start": anchor(6, "    return 2"), "lines": ["    return 3"]}
        ],
    )
    assert path.read_text() == SOURCE.replace("return 2", "return 3")


def test_a_cut_line_has_no_anchor(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.py"
    long = "x = '" + "y" * 3000 + "'"
    path.write_text(f"a = 1\n{long}\n")
    rows = read(core, "a.py")["file"]["content"].split("\n")
    assert rows[1].startswith("2--\t")
    error = refused(core, "a.py", anchor_edits=[{"op": "delete", "start": "2--"}])
    assert error.kind == "bad_params"
    assert "old_string" in error.message
    hidden = refused(core, "a.py", anchor_edits=[{"op": "delete", "start": anchor(2, long)}])
    assert hidden.kind == "stale"


def test_an_anchored_read_stays_under_the_token_cap(workspace: Path) -> None:
    # Compact numbers cost less than anchors: lines cut to fit as cat -n are over the cap
    # once anchored, and are cut again.
    settings = {"max_tokens": 300, "line_numbers": "compact"}
    core = Readkeeper(roots=[str(workspace)], client_settings=settings)
    core.tokens.warm_up()
    try:
        (workspace / "a.txt").write_text("\n" * 400)
        plain = calls.call(core, "read", {"file_path": "a.txt"})
        result = read(core, "a.txt")
        # The lines' cap: what the read sends beside them kept (read/room.py).
        beside = room.of_read(ReadParams(file_path="a.txt"), str(workspace / "a.txt")).cut
        cap = room.lines_cap(300, beside)
        assert (
            result["file"]["tokens"]
            <= cap
            < core.tokens.count(
                "\n".join(
                    f"{n}{anchor(n, '')[len(str(n)) :]}\t"
                    for n in range(1, plain["file"]["num_lines"] + 1)
                )
            )
        )
        assert result["file"]["tokens"] == core.tokens.count(result["file"]["content"])
        shown = result["file"]["num_lines"]
        assert result["file"]["partial"] is True
        assert result["file"]["next_offset"] == shown + 1
        assert f"Continue with offset={shown + 1}" in result["file"]["note"]
    finally:
        core.close()


def test_forget_drops_the_shown_lines(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    a = anchors_of(read(core, "a.py"))
    calls.call(core, "forget", {"paths": ["a.py"]})
    read(core, "a.py", offset=1, limit=1)
    assert refused(core, "a.py", anchor_edits=[{"op": "delete", "start": a[5]}]).kind == "stale"


def test_shown_lines_are_bounded_and_the_newer_entry_wins() -> None:
    shown = ShownLines(max_lines=10, max_files=2)

    def none(digest: str, first: int, last: int, max_chars: int) -> dict[int, int]:
        return {}

    shown.saw("s", "/a", {n: n for n in range(1, 9)})
    shown.saw("s", "/b", {1: 1, 2: 2})
    assert len(shown.lines("s", "/a", none)) == 8
    shown.saw("s", "/c", {1: 1})  # a third file: the oldest goes
    assert shown.lines("s", "/a", none) == {}
    shown.saw("s", "/d", {n: n for n in range(1, 30)})  # one file over the cap alone
    assert len(shown.lines("s", "/d", none)) == 10
    # A view is expanded when asked; where a line was shown twice, the newer counts.
    shown.saw("t", "/e", {1: 1, 2: 2})
    shown.saw_view("t", "/e", "v1", 2, 3, 100)
    shown.saw("t", "/e", {3: 30})

    def expand(digest: str, first: int, last: int, max_chars: int) -> dict[int, int]:
        return {n: n * 100 for n in range(first, last + 1)}

    assert shown.lines("t", "/e", expand) == {1: 1, 2: 200, 3: 30}
    shown.replace("t", "/e", moved({1: 1, 2: 2, 3: 3, 4: 4}, [(2, 3, 3)], {2: 20}))
    assert shown.lines("t", "/e", expand) == {1: 1, 2: 20, 5: 3, 6: 4}
    assert shown.lines("s", "/e", expand) == {}


def test_a_symbol_read_and_a_read_many_show_anchors(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    symbol = read(core, "a.py", symbol="g")
    assert symbol["file"]["content"] == (
        f"{anchor(5, 'def g():')}\tdef g():\n{anchor(6, '    return 2')}\t    return 2"
    )
    edit(
        core,
        "a.py",
        anchor_edits=[
            {"op": "delete", "start": anchor(5, "def g():"), "end": anchor(6, "    return 2")}
        ],
    )
    (workspace / "b.py").write_text("x = 1\n")
    many = calls.call(
        core, "readMany", {"file_paths": ["b.py"], "line_format": "anchors", "session": "m"}
    )
    assert many["results"][0]["result"]["file"]["content"] == f"{anchor(1, 'x = 1')}\tx = 1"
    edit(
        core,
        "b.py",
        session="m",
        anchor_edits=[{"op": "replace", "start": anchor(1, "x = 1"), "lines": ["x = 2"]}],
    )
    assert (workspace / "b.py").read_text() == "x = 2\n"


def test_the_line_format_setting_is_the_default_of_a_read(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"line_format": "anchors"})
    try:
        (workspace / "a.py").write_text("x = 1\n")
        shown = calls.call(core, "read", {"file_path": "a.py"})["file"]["content"]
        assert shown == f"{anchor(1, 'x = 1')}\tx = 1"
        plain = calls.call(
            core, "read", {"file_path": "a.py", "line_format": "cat-n", "force": True}
        )
        assert plain["file"]["content"] == "     1\tx = 1"
        with pytest.raises(ReadkeeperError) as caught:
            calls.call(core, "read", {"file_path": "a.py", "line_format": "hashes"})
        assert caught.value.kind == "bad_params"
    finally:
        core.close()


def test_an_edit_refused_at_its_commit_leaves_the_shown_lines_as_they_were(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "latin.txt"
    path.write_bytes("caf\xe9 one\ntwo\nthree\n".encode("latin-1"))
    a = anchors_of(read(core, "latin.txt"))
    before = path.read_bytes()
    # Checked, planned, then refused as it is encoded: the file cannot hold the character.
    error = refused(
        core, "latin.txt", anchor_edits=[{"op": "insert_before", "start": a[1], "lines": ["漢"]}]
    )
    assert error.kind == "unsupported"
    assert path.read_bytes() == before
    # The session still holds line 3 where it was: no relocation, no stale.
    result = edit(
        core, "latin.txt", anchor_edits=[{"op": "replace", "start": a[3], "lines": ["3"]}]
    )
    assert "relocated" not in result
    assert path.read_bytes() == "caf\xe9 one\ntwo\n3\n".encode("latin-1")


def test_an_anchored_reread_of_an_empty_file_is_a_stub(core: Readkeeper, workspace: Path) -> None:
    (workspace / "empty.txt").write_text("")
    assert read(core, "empty.txt")["type"] == "text"
    assert read(core, "empty.txt")["type"] == "file_unchanged"


def test_anchor_edits_that_change_nothing_are_no_change(core: Readkeeper, workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    a = anchors_of(read(core, "a.py"))
    same = [{"op": "replace", "start": a[2], "lines": ["    return 1"]}]
    assert refused(core, "a.py", anchor_edits=same).kind == "no_change"


def test_a_directory_is_refused_as_one(core: Readkeeper, workspace: Path) -> None:
    (workspace / "d").mkdir()
    error = refused(core, "d", edits=[{"old_string": "a", "new_string": "b"}])
    assert error.kind == "is_directory"


def test_a_range_of_a_file_too_large_to_hold_validates_only_its_lines(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "big.log"
    lines = [f"entry {n} of the log" for n in range(1, 41)]
    path.write_text("\n".join(lines) + "\n")
    core.configure({"max_size_bytes": 256})  # the file is read by ranges only
    for _ in range(3):  # the same tail again, forced: the lines it holds are the same
        tail = read(core, "big.log", offset=37, limit=4, force=True)
        assert (tail["type"], tail["file"]["num_lines"]) == ("text", 4)
    read(core, "big.log", offset=2, limit=1, session="B")
    core.configure({})
    late = refused(core, "big.log", anchor_edits=[{"op": "delete", "start": anchor(2, lines[1])}])
    assert late.kind == "stale"  # line 2 was shown to session B, not to this one
    edit(core, "big.log", anchor_edits=[{"op": "delete", "start": anchor(38, lines[37])}])
    assert path.read_text() == "\n".join(lines[:37] + lines[38:]) + "\n"
    edit(
        core, "big.log", session="B", anchor_edits=[{"op": "delete", "start": anchor(2, lines[1])}]
    )
    assert path.read_text() == "\n".join(lines[:1] + lines[2:37] + lines[38:]) + "\n"
