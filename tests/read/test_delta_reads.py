"""Delta re-reads: a file the session holds whole that changed since comes back as the
diff (`file_changed`) when that is much smaller; unchanged, it is a stub, also after
the agent's own edit or write."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from conftest import Session
from readkeeper.core import Readkeeper
from readkeeper.protocol import EditParams, ReadParams, WriteParams, unstructure


def read(core: Readkeeper, path: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = unstructure(core.read(ReadParams(file_path=path, **params)))
    return result


def module(lines: int = 300) -> str:
    return "".join(
        f"def handler_{i}(request):\n    return respond(request, {i})\n" for i in range(lines // 2)
    )


def change_elsewhere(path: Path, old: str, new: str) -> None:
    """Another program's change: new content, and an mtime that surely differs."""
    path.write_text(path.read_text().replace(old, new))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_a_small_change_to_a_file_held_whole_comes_back_as_its_diff(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text(module())
    first = read(core, "app.py")
    change_elsewhere(path, "respond(request, 7)", "respond(request, 70)")
    delta = read(core, "app.py")
    assert delta["type"] == "file_changed"
    diff = delta["file"]["diff"]
    assert "-    return respond(request, 7)" in diff
    assert "+    return respond(request, 70)" in diff
    assert delta["file"]["total_lines"] == 300
    assert delta["file"]["tokens"] * 4 < first["file"]["tokens"]
    # The agent now holds the new content: the next re-read is a stub.
    assert read(core, "app.py")["type"] == "file_unchanged"


def test_a_large_change_sends_the_file(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "app.py"
    path.write_text(module())
    read(core, "app.py")
    change_elsewhere(path, "request", "req")
    again = read(core, "app.py")
    assert again["type"] == "text"
    assert "return respond(req, 7)" in again["file"]["content"]


def test_force_a_range_or_a_partial_view_never_get_a_diff(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"default_limit": 100})
    path = workspace / "app.py"
    path.write_text(module())
    read(core, "app.py")  # cut at 100 lines: the agent does not hold it whole
    change_elsewhere(path, "respond(request, 7)", "respond(request, 70)")
    assert read(core, "app.py")["type"] == "text"
    small = workspace / "small.py"
    small.write_text(module(100))
    read(core, "small.py")
    change_elsewhere(small, "respond(request, 7)", "respond(request, 70)")
    assert read(core, "small.py", force=True)["type"] == "text"
    change_elsewhere(small, "respond(request, 9)", "respond(request, 90)")
    assert read(core, "small.py", offset=1, limit=100)["type"] == "text"


def test_after_its_own_edit_the_agent_gets_a_stub_then_only_what_others_changed(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text(module())
    read(core, "app.py")
    core.edit(EditParams(file_path="app.py", old_string="respond(request, 3)", new_string="ok()"))
    assert read(core, "app.py")["type"] == "file_unchanged"  # it made that content itself
    change_elsewhere(path, "respond(request, 11)", "respond(request, 12)")
    delta = read(core, "app.py")
    assert delta["type"] == "file_changed"
    assert "+    return respond(request, 12)" in delta["file"]["diff"]
    assert "ok()" not in delta["file"]["diff"]  # its own edit is not sent back


def test_after_a_write_a_reread_is_a_stub(core: Readkeeper, workspace: Path) -> None:
    created = core.write(WriteParams(file_path="new.py", content=module(40)))
    assert created.read_state.next_read == "stub"
    assert read(core, "new.py")["type"] == "file_unchanged"
    again = core.write(WriteParams(file_path="new.py", content=module(60)))
    assert again.read_state.next_read == "stub"
    assert read(core, "new.py")["type"] == "file_unchanged"


def test_an_edit_after_a_partial_read_leaves_nothing_held_whole(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"default_limit": 100})
    path = workspace / "app.py"
    path.write_text(module())
    read(core, "app.py")
    core.edit(EditParams(file_path="app.py", old_string="respond(request, 3)", new_string="ok()"))
    assert read(core, "app.py")["type"] == "text"


def test_an_edit_merged_over_another_change_leaves_nothing_held_whole(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text(module())
    read(core, "app.py")
    change_elsewhere(path, "respond(request, 140)", "respond(request, 141)")
    result = core.edit(
        EditParams(file_path="app.py", old_string="respond(request, 3)", new_string="ok()")
    )
    assert result.merged is True
    assert read(core, "app.py")["type"] == "text"


async def test_a_delta_reread_through_the_server(lsp: Session, workspace: Path) -> None:
    path = workspace / "app.py"
    path.write_text(module())
    await lsp.read(path)
    change_elsewhere(path, "respond(request, 7)", "respond(request, 70)")
    delta = await lsp.read(path)
    assert delta["type"] == "file_changed"
    assert "+    return respond(request, 70)" in delta["file"]["diff"]


def apply_unified_diff(held: str, diff: str) -> str:
    """`diff` applied to `held` as `patch` would, checking every context and removed line
    against it: what the agent makes of a `file_changed` answer."""
    old = held.split("\n")
    out: list[str] = []
    at = 0  # lines of `old` consumed
    for line in diff.split("\n"):
        hunk = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", line)
        if hunk:
            start = int(hunk[1]) - (0 if hunk[2] == "0" else 1)
            assert start >= at, "hunks out of order"
            out += old[at:start]
            at = start
        elif line.startswith(("---", "+++")) or not line:
            continue
        elif line[0] == "+":
            out.append(line[1:])
        elif line[0] in " -":
            assert old[at] == line[1:], f"line {at + 1} is not {line[1:]!r}"
            if line[0] == " ":
                out.append(old[at])
            at += 1
    return "\n".join(out + old[at:])


def test_each_session_gets_the_diff_from_the_version_it_holds(
    core: Readkeeper, workspace: Path
) -> None:
    # The snapshots are shared by every session, keyed by content: a session's delta
    # starts from what that session holds, never from what another read later.
    path = workspace / "app.py"
    path.write_text(module())
    v1 = path.read_text()
    assert read(core, "app.py", session="a")["type"] == "text"
    change_elsewhere(path, "respond(request, 7)", "respond(request, 70)")
    v2 = path.read_text()
    assert read(core, "app.py", session="b")["type"] == "text"
    change_elsewhere(path, "respond(request, 120)", "respond(request, 1200)")
    v3 = path.read_text()
    a = read(core, "app.py", session="a")
    assert a["type"] == "file_changed"
    assert "+    return respond(request, 70)" in a["file"]["diff"]
    assert apply_unified_diff(v1, a["file"]["diff"]) == v3
    b = read(core, "app.py", session="b")
    assert b["type"] == "file_changed"
    assert "respond(request, 70)" not in b["file"]["diff"]
    assert apply_unified_diff(v2, b["file"]["diff"]) == v3
    assert read(core, "app.py", session="a")["type"] == "file_unchanged"


def test_a_diff_counted_over_its_budget_sends_the_file(workspace: Path) -> None:
    # The diff's size is estimated while it is made, then counted: CJK text counts about
    # twice its estimate, so a diff that seemed to fit is sent as the file after all.
    cjk = "".join(chr(0x4E00 + i) for i in range(120))
    path = workspace / "app.py"
    for percent, answer in ((8, "text"), (20, "file_changed")):
        core = Readkeeper(roots=[str(workspace)], client_settings={"delta_max_percent": percent})
        core.tokens.warm_up()
        path.write_text(module())
        read(core, "app.py")
        change_elsewhere(path, "respond(request, 7)", f"respond(request, '{cjk}')")
        again = read(core, "app.py")
        assert again["type"] == answer, percent


def test_the_diff_of_a_file_held_empty_counts_its_last_line(workspace: Path) -> None:
    # Any diff is cheap enough: its headers name the path, as long as the temp folder's.
    core = Readkeeper(roots=[str(workspace)], client_settings={"delta_max_percent": 100_000})
    path = workspace / "e.txt"
    path.write_text("")
    assert read(core, "e.txt")["type"] == "text"
    change_elsewhere(path, "", "a\nb\nc")  # no line break after the last line
    changed = read(core, "e.txt")
    assert changed["type"] == "file_changed"
    assert changed["file"]["total_lines"] == 3
    assert "(3 lines)" in changed["file"]["note"]
