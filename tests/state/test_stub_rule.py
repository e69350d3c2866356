"""The stub rule: a re-read with the same parameters (after defaults) and settings, of
unchanged content, is `file_unchanged`, also when the first view stopped at the line
default or the token cap; what an edit left, another range or other settings are not."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from document_samples import numbered_pdf

from conftest import Session
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.files.stamps import settled, settles_after
from readkeeper.protocol import EditParams, ReadParams, StatsParams, unstructure
from readkeeper.read.stub_rule import STUB_TOKENS


def read(core: Readkeeper, path: str | Path, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = unstructure(core.read(ReadParams(file_path=str(path), **params)))
    return result


def lines(count: int, width: int = 8) -> str:
    return "".join(f"line {i} {'w' * width}\n" for i in range(1, count + 1))


def settle(path: Path) -> None:
    """Wait until the file's stamp proves its content, so a re-read may be a stub
    without reading it (files/stamps.py)."""
    st = os.stat(path)
    left = max(st.st_mtime_ns, st.st_ctime_ns) + settles_after(st) - time.time_ns()
    if left > 0:
        time.sleep(left / 1e9 + 0.005)
    assert settled(os.stat(path), time.time_ns())


def test_a_view_cut_at_the_line_default_stubs_and_says_what_is_held(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"default_limit": 5})
    (workspace / "n.txt").write_text(lines(12))
    first = read(core, "n.txt")
    assert (first["type"], first["file"]["partial"]) == ("text", True)
    assert first["file"]["num_lines"] == 5
    again = read(core, "n.txt")
    assert again["type"] == "file_unchanged"
    note = again["file"]["note"]
    assert "Lines 1-5 of 12 unchanged" in note
    assert "offset=6" in note
    assert "force=true" in note
    # force sends the same lines again; the continuation is a new view
    assert read(core, "n.txt", force=True)["file"]["num_lines"] == 5
    assert read(core, "n.txt", offset=6)["file"]["start_line"] == 6


def test_a_whole_read_cut_at_the_token_cap_stubs(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 1000})
    (workspace / "big.txt").write_text(lines(400, width=30))
    first = read(core, "big.txt")
    shown = first["file"]["num_lines"]
    assert first["file"]["partial"] is True
    assert 0 < shown < 400
    again = read(core, "big.txt")
    assert again["type"] == "file_unchanged"
    assert f"Lines 1-{shown} of 400" in again["file"]["note"]
    assert f"offset={shown + 1}" in again["file"]["note"]


def test_a_complete_view_stubs_for_the_same_lines_asked_explicitly(
    core: Readkeeper, workspace: Path
) -> None:
    # limit=2000 is the default: the same parameters after defaults, the same view.
    (workspace / "a.txt").write_text(lines(3))
    assert read(core, "a.txt")["type"] == "text"
    stub = read(core, "a.txt", offset=1, limit=2000)
    assert stub["type"] == "file_unchanged"
    assert stub["file"]["file_path"] == str(workspace / "a.txt")
    held = stub["file"]
    assert (held["start_line"], held["num_lines"], held["total_lines"]) == (1, 3, 3)


def test_a_cut_whole_read_is_not_the_same_view_as_a_ranged_read(workspace: Path) -> None:
    # Over the token cap a whole read is cut but a ranged one is refused: not the same,
    # so the ranged read is answered as a fresh one would be.
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 1000})
    (workspace / "big.txt").write_text(lines(400, width=30))
    assert read(core, "big.txt")["file"]["partial"] is True
    with pytest.raises(ReadkeeperError) as refused:
        read(core, "big.txt", offset=1, limit=2000)
    assert refused.value.kind == "token_limit"


def test_other_settings_make_another_view(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"default_limit": 5})
    (workspace / "n.txt").write_text(lines(12))
    read(core, "n.txt")
    core.configure({"default_limit": 8})
    after = read(core, "n.txt")
    assert (after["type"], after["file"]["num_lines"]) == ("text", 8)
    assert read(core, "n.txt")["type"] == "file_unchanged"


def test_a_view_shown_under_other_settings_is_passed_over_not_the_end_of_the_search(
    workspace: Path,
) -> None:
    core = Readkeeper(roots=[str(workspace)])
    (workspace / "a.txt").write_text(lines(30))
    read(core, "a.txt", offset=1, limit=3)
    core.configure({"line_numbers": "compact"})
    # The same lines under other settings look different: sent again, as they look now.
    again = read(core, "a.txt", offset=1, limit=3)
    assert (again["type"], again["file"]["content"][:2]) == ("text", "1\t")

    (workspace / "b.txt").write_text(lines(30))
    core.configure({})
    read(core, "b.txt", offset=1, limit=3)
    core.configure({"line_numbers": "compact"})
    read(core, "b.txt", offset=10, limit=3)
    core.configure({})
    # The newest view was shown under other settings; the one before it matches.
    assert read(core, "b.txt", offset=1, limit=3)["type"] == "file_unchanged"


def test_changed_content_or_an_edit_in_between_is_never_a_stub(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"default_limit": 5})
    path = workspace / "n.txt"
    path.write_text(lines(12))
    read(core, "n.txt")
    path.write_text(lines(12).replace("line 3 ", "line three "))
    changed = read(core, "n.txt")
    assert changed["type"] == "text"
    assert "line three" in changed["file"]["content"]
    core.edit(EditParams(file_path="n.txt", old_string="line 2 ", new_string="line two "))
    after_edit = read(core, "n.txt")
    assert after_edit["type"] == "text"
    assert "line two" in after_edit["file"]["content"]
    assert read(core, "n.txt")["type"] == "file_unchanged"


def test_a_pdf_view_cut_at_the_page_cap_stubs(core: Readkeeper, workspace: Path) -> None:
    (workspace / "forty.pdf").write_bytes(numbered_pdf(40, lines=5))
    first = read(core, "forty.pdf", pages="1-40")
    assert first["type"] == "pdf"
    assert first["file"]["partial"] is True
    again = read(core, "forty.pdf", pages="1-40")
    assert again["type"] == "file_unchanged"
    assert "Pages 1-20 of 40" in again["file"]["note"]  # what it holds: part of the file
    assert "force=true" in again["file"]["note"]
    assert "21" in again["file"]["note"]  # where the rest starts


async def test_a_long_file_read_twice_through_the_server_is_a_stub(
    lsp: Session, workspace: Path
) -> None:
    (workspace / "long.py").write_text("".join(f"value_{i} = {i}\n" for i in range(3519)))
    first = await lsp.read(workspace / "long.py")
    assert first["file"]["num_lines"] == 2000
    assert first["file"]["partial"] is True
    again = await lsp.read(workspace / "long.py")
    assert again["type"] == "file_unchanged"
    assert "Lines 1-2000 of 3,519 unchanged" in again["file"]["note"]


def test_a_view_read_earlier_stubs_after_another_view_of_the_same_content(
    workspace: Path,
) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"default_limit": 5})
    (workspace / "n.txt").write_text(lines(12))
    assert read(core, "n.txt")["type"] == "text"
    assert read(core, "n.txt", offset=8, limit=2)["type"] == "text"
    # Both views are held: each re-read stubs, and says what it holds.
    again = read(core, "n.txt")
    assert again["type"] == "file_unchanged"
    assert "Lines 1-5 of 12" in again["file"]["note"]
    assert read(core, "n.txt", offset=8, limit=2)["type"] == "file_unchanged"
    # A change to line 3: lines 8-9 are as the agent holds them (a stub that says the
    # file changed before them), lines 1-5 are not.
    (workspace / "n.txt").write_text(lines(12).replace("line 3 ", "line three "))
    moved = read(core, "n.txt", offset=8, limit=2)
    assert (moved["type"], moved["file"]["changed_outside"]) == ("file_unchanged", "before")
    assert read(core, "n.txt")["type"] == "text"


def test_a_file_held_whole_stays_held_after_a_ranged_read(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "w.txt").write_text(lines(300))
    whole = read(core, "w.txt")
    assert whole["type"] == "text"
    assert read(core, "w.txt", offset=10, limit=3)["type"] == "text"
    before = core.stats_for(StatsParams(""))["session"]["tokens_saved_by_stubs"]
    again = read(core, "w.txt")
    assert again["type"] == "file_unchanged"
    # The stub stands for the whole file, not for the range read last.
    assert (again["file"]["start_line"], again["file"]["num_lines"]) == (1, 300)
    saved = core.stats_for(StatsParams(""))["session"]["tokens_saved_by_stubs"] - before
    assert saved == whole["file"]["tokens"] - STUB_TOKENS
    # Someone changes line 20: the agent, still holding the whole file, gets the diff.
    (workspace / "w.txt").write_text(lines(300).replace("line 20 ", "line twenty "))
    changed = read(core, "w.txt")
    assert changed["type"] == "file_changed"
    assert "+line twenty" in changed["file"]["diff"]


def test_after_a_diff_of_a_file_held_whole_the_same_lines_read_as_a_range_stub(
    core: Readkeeper, workspace: Path
) -> None:
    # The diff brought the agent all of the new content: reading its lines again, in
    # the whole read's range asked explicitly, is a stub, not the file once more.
    (workspace / "w.txt").write_text(lines(300))
    read(core, "w.txt")
    (workspace / "w.txt").write_text(lines(300).replace("line 20 ", "line twenty "))
    assert read(core, "w.txt")["type"] == "file_changed"
    again = read(core, "w.txt", offset=1)
    assert again["type"] == "file_unchanged"
    assert (again["file"]["num_lines"], again["file"]["total_lines"]) == (300, 300)
    # It still holds the file whole: the next change comes as a diff too.
    (workspace / "w.txt").write_text(lines(300).replace("line 40 ", "line forty "))
    assert read(core, "w.txt")["type"] == "file_changed"


def test_an_outline_read_earlier_stubs_after_a_symbol_read(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"outline_over_tokens": 200})
    source = "".join(f"def function_{i}(x):\n    return x + {i}\n\n\n" for i in range(60))
    (workspace / "m.py").write_text(source)
    assert read(core, "m.py")["type"] == "outline"
    assert read(core, "m.py", symbol="function_7")["type"] == "text"
    assert read(core, "m.py")["type"] == "file_unchanged"
    assert read(core, "m.py", symbol="function_7")["type"] == "file_unchanged"


def test_an_outline_does_not_hold_the_file_whole(workspace: Path) -> None:
    # The agent saw only the outline: after a small change elsewhere, a whole re-read is
    # the new outline, never a diff of lines it was not shown.
    core = Readkeeper(roots=[str(workspace)], client_settings={"outline_over_tokens": 200})
    source = "".join(f"def function_{i}(x):\n    return x + {i}\n\n\n" for i in range(60))
    (workspace / "m.py").write_text(source)
    assert read(core, "m.py")["type"] == "outline"
    (workspace / "m.py").write_text(source.replace("x + 30", "x + 31"))
    assert read(core, "m.py")["type"] == "outline"


def test_after_an_edit_only_the_views_it_touched_are_sent_again(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "e.txt").write_text(lines(30))
    read(core, "e.txt", offset=1, limit=5)
    read(core, "e.txt", offset=20, limit=5)
    core.edit(
        EditParams(file_path=str(workspace / "e.txt"), old_string="line 2 ", new_string="row 2 ")
    )
    # Lines 20-24 are as the agent read them: a stub that says the file changed before.
    kept = read(core, "e.txt", offset=20, limit=5)
    assert (kept["type"], kept["file"]["changed_outside"]) == ("file_unchanged", "before")
    # Lines 1-5 hold the edit: the agent has not read them as they are now.
    again = read(core, "e.txt", offset=1, limit=5)
    assert again["type"] == "text"
    assert "row 2" in again["file"]["content"]


def test_an_edit_after_a_ranged_read_of_a_file_held_whole_leaves_it_held_whole(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "h.txt").write_text(lines(300))
    read(core, "h.txt")
    read(core, "h.txt", offset=40, limit=5)
    edited = core.edit(
        EditParams(file_path=str(workspace / "h.txt"), old_string="line 42 ", new_string="L42 ")
    )
    assert edited.read_state.next_read == "stub"
    assert read(core, "h.txt")["type"] == "file_unchanged"


def test_a_whole_view_outlasts_many_ranged_reads(core: Readkeeper, workspace: Path) -> None:
    (workspace / "r.txt").write_text(lines(300))
    read(core, "r.txt")
    for offset in range(10, 200, 20):
        read(core, "r.txt", offset=offset, limit=3)
    assert read(core, "r.txt")["type"] == "file_unchanged"
    assert read(core, "r.txt", offset=10, limit=3)["type"] == "text"  # the oldest range


def test_a_ranged_read_after_its_own_edit_keeps_the_file_held_whole(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "k.txt").write_text(lines(300))
    read(core, "k.txt")
    core.edit(
        EditParams(file_path=str(workspace / "k.txt"), old_string="line 5 ", new_string="L5 ")
    )
    assert read(core, "k.txt", offset=3, limit=4)["type"] == "text"
    assert read(core, "k.txt")["type"] == "file_unchanged"


@pytest.mark.parametrize("proven", [False, True], ids=["hashed", "proven-by-stamp"])
def test_a_re_read_asking_more_lines_from_the_same_offset_gets_them_all(
    workspace: Path, proven: bool
) -> None:
    # The stub names the lines the agent holds: a wider range from the same offset asks
    # for lines it never got, so it is sent whole, never answered as "unchanged".
    # Both ways to a stub: hashing the file again, and its stamp proving it unchanged.
    core = Readkeeper(roots=[str(workspace)])
    path = workspace / "n.txt"
    path.write_text(lines(40))
    if proven:
        settle(path)
    assert read(core, "n.txt", offset=5, limit=3)["file"]["num_lines"] == 3
    wider = read(core, "n.txt", offset=5, limit=10)
    assert wider["type"] == "text"
    assert (wider["file"]["start_line"], wider["file"]["num_lines"]) == (5, 10)
    assert "line 14 " in wider["file"]["content"]
    # Both ranges are now held: each re-read is a stub, and a narrower one is not the
    # wider one (a stub stands for exactly the lines asked).
    assert read(core, "n.txt", offset=5, limit=10)["type"] == "file_unchanged"
    assert read(core, "n.txt", offset=5, limit=3)["type"] == "file_unchanged"
    narrower = read(core, "n.txt", offset=5, limit=2)
    assert (narrower["type"], narrower["file"]["num_lines"]) == ("text", 2)


def test_a_view_read_again_with_force_replaces_itself_not_another_view(
    workspace: Path,
) -> None:
    # Each forced re-read of the whole file is the same view again: it takes that
    # view's place, so the ranges read before stay held (a few views are kept per file).
    core = Readkeeper(roots=[str(workspace)], client_settings={"default_limit": 5})
    (workspace / "n.txt").write_text(lines(40))
    read(core, "n.txt", offset=10, limit=2)
    read(core, "n.txt", offset=20, limit=2)
    for _ in range(4):
        assert read(core, "n.txt", force=True)["file"]["num_lines"] == 5
    assert read(core, "n.txt", offset=10, limit=2)["type"] == "file_unchanged"
    assert read(core, "n.txt", offset=20, limit=2)["type"] == "file_unchanged"
    assert read(core, "n.txt")["type"] == "file_unchanged"


def test_a_whole_re_read_cut_at_the_line_default_says_what_is_held_after_a_ranged_read(
    workspace: Path,
) -> None:
    # Lines 1-5 read whole (cut at the line default), then the same lines asked as a
    # range: a whole re-read is still told it holds lines 1-5 of 12, not a bare
    # "unchanged" that reads as the whole file.
    core = Readkeeper(roots=[str(workspace)], client_settings={"default_limit": 5})
    (workspace / "n.txt").write_text(lines(12))
    assert read(core, "n.txt")["file"]["partial"] is True
    ranged = read(core, "n.txt", offset=1, limit=5)
    assert (ranged["type"], ranged["file"]["num_lines"]) == ("text", 5)
    again = read(core, "n.txt")
    assert again["type"] == "file_unchanged"
    assert "Lines 1-5 of 12" in again["file"]["note"]
    assert read(core, "n.txt", offset=1, limit=5)["type"] == "file_unchanged"


def test_a_range_from_line_one_does_not_hold_the_file_whole(
    core: Readkeeper, workspace: Path
) -> None:
    # Lines 1-5 of 40 asked as a range: the agent got all it asked for, but not the
    # file. A whole read then sends the file (no stub), and after a change it is no
    # diff of lines the agent never had.
    (workspace / "n.txt").write_text(lines(40))
    assert read(core, "n.txt", offset=1, limit=5)["file"]["num_lines"] == 5
    whole = read(core, "n.txt")
    assert (whole["type"], whole["file"]["num_lines"]) == ("text", 40)
    (workspace / "m.txt").write_text(lines(40))
    assert read(core, "m.txt", offset=1, limit=5)["type"] == "text"
    (workspace / "m.txt").write_text(lines(40).replace("line 30 ", "line thirty "))
    after = read(core, "m.txt")
    assert (after["type"], after["file"]["num_lines"]) == ("text", 40)
