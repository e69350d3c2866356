"""Every cut note says what the agent holds and what was cut, counted from the real file,
and which cap cut it (the memory-file cap, a type's token cap, the turn's budget).

A CLAUDE.md whose first line is 4,096 bytes (2,047 "é" and a "Z") before 400 more lines
was attached as "none of its 1 line fit": the note counted the attachment's one line,
not the file's 401, and the memory-file cap's cut at 4,096 bytes was gone."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import Session
from readkeeper.core import Readkeeper
from readkeeper.protocol import AttachmentsParams

LONG_FIRST_LINE = ("é" * 2047 + "Z\n").encode() + b"".join(b"m%d\r\n" % i for i in range(400))


def _memory_note(result: dict[str, object], name: str) -> str:
    [item] = [a for a in result["attachments"] if a["source"].endswith(name)]  # type: ignore[attr-defined, index]
    content: str = item["content"]
    return content.rsplit("\n", 1)[-1]


def test_a_memory_cut_counts_the_files_lines_and_names_the_byte_cap(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "CLAUDE.md").write_bytes(LONG_FIRST_LINE)
    note = _memory_note(core.attachments(AttachmentsParams(types=["memory"])), "CLAUDE.md")
    assert "401 lines" in note, note
    assert "1 line fit" not in note, note
    assert "1 line)" not in note, note
    assert "4,096 bytes" in note, note  # the memory-file cap, which cut it first
    assert '"offset": 1}' in note, note  # none of line 1 is held


def test_a_memory_file_cut_inside_its_first_line_names_that_line_again(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "QWEN.md").write_text("€" * 2000 + "\nsecond\n", encoding="utf-8")
    note = _memory_note(core.attachments(AttachmentsParams(types=["memory"])), "QWEN.md")
    assert "2 lines" in note, note
    assert "4,096 bytes" in note, note
    # Line 1 was shown only in part: the rest starts inside it, never at line 2.
    assert '"offset": 1}' in note, note
    assert "\ufffd" not in str(core.attachments(AttachmentsParams(types=["memory"])))


def test_a_memory_file_cut_by_the_line_cap_says_both(core: Readkeeper, workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("".join(f"r{i}\n" for i in range(300)))
    note = _memory_note(core.attachments(AttachmentsParams(types=["memory"])), "AGENTS.md")
    assert "200 of the file's 300 lines" in note, note
    assert "200 lines / 4,096 bytes" in note, note
    assert '"offset": 201}' in note, note


def test_a_mention_cut_at_its_type_cap_names_that_cap_not_the_budget(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "m.txt").write_text("".join(f"line {i} " + "x" * 200 + "\n" for i in range(400)))
    result = core.attachments(
        AttachmentsParams(types=["file"], mentions=["m.txt"], budget_tokens=60_000)
    )
    [item] = result["attachments"]
    note = item["content"].rsplit("\n", 1)[-1]
    assert "8,192-token cap" in note, note
    assert "budget" not in note, note
    last = int(re.findall(r"^\s*(\d+)\t", item["content"], re.M)[-1])
    assert f'"offset": {last + 1}' in note, note
    assert "of the file's 400" in note, note


def test_a_mentioned_file_over_the_whole_read_cap_is_cut_not_dropped(
    core: Readkeeper, workspace: Path
) -> None:
    lines = (f"event {i} " + "y" * 90 + "\n" for i in range(4000))
    (workspace / "big.log").write_text("".join(lines))
    result = core.attachments(
        AttachmentsParams(types=["file"], mentions=["big.log"], budget_tokens=6_000)
    )
    assert result["dropped"] == []
    [item] = result["attachments"]
    assert item["truncated"] is True
    assert item["content"].startswith("     1\tevent 0 ")
    note = item["content"].rsplit("\n", 1)[-1]
    last = int(re.findall(r"^\s*(\d+)\t", item["content"], re.M)[-1])
    assert f'"offset": {last + 1}' in note, note


async def test_over_lsp_the_memory_note_counts_the_file(lsp: Session, workspace: Path) -> None:
    (workspace / "CLAUDE.md").write_bytes(LONG_FIRST_LINE)
    result = await lsp.client.request("readkeeper/attachments", {"types": ["memory"]})
    note = _memory_note(result, "CLAUDE.md")
    assert "401 lines" in note, note
    assert "4,096 bytes" in note, note


def test_a_cut_diff_names_its_cap_and_counts_the_lines_left_out() -> None:
    from readkeeper.read.diffs import bounded_diff

    before = "".join(f"line {i}\n" for i in range(400))
    after = "".join(f"LINE {i}\n" if i % 3 == 0 else f"line {i}\n" for i in range(400))
    whole, cut = bounded_diff(before, after, "/w/f.txt", max_tokens=10**6)
    assert not cut
    shown, cut = bounded_diff(before, after, "/w/f.txt", max_tokens=300)
    assert cut
    *lines, note = shown.split("\n")
    assert whole.split("\n")[: len(lines)] == lines
    left = len(whole.split("\n")) - len(lines)
    assert note.startswith(f"... diff cut at its 300-token cap: {left:,} more diff lines"), note


def test_a_cut_that_keeps_every_numbered_line_but_the_reads_note_names_the_next_line() -> None:
    """The read's own note after the numbered lines is no line of the file: a cut that
    drops only it still names the line after the last numbered one."""
    from readkeeper.attachments import budget, cut_notes
    from readkeeper.attachments.model import USER, Attachment
    from readkeeper.read.tokens import TokenCounter

    counter = TokenCounter()
    numbered = [f"{i:>6}\tline {i}" for i in range(1, 41)]
    own = "[Showing lines 1-40 of 90 (the 25,000-token cap). Continue with offset=41.]"

    def item() -> Attachment:
        return Attachment(
            "file",
            "\n".join([*numbered, own]),
            USER,
            10**6,
            "/w/f.txt",
            file_path="/w/f.txt",
            protected=True,
            cut_note=cut_notes.file_lines("/w/f.txt", 1, 90),
        )

    probe = item()
    lines = probe.content.split("\n")
    widest = counter.count(budget._note(probe, len(lines), lines))
    limit = counter.count("\n".join(numbered)) + widest + 3  # not the read's note (20+)
    cut = item()
    assert budget.truncate(cut, limit, counter)
    note = cut.content.rsplit("\n", 1)[-1]
    assert "showing lines 1-40 of the file's 90" in note, note
    assert '"offset": 41}' in note, note


def test_a_change_notice_cut_by_the_budget_counts_the_files_lines(workspace: Path) -> None:
    from helpers import wait_until
    from readkeeper.protocol import ReadParams

    core = Readkeeper(roots=[str(workspace)])
    pushed: list[str] = []
    core.notices.on_notice = lambda session, changes: pushed.extend(c.file_path for c in changes)
    core.start_watching(lambda message: None, lambda stage, message: None)
    try:
        path = workspace / "data.txt"
        path.write_text("".join(f"value {i}\n" for i in range(400)))
        core.read(ReadParams(file_path=str(path), session="agent"))
        wait_until(lambda: core.watcher_status()["state"] != "starting", "the watcher to start")
        path.write_text("".join(f"value {i * 7 if i % 4 == 0 else i}\n" for i in range(400)))
        wait_until(lambda: str(path) in pushed, "the watcher to see the change")
        result = core.attachments(
            AttachmentsParams(session="agent", types=["changes"], budget_tokens=400)
        )
        [notice] = [a for a in result["attachments"] if a["type"] == "changes"]
        assert notice["truncated"] is True
        note = notice["content"].rsplit("\n", 1)[-1]
        assert "of the file's 400 lines" in note, note
        assert '"force": true' in note, note
    finally:
        core.close()
