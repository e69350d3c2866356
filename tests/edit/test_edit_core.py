"""readkeeper's edits and writes, in-process: the rules of edit/ (edits.py) on real files."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from helpers import NOBODY, rewrite_before_every_swap, run_as_nobody
from readkeeper.core import Buffer, Readkeeper
from readkeeper.edit.buffers import lsp_position
from readkeeper.edit.commit import COMMIT_ATTEMPTS
from readkeeper.edit.matching import Normalized
from readkeeper.edit.merge import disjoint_hits
from readkeeper.edit.services import TextChange, Unapplied
from readkeeper.edit.snippets import numbered_snippet
from readkeeper.errors import ReadkeeperError
from readkeeper.files import atomic, leases
from readkeeper.protocol import (
    EditParams,
    EditResult,
    ForgetParams,
    ReadParams,
    StatsParams,
    WriteParams,
    unstructure,
)
from readkeeper.read.diffs import Budget, bounded_diff, common_ends
from readkeeper.state.snapshots import Snapshots

# --- helpers ---------------------------------------------------------------------------------


def read(core: Readkeeper, path: Path | str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = unstructure(core.read(ReadParams(str(path), **params)))
    return result


def edit(core: Readkeeper, path: Path | str, old: str, new: str, **params: Any) -> EditResult:
    return core.edit(EditParams(str(path), old, new, **params))


def refused(call: Any, *args: Any, **kwargs: Any) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        call(*args, **kwargs)
    return caught.value


def later(path: Path, data: bytes) -> None:
    """Write `data` as another program would, with an mtime that surely differs."""
    path.write_bytes(data)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


class FakeEditor:
    """An editor with open documents that applies edits like VS Code (versioned)."""

    def __init__(self) -> None:
        self.docs: dict[str, Buffer] = {}
        self.calls: list[tuple[str, int | None, list[TextChange]]] = []

    def get(self, real_path: str) -> Buffer | None:
        return self.docs.get(real_path)

    def apply_edits(
        self,
        real_path: str,
        version: int | None,
        text: str,
        changes: Sequence[TextChange],
        timeout: float,
    ) -> Unapplied | None:
        self.calls.append((real_path, version, list(changes)))
        doc = self.docs[real_path]
        if doc.version != version or doc.text != text:
            return Unapplied("refused", said="the document changed")
        for change in reversed(changes):
            text = text[: change.start] + change.text + text[change.end :]
        self.docs[real_path] = Buffer(text, (version or 0) + 1)
        return None


class ReadOnlyEditor:
    """An editor front end that cannot change buffers."""

    def __init__(self, docs: dict[str, Buffer]) -> None:
        self.docs = docs

    def get(self, real_path: str) -> Buffer | None:
        return self.docs.get(real_path)


# --- edits ----------------------------------------------------------------------------------


def test_edit_replaces_once_and_reports_a_numbered_snippet(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    read(core, path)
    result = edit(core, path, "    return 2\n", "    return 3\n")
    assert path.read_text() == "def f():\n    return 1\n\n\ndef g():\n    return 3\n"
    assert result.replacements == 1
    assert result.lines == [6]
    assert result.start_line == 3
    assert result.snippet == "     3\t\n     4\t\n     5\tdef g():\n     6\t    return 3"
    assert result.applied_to == "disk"
    assert result.merged is False
    assert result.file_path == str(path)


def test_the_snippet_shows_every_line_an_edit_inserted(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 21)))
    read(core, path)
    inserted = [f"new {letter}" for letter in "abcdef"]
    result = edit(core, path, "line 10\n", "".join(f"{line}\n" for line in inserted))
    # Three lines of context, all six new lines (10-15), three lines of context.
    shown = ["line 7", "line 8", "line 9", *inserted, "line 11", "line 12", "line 13"]
    assert result.start_line == 7
    assert result.snippet == "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(shown, 7))


def test_replace_all_changes_every_match(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("x = 1\ny = x\nz = x + x\n")
    read(core, path)
    result = edit(core, path, "x", "value", replace_all=True)
    assert path.read_text() == "value = 1\ny = value\nz = value + value\n"
    assert result.replacements == 4
    assert result.lines == [1, 2, 3, 3]


def test_a_deletion_at_the_end_of_a_line_is_reported_on_that_line(
    core: Readkeeper, workspace: Path
) -> None:
    # Each change's line is where its new text starts: for a deletion, right before the
    # line break it leaves in place.
    path = workspace / "a.txt"
    path.write_text("ab;\nab;\nend\n")
    read(core, path)
    result = edit(core, path, ";", "", replace_all=True)
    assert path.read_text() == "ab\nab\nend\n"
    assert result.lines == [1, 2]
    assert (result.start_line, result.snippet) == (1, "     1\tab\n     2\tab\n     3\tend")


def test_after_an_edit_the_next_read_is_a_stub_only_if_the_file_was_held_whole(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    read(core, path, offset=2, limit=3)
    assert edit(core, path, "line 3\n", "line three\n").read_state.next_read == "full"
    read(core, path)
    assert edit(core, path, "line 4\n", "line four\n").read_state.next_read == "stub"
    assert read(core, path)["type"] == "file_unchanged"


def test_replace_all_shows_the_snippet_of_the_first_change(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.txt"
    path.write_text("one\nfoo\n" + "pad\n" * 30 + "foo\nend\n")
    read(core, path)
    result = edit(core, path, "foo", "bar", replace_all=True)
    assert result.lines == [2, 33]
    assert result.start_line == 1
    assert result.snippet.startswith("     1\tone\n     2\tbar\n")
    assert "    33\t" not in result.snippet


def test_an_edit_right_after_a_read_of_a_legacy_encoding_is_not_a_merge(
    core: Readkeeper, workspace: Path
) -> None:
    # The read recorded the digest of the bytes; the edit must recognise them as the
    # same content, not as a change someone else made meanwhile.
    path = workspace / "a.txt"
    path.write_bytes("caf\xe9 au lait\nna\xefve\n".encode("cp1252"))
    read(core, path)
    result = edit(core, path, "lait", "miel")
    assert (result.merged, result.external_change, result.note) == (False, None, None)
    assert path.read_bytes() == "caf\xe9 au miel\nna\xefve\n".encode("cp1252")


def test_no_change_says_whether_the_strings_are_identical_or_differ_in_line_endings(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.txt"
    path.write_text("same\n")
    read(core, path)
    assert "are identical" in refused(edit, core, path, "same", "same").message
    assert "are the same text" in refused(edit, core, path, "same\r\n", "same\n").message


def test_a_write_to_disk_carries_no_note(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("old\n")
    read(core, path)
    result = core.write(WriteParams(str(path), "new\n"))
    assert (result.applied_to, result.changed, result.note) == ("disk", True, None)


def test_the_read_state_an_edit_or_write_returns_is_the_file_as_written(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.txt"
    path.write_text("one\ntwo\n")
    read(core, path)
    for change in (
        lambda: edit(core, path, "two", "three"),
        lambda: core.write(WriteParams(str(path), "one\ntwo\nthree\nfour\n")),
    ):
        result = change()
        st = path.stat()
        state = result.read_state
        assert (state.source, state.size, state.mtime_ns) == ("disk", st.st_size, st.st_mtime_ns)
        assert state.total_lines == len(path.read_text().splitlines())


def test_edit_needs_a_read_in_the_same_session(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("hello\n")
    error = refused(edit, core, path, "hello", "bye")
    assert error.kind == "not_read"
    assert "Read it" in error.message
    read(core, path, session="other")
    assert refused(edit, core, path, "hello", "bye").kind == "not_read"
    edit(core, path, "hello", "bye", session="other")
    assert path.read_text() == "bye\n"


def test_a_partial_read_is_enough_to_edit(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 101)))
    read(core, path, offset=50, limit=5)
    edit(core, path, "line 52\n", "line fifty-two\n")
    assert "line fifty-two\nline 53\n" in path.read_text()


def test_forget_drops_the_right_to_edit(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("hello\n")
    read(core, path)
    core.forget(ForgetParams(paths=[str(path)]))
    assert refused(edit, core, path, "hello", "bye").kind == "not_read"


def test_no_match_points_at_the_closest_lines(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("import os\n\ndef main():\n\tprint(os.getcwd())\n\treturn 0\n")
    read(core, path)
    # Spaces for tabs alone are forgiven (test_forgiving.py); a word differs here too.
    error = refused(edit, core, path, "def main():\n    print(os.getcwdb())", "x")
    assert error.kind == "no_match"
    assert error.message.startswith(f"old_string was not found in {path}. The closest text is")
    assert error.data["closest_lines"] == [3, 4]
    assert "     3\tdef main():" in error.message
    lines = {"file_path": str(path), "offset": 3, "limit": 2}
    assert error.message.endswith(f"read those lines again: readkeeper/read {json.dumps(lines)}).")
    assert path.read_text().startswith("import os")  # untouched


def test_copied_line_numbers_are_forgiven_when_they_name_the_lines(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("a = 1\nb = 2\nc = 3\n")
    read(core, path)
    result = edit(core, path, "     2\tb = 2\n     3\tc = 3", "b = 20\nc = 30")
    assert "line-number prefixes" in result.note
    assert path.read_text() == "a = 1\nb = 20\nc = 30\n"


def test_no_match_says_when_line_numbers_were_copied(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("a = 1\nb = 2\nc = 3\n")
    read(core, path)
    # Numbers that do not name the lines where the text is: refused, and said.
    error = refused(edit, core, path, "     5\tb = 2\n     6\tc = 3", "b = 20\nc = 30")
    assert error.kind == "no_match"
    assert error.data["line_number_prefixes"] is True
    assert "matches once, at line 2" in error.message


def test_no_match_with_nothing_close(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("alpha\nbeta\n")
    read(core, path)
    error = refused(edit, core, path, "zzzzzzzzzzzzqqqqqqqq", "x")
    assert error.kind == "no_match"
    assert "nothing in it comes close" in error.message


def test_ambiguous_match_names_the_lines(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("x = 1\nfoo\ny = 2\nfoo\nfoo\n")
    read(core, path)
    error = refused(edit, core, path, "foo", "bar")
    assert error.kind == "ambiguous_match"
    assert error.message.startswith(
        f"old_string matches 3 places in {path} (starting on lines 2, 4, 5)."
    )
    assert error.data["lines"] == [2, 4, 5]
    every = {"file_path": str(path), "old_string": "foo", "new_string": "bar", "replace_all": True}
    assert error.message.endswith(f"or change every one: readkeeper/edit {json.dumps(every)}.")


def test_ambiguous_match_lines_count_a_blank_first_line(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("\nfoo\nfoo\n")
    read(core, path)
    error = refused(edit, core, path, "foo", "bar")
    assert error.data["lines"] == [2, 3]
    assert "starting on lines 2, 3" in error.message


def test_ambiguous_match_lists_twenty_lines_and_counts_the_rest(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.txt"
    path.write_text("foo\n" * 23)
    read(core, path)
    error = refused(edit, core, path, "foo", "bar")
    assert error.data["lines"] == list(range(1, 24))
    listed = ", ".join(str(n) for n in range(1, 21))
    assert f"(starting on lines {listed} and 3 more)" in error.message
    # Exactly as many as are listed: all named, none "more".
    path.write_text("foo\n" * 20)
    read(core, path)
    error = refused(edit, core, path, "foo", "bar")
    assert f"(starting on lines {listed})." in error.message


def test_a_deletion_inside_the_edited_lines_is_named_by_its_line() -> None:
    # Someone deleted "X" from between the two lines old_string now spans: the edit
    # is not merged, and the refusal names the line the deletion was at.
    snapshot = "a\nX\nb\na\nb\nz\n"
    current = Normalized("a\nb\na\nY\nz\n")
    why = disjoint_hits(snapshot, current, "a\nb", False, leased=True)
    assert why == "the change touches lines 2-2, which the edit spans (lines 1-2)"
    # The same further down: the line named is the deletion's own, wherever it is.
    current = Normalized("q\nr\na\nb\na\nY\nz\n")
    why = disjoint_hits("q\nr\na\nX\nb\na\nb\nz\n", current, "a\nb", False, leased=True)
    assert why == "the change touches lines 4-4, which the edit spans (lines 3-4)"


def test_a_change_of_several_edited_lines_is_named_by_all_its_lines() -> None:
    # "a" then "a\nb" read; now "a\nb" starts the file and two new lines follow its "a":
    # the refusal names both changed lines, not only the first.
    current = Normalized("a\nb\nc\na\n")
    why = disjoint_hits("a\na\nb\n", current, "a\nb", False, leased=True)
    assert why == "the change touches lines 2-3, which the edit spans (lines 1-2)"


def test_a_deletion_just_above_the_edited_line_still_merges() -> None:
    snapshot = "q\nDEL\nfoo\nz\n"
    current = Normalized("q\nfoo\nz\n")
    assert disjoint_hits(snapshot, current, "foo", False, leased=True) == [2]


def test_a_match_on_the_line_after_a_leading_empty_line_merges_at_its_column() -> None:
    # The text starts with a line break, the only one before the match: the match's
    # column is counted from just after it, in what was read and in the file now alike.
    snapshot = "\nfoo = 1\nbar\n"
    current = Normalized("x\n\nfoo = 1\nbar\n")
    assert disjoint_hits(snapshot, current, "foo", False, leased=True) == [3]
    # The same match moved one column right is not where it was.
    moved = Normalized("x\n\n foo = 1\nbar\n")
    why = disjoint_hits(snapshot, moved, "foo", False, leased=True)
    assert isinstance(why, str)


def test_a_match_that_was_in_two_places_is_not_merged_without_replace_all() -> None:
    # The other change removed one of the two places old_string matched: which one the
    # agent meant is not known, so it is refused as ambiguous.
    snapshot = "foo\nbar\nfoo\n"
    current = Normalized("foo\nbar\nbaz\n")
    why = disjoint_hits(snapshot, current, "foo", False, leased=True)
    assert why == "old_string matches more than one place"


def test_no_change_and_bad_params(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("same\r\n")
    read(core, path)
    assert refused(edit, core, path, "same", "same").kind == "no_change"
    # Differing only in line endings is no change either: endings follow the file.
    assert refused(edit, core, path, "same\r\n", "same\n").kind == "no_change"
    error = refused(edit, core, path, "", "text")
    assert (error.kind, error.data["field"]) == ("bad_params", "old_string")
    assert "readkeeper/write" in error.message
    assert refused(edit, core, "", "a", "b").kind == "bad_params"
    assert refused(edit, core, "a\x00b", "a", "b").kind == "bad_params"


def test_not_found_is_directory_binary_too_large(core: Readkeeper, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("x\n")
    error = refused(edit, core, workspace / "note.txt", "x", "y")
    assert error.kind == "not_found"
    assert str(workspace / "notes.txt") in error.data["suggestions"]

    (workspace / "folder").mkdir()
    read(core, workspace / "notes.txt")
    error = refused(core.write, WriteParams(str(workspace / "folder"), "x"))
    assert error.kind == "is_directory"
    assert f"Give the path of a file (e.g. {workspace / 'folder' / 'name.txt'})" in error.message
    error = refused(edit, core, workspace / "folder", "x", "y")
    assert error.kind == "is_directory"
    assert f"Give the path of a file (e.g. {workspace / 'folder' / 'name.txt'})" in error.message

    blob = workspace / "blob.bin"
    blob.write_bytes(b"abc\n")
    read(core, blob)
    later(blob, b"\x00\x01\x02abc\n")
    assert refused(edit, core, blob, "abc", "xyz").kind == "binary"

    big = workspace / "big.txt"
    big.write_text("x\n" * 10)
    read(core, big)
    core.configure({"max_size_bytes": 8})
    error = refused(edit, core, big, "x", "y", replace_all=True)
    assert error.kind == "too_large"
    assert error.data["max_size_bytes"] == 8


def test_outside_workspace_even_through_a_symlink(
    core: Readkeeper, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    link = workspace / "link.txt"
    link.symlink_to(outside)
    for call in (
        lambda: edit(core, outside, "secret", "x"),
        lambda: edit(core, link, "secret", "x"),
        lambda: core.write(WriteParams(str(tmp_path / "new.txt"), "x")),
        lambda: core.write(WriteParams("../escape.txt", "x")),
    ):
        error = refused(call)
        assert error.kind == "outside_workspace"
        assert "allowed_paths" in error.message
    assert outside.read_text() == "secret\n"
    assert not (tmp_path / "new.txt").exists()
    # allowed_paths lets edits and writes in.
    core.configure({"allowed_paths": [str(tmp_path)]})
    core.write(WriteParams(str(tmp_path / "new.txt"), "x\n"))
    assert (tmp_path / "new.txt").read_text() == "x\n"


def test_a_file_that_does_not_decode_exactly_is_never_edited(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "jp.txt"
    # NEC's 0x8790 decodes to U+2252, which cp932 encodes back as 0x81E0: not exact.
    text = "これは日本語のテキストです。文字化けしないように注意してください。\n" * 5
    data = text.encode("cp932") + b"\x87\x90\n"
    path.write_bytes(data)
    read(core, path)
    error = refused(edit, core, path, "テキスト", "文章", replace_all=True)
    assert error.kind == "unsupported"
    assert "not back to the same bytes" in error.message
    assert path.read_bytes() == data


def test_new_text_the_encoding_cannot_hold_is_refused(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "latin.txt"
    data = "Grüße aus Köln, schön.\n".encode("latin-1") * 20
    path.write_bytes(data)
    read(core, path)
    error = refused(edit, core, path, "schön.\n", "schön →\n", replace_all=True)
    assert error.kind == "unsupported"
    assert "U+2192" in error.message
    assert path.read_bytes() == data


# --- staleness -------------------------------------------------------------------------------


def test_touch_and_identical_rewrite_are_not_changes(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("one\ntwo\n")
    read(core, path)
    later(path, b"one\ntwo\n")  # same bytes, new mtime (a save of identical content)
    os.utime(path, ns=(0, 0))  # a touch to a time far away (2-second-mtime mounts too)
    edit(core, path, "two", "2")
    assert path.read_text() == "one\n2\n"


def test_a_same_length_rewrite_that_puts_the_mtime_back_is_a_change(
    core: Readkeeper, workspace: Path
) -> None:
    # `touch -r`, `rsync -t`, a formatter that keeps timestamps: size and mtime as they
    # were, the bytes not. Only the digest says "changed" (DESIGN.md), so the edit of the
    # changed line is stale, and the edit of another line is merged and says so.
    path = workspace / "a.txt"
    path.write_text("one\ntwo\nthree\nfour\nfive\n")
    read(core, path)
    st = path.stat()
    path.write_text("one\nTWO\nthree\nfour\nfive\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    error = refused(edit, core, path, "two", "2")
    assert error.kind == "stale"
    assert "\n-two\n" in error.data["diff"]
    assert "\n+TWO\n" in error.data["diff"]
    assert (error.data["file_path"], error.data["read_source"]) == (str(path), "disk")
    # What happened, why it was not merged, and the next call that works.
    assert error.message.startswith(f"{path} changed since this session read it, so the edit ")
    assert "The edit was not merged: old_string is no longer in the file." in error.message
    assert "Read it again, then redo the edit on what it says now." in error.message
    assert path.read_text() == "one\nTWO\nthree\nfour\nfive\n"
    merged = edit(core, path, "five", "5")
    assert merged.merged is True
    assert merged.note is not None
    assert "had changed since you read it" in merged.note
    assert merged.external_change is not None
    assert "+TWO" in merged.external_change.diff
    assert path.read_text() == "one\nTWO\nthree\nfour\n5\n"


def test_formatter_rewrite_is_caught_with_a_diff(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("x=1\ny=2\nz=3\n")
    read(core, path)
    later(path, b"x = 1\ny = 2\nz = 3\n")
    error = refused(edit, core, path, "y=2", "y=20")
    assert error.kind == "stale"
    assert "\n-y=2\n" in error.data["diff"]
    assert "\n+y = 2\n" in error.data["diff"]
    assert error.data["diff_truncated"] is False
    assert "Read it again" in error.message
    assert path.read_text() == "x = 1\ny = 2\nz = 3\n"
    stats = core.stats_for(StatsParams(""))["session"]
    assert stats["stale_edits_caught"] == 1
    assert stats["errors"] == {"stale": 1}


def test_a_disjoint_change_is_merged_and_reported(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    lines = [f"line {i}\n" for i in range(1, 21)]
    path.write_text("".join(lines))
    read(core, path)
    lines[1] = "line two, changed by someone else\n"
    later(path, "".join(lines).encode())
    result = edit(core, path, "line 15\n", "line fifteen\n")
    lines[14] = "line fifteen\n"
    assert path.read_text() == "".join(lines)
    assert result.merged is True
    assert result.external_change is not None
    assert "+line two, changed by someone else" in result.external_change.diff
    assert result.external_change.lines == [2, 2]
    assert result.note is not None
    assert "had changed since you read it" in result.note
    assert core.stats_for(StatsParams(""))["session"]["disjoint_merges"] == 1


def test_an_overlapping_change_is_refused(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("a\nx = call(1)\nb\n")
    read(core, path)
    later(path, b"a\nx = call(2)\nb\n")
    # old_string still matches, but its line changed: not provably disjoint.
    error = refused(edit, core, path, "x = call", "x = invoke")
    assert error.kind == "stale"
    assert "touches lines 2-2, which the edit spans (lines 2-2)" in error.message
    assert path.read_text() == "a\nx = call(2)\nb\n"
    # The same goes for an edit that ends on the changed line.
    error = refused(edit, core, path, "a\nx = ", "A\nx = ")
    assert "touches lines 2-2" in error.message


def test_a_change_that_moves_matches_is_refused(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("keep\nfoo\nkeep\n")
    read(core, path)
    later(path, b"keep\nfoo\nkeep\nfoo\n")  # now ambiguous
    error = refused(edit, core, path, "foo", "bar")
    assert error.kind == "stale"
    assert "more than one place" in error.message


def test_replace_all_merges_over_a_disjoint_change(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.py"
    lines = [f"step({i})  # TODO\n" if i in (3, 9) else f"step({i})\n" for i in range(1, 13)]
    path.write_text("".join(lines))
    read(core, path)
    lines[5] = "step(6, fast=True)\n"  # someone else's change, between the two matches
    lines.insert(0, "import steps\n")  # and one above both: the matches move down a line
    later(path, "".join(lines).encode())
    result = edit(core, path, "# TODO", "# done", replace_all=True)
    assert result.merged is True
    assert result.replacements == 2
    assert result.lines == [4, 10]
    expected = "".join(lines).replace("# TODO", "# done")
    assert path.read_text() == expected
    assert result.external_change is not None
    assert "+step(6, fast=True)" in result.external_change.diff


def test_replace_all_is_not_merged_when_the_change_adds_a_match(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.py"
    before = "a  # TODO\nb\nc  # TODO\nd\n"
    path.write_text(before)
    read(core, path)
    after = before + "e  # TODO\n"
    later(path, after.encode())
    error = refused(edit, core, path, "# TODO", "# done", replace_all=True)
    assert error.kind == "stale"
    assert "made old_string match 3 places instead of 2" in error.message
    assert path.read_text() == after


def test_replace_all_is_not_merged_when_the_change_touches_one_match(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("a  # TODO\nb\nc  # TODO\nd\n")
    read(core, path)
    after = "a  # TODO\nb\nC  # TODO\nd\n"  # the second match's line changed
    later(path, after.encode())
    error = refused(edit, core, path, "# TODO", "# done", replace_all=True)
    assert error.kind == "stale"
    assert "touches lines 3-3, which the edit spans (lines 3-3)" in error.message
    assert path.read_text() == after


def test_without_a_lease_a_change_at_the_end_of_the_file_is_not_merged() -> None:
    # Without a read lease, a file still being written in place looks like a change that
    # reaches the end of the file: refused. With the lease, the same change merges.
    snapshot = "one\ntwo\nthree\n"
    current = Normalized("one\ntwo\nthree\nfour\n")
    assert disjoint_hits(snapshot, current, "one", False, leased=True) == [0]
    why = disjoint_hits(snapshot, current, "one", False, leased=False)
    assert why == "the change reaches the end of the file (it may still be being written)"
    # A change that stops short of the end merges either way.
    middle = Normalized("one\nTWO\nthree\n")
    assert disjoint_hits(snapshot, middle, "one", False, leased=False) == [0]


@pytest.mark.skipif(sys.platform != "linux", reason="leases are Linux's")
def test_where_leases_do_not_work_an_unfinished_looking_change_is_refused(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A filesystem where leases cannot be taken (as the probe finds on some network and
    # FUSE filesystems): the edit goes on unleased, more careful about merging.
    monkeypatch.setitem(leases._lease_works, workspace.stat().st_dev, False)
    path = workspace / "log.txt"
    path.write_text("header\nentry 1\n")
    read(core, path)
    later(path, b"header\nentry 1\nentry 2 (half writ")
    error = refused(edit, core, path, "header", "HEADER")
    assert error.kind == "stale"
    assert "it may still be being written" in error.message
    assert path.read_bytes() == b"header\nentry 1\nentry 2 (half writ"
    # A change that does not reach the end is merged, lease or not.
    path.write_text("header\nentry one\nlast\n")
    read(core, path, force=True)
    later(path, b"header\nentry 1\nlast\n")
    assert edit(core, path, "header", "HEADER").merged is True
    assert path.read_text() == "HEADER\nentry 1\nlast\n"


def _held_location(workspace: Path, path: Path) -> Any:
    from readkeeper.files.paths import Workspace

    roots = Workspace()
    roots.set_roots([str(workspace)])
    return roots.locate(str(path))


def test_a_file_deleted_while_held_is_not_brought_back(workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("old\n")
    with atomic.hold(_held_location(workspace, path)) as held:
        path.unlink()
        assert atomic.replace(held, b"new\n", b"old\n") is None  # the caller looks again
    assert sorted(p.name for p in workspace.iterdir()) == []  # no file, no temp file


def test_without_an_exchange_rename_a_file_replaced_meanwhile_is_kept(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A system without renameat2/renamex_np: the name is checked before the ordinary
    # rename, so another program's save since the read is never overwritten.
    monkeypatch.setattr(atomic, "_renameat2", None)
    monkeypatch.setattr(atomic, "_renameatx_np", None)
    path = workspace / "a.txt"
    path.write_text("old\n")
    with atomic.hold(_held_location(workspace, path)) as held:
        (workspace / "theirs.tmp").write_text("theirs\n")
        os.replace(workspace / "theirs.tmp", path)  # an editor's atomic save
        assert atomic.replace(held, b"new\n", b"old\n") is None
    assert path.read_text() == "theirs\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["a.txt"]


def test_without_a_lease_a_file_grown_in_place_meanwhile_is_not_replaced(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where leases do not work, an appender can write while the file is held: the
    # commit sees the file is no longer what was read, and keeps the appended line.
    monkeypatch.setitem(leases._lease_works, workspace.stat().st_dev, False)
    path = workspace / "log.txt"
    path.write_text("one\n")
    with atomic.hold(_held_location(workspace, path)) as held:
        assert held.leased is False
        with open(path, "a") as appender:
            appender.write("two\n")
        assert atomic.replace(held, b"ONE\n", b"one\n") is None
    assert path.read_text() == "one\ntwo\n"


@pytest.mark.skipif(sys.platform != "linux", reason="an exchange rename (renameat2)")
@pytest.mark.parametrize("meanwhile", ["nothing", "saved", "deleted"])
def test_undoing_a_swap_puts_back_the_newest_other_version(workspace: Path, meanwhile: str) -> None:
    # After our swap the name holds our new file and `tmp` the one we took out; when
    # the commit must be undone, theirs goes back under the name, or, if a third
    # program saved meanwhile, that newest version stays there; if the name was deleted
    # meanwhile (ours went with it), theirs comes back.
    name, tmp = workspace / "a.txt", workspace / ".a.txt.rk-tmp"
    name.write_text("ours\n")
    tmp.write_text("theirs\n")
    ours = (name.stat().st_dev, name.stat().st_ino)
    if meanwhile == "saved":
        (workspace / "third.tmp").write_text("third\n")
        os.replace(workspace / "third.tmp", name)
    elif meanwhile == "deleted":
        name.unlink()
    folder = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    try:
        atomic._undo_swap(folder, tmp.name, name.name, ours)
    finally:
        os.close(folder)
    assert name.read_text() == ("third\n" if meanwhile == "saved" else "theirs\n")


@pytest.mark.skipif(sys.platform != "linux", reason="renameat2 is Linux's")
def test_on_linux_creates_and_swaps_are_the_kernels_renames(workspace: Path) -> None:
    # The no-replace rename refuses an existing name (EEXIST, read through errno), and
    # the exchange swaps two names in one step: what creates and commits stand on.
    taken = workspace / "taken.txt"
    taken.write_text("theirs\n")
    assert atomic.create(_held_location(workspace, taken), b"ours\n") is None
    assert taken.read_text() == "theirs\n"
    (workspace / "b.txt").write_text("b\n")
    folder = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert atomic._swap(folder, "taken.txt", "b.txt") is True
    finally:
        os.close(folder)
    assert (taken.read_text(), (workspace / "b.txt").read_text()) == ("b\n", "theirs\n")
    assert sorted(p.name for p in workspace.iterdir()) == ["b.txt", "taken.txt"]


@pytest.mark.parametrize("hard_links", [True, False])
def test_without_a_no_replace_rename_a_create_never_replaces_a_file(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, hard_links: bool
) -> None:
    # A system without renameat2/renamex_np takes a hard link instead; a filesystem
    # without hard links either (vfat, some FUSE ones) answers link() with EPERM, and
    # then the name is checked just before an ordinary rename.
    monkeypatch.setattr(atomic, "_renameat2", None)
    monkeypatch.setattr(atomic, "_renameatx_np", None)
    if not hard_links:

        def no_links(*args: Any, **kwargs: Any) -> None:
            raise PermissionError(1, "Operation not permitted")

        monkeypatch.setattr(os, "link", no_links)
    taken, new = workspace / "taken.txt", workspace / "new.txt"
    taken.write_text("theirs\n")
    assert atomic.create(_held_location(workspace, taken), b"ours\n") is None
    assert taken.read_text() == "theirs\n"
    assert atomic.create(_held_location(workspace, new), b"ours\n") is not None
    assert new.read_text() == "ours\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["new.txt", "taken.txt"]


def test_a_held_file_moved_away_and_linked_back_under_its_name_is_not_replaced(
    workspace: Path,
) -> None:
    # Another program moves the file and puts a symlink to it under its name: the name
    # no longer holds the file that was read, so nothing is written, the link stays.
    path = workspace / "a.txt"
    path.write_text("one\n")
    with atomic.hold(_held_location(workspace, path)) as held:
        moved = workspace / "moved.txt"
        os.replace(path, moved)
        path.symlink_to(moved)
        assert atomic.replace(held, b"ONE\n", b"one\n") is None
    assert path.is_symlink()
    assert moved.read_text() == "one\n"


def test_a_create_that_links_its_temp_file_never_follows_a_link_planted_there(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where a create takes a hard link (no no-replace rename), another program that
    # swaps the temp file for a symlink to a file elsewhere must not make the new name
    # a second name of that file.
    monkeypatch.setattr(atomic, "_renameat2", None)
    monkeypatch.setattr(atomic, "_renameatx_np", None)
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("secret\n")
    write_temp = atomic._write_temp

    def planted(folder: int, *args: Any) -> Any:
        tmp, st, entry = write_temp(folder, *args)
        os.unlink(tmp, dir_fd=folder)
        os.symlink(elsewhere, tmp, dir_fd=folder)
        return tmp, st, entry

    monkeypatch.setattr(atomic, "_write_temp", planted)
    new = workspace / "new.txt"
    atomic.create(_held_location(workspace, new), b"ours\n")
    assert new.lstat().st_ino != elsewhere.stat().st_ino
    assert elsewhere.stat().st_nlink == 1


def test_a_temp_name_already_taken_is_passed_over_not_written(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another writer's temp file (a live one) holds the first name drawn: a new one
    # is drawn, and the other writer's bytes are left alone.
    drawn = iter(["0000beef", "0badf00d"])
    monkeypatch.setattr(atomic, "secrets", type("Drawn", (), {"token_hex": lambda n: next(drawn)}))
    theirs = workspace / ".a.txt.0000beef.rk-tmp"
    theirs.write_bytes(b"a write in progress")
    path = workspace / "a.txt"
    assert atomic.create(_held_location(workspace, path), b"ours\n") is not None
    assert path.read_bytes() == b"ours\n"
    assert theirs.read_bytes() == b"a write in progress"


def test_a_folder_where_no_probe_file_can_be_made_has_no_leases(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_in = leases.open_in

    def refusing(folder: int, name: str, *args: Any) -> int:
        if name.startswith(".rk-lease-probe."):
            raise PermissionError(13, "Permission denied", name)
        return open_in(folder, name, *args)

    monkeypatch.setattr(leases, "open_in", refusing)
    folder = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert leases._probe_leases(folder, str(workspace)) is False
    finally:
        os.close(folder)
    assert list(workspace.iterdir()) == []


def test_no_snapshot_means_stale_without_a_diff(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)])
    core.snapshots = Snapshots(max_entries=1)
    path, other = workspace / "a.txt", workspace / "b.txt"
    path.write_text("a\nb\n")
    other.write_text("other\n")
    read(core, path)
    read(core, other)  # evicts a.txt's snapshot
    later(path, b"A\nb\n")
    error = refused(edit, core, path, "b", "B")
    assert error.kind == "stale"
    assert "diff" not in error.data
    assert "no longer kept" in error.message


def test_a_deleted_file_is_stale_not_recreated(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("a\n")
    read(core, path)
    path.unlink()
    error = refused(edit, core, path, "a", "b")
    assert (error.kind, error.data["deleted"]) == ("stale", True)
    assert error.message.startswith(f"{path} was deleted or moved since this session read it.")
    assert error.data["file_path"] == str(path)
    assert not path.exists()


def test_an_edit_keeps_state_for_a_later_merge(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("a\nb\nc\nd\n")
    read(core, path)
    edit(core, path, "a\n", "A\n")
    later(path, b"A\nb\nc\nD\n")  # someone changes the last line after our edit
    result = edit(core, path, "b\n", "B\n")
    assert result.merged is True
    assert path.read_text() == "A\nB\nc\nD\n"


# --- bytes outside the edit ------------------------------------------------------------------


def test_lf_old_string_matches_crlf_and_inserts_crlf(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "win.txt"
    path.write_bytes(b"first\r\nsecond\r\nthird\r\n")
    read(core, path)
    result = edit(core, path, "second\nthird", "second\nnew line\nthird")
    assert path.read_bytes() == b"first\r\nsecond\r\nnew line\r\nthird\r\n"
    assert result.line_ending == "crlf"


def test_mixed_endings_outside_the_edit_stay(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "mixed.txt"
    data = b"a\r\nb\nc\r\nd\ne\r\n\tf  \r\n"
    path.write_bytes(data)
    read(core, path)
    edit(core, path, "b\nc\nd", "b\nC\nd")
    assert path.read_bytes() == data.replace(b"c\r\n", b"C\r\n")
    # A multi-line replacement only rewrites what differs; new lines take the
    # dominant ending (CRLF here, 4 to 2).
    edit(core, path, "d\ne\n", "d\ninserted\ne\n")
    assert path.read_bytes() == b"a\r\nb\nC\r\nd\ninserted\r\ne\r\n\tf  \r\n"


def test_tabs_and_trailing_spaces_stay(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "Makefile"
    data = b"all:\n\tcc -o x x.c   \n\techo done\t\n"
    path.write_bytes(data)
    read(core, path)
    edit(core, path, "cc -o x", "cc -O2 -o x")
    assert path.read_bytes() == data.replace(b"cc -o x", b"cc -O2 -o x")


@pytest.mark.parametrize(
    ("codec", "bom"),
    [("utf-8", b"\xef\xbb\xbf"), ("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")],
)
def test_bom_files_round_trip(core: Readkeeper, workspace: Path, codec: str, bom: bytes) -> None:
    path = workspace / "bom.txt"
    text = "naïve\r\ncafé ☕\r\nend\r\n"
    path.write_bytes(bom + text.encode(codec))
    read(core, path)
    edit(core, path, "café ☕", "café ☕ and 🍰")
    assert path.read_bytes() == bom + text.replace("☕", "☕ and 🍰").encode(codec)


def test_latin1_round_trips(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "latin.txt"
    text = "Grüße aus Köln, schön.\n" * 5 + "Ende.\n"
    path.write_bytes(text.encode("latin-1"))
    read(core, path)
    edit(core, path, "Ende.", "Schluß.")
    assert path.read_bytes() == text.replace("Ende.", "Schluß.").encode("latin-1")


def test_mode_bits_and_symlinks(core: Readkeeper, workspace: Path) -> None:
    target = workspace / "run.sh"
    target.write_text("#!/bin/sh\necho hi\n")
    target.chmod(0o751)
    link = workspace / "link.sh"
    link.symlink_to(target)
    read(core, link)
    result = edit(core, link, "hi", "hello")
    assert result.file_path == str(target)
    assert link.is_symlink()
    assert os.readlink(link) == str(target)
    assert target.read_text() == "#!/bin/sh\necho hello\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    core.write(WriteParams(str(link), "#!/bin/sh\nexit 0\n"))
    assert link.is_symlink()
    assert target.read_text() == "#!/bin/sh\nexit 0\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert sorted(p.name for p in workspace.iterdir()) == ["link.sh", "run.sh"]  # no temps


# --- writes ----------------------------------------------------------------------------------


def test_write_creates_a_file_and_its_folders(core: Readkeeper, workspace: Path) -> None:
    result = core.write(WriteParams("src/pkg/new.py", "print('hi')\r\n"))
    path = workspace / "src" / "pkg" / "new.py"
    assert (result.created, result.file_path) == (True, str(path))
    assert path.read_bytes() == b"print('hi')\n"  # new files: LF
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()
    # The writer knows what it wrote: the next write needs no read.
    again = core.write(WriteParams("src/pkg/new.py", "print('bye')\n"))
    assert (again.created, again.changed) == (False, True)
    # It wrote all of it, so it holds it whole: a re-read is a stub.
    assert again.read_state.next_read == "stub"
    assert read(core, path)["type"] == "file_unchanged"


def test_new_file_line_ending_setting(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"newFileLineEnding": "crlf"})
    core.write(WriteParams("a.txt", "a\nb\n"))
    assert (workspace / "a.txt").read_bytes() == b"a\r\nb\r\n"


def test_write_needs_a_read_and_refuses_any_change(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("one\ntwo\nthree\n")
    error = refused(core.write, WriteParams(str(path), "new\n"))
    assert error.kind == "not_read"
    read(core, path)
    later(path, b"one\ntwo\nthree\nfour\n")  # disjoint, but writes never merge
    error = refused(core.write, WriteParams(str(path), "new\n"))
    assert error.kind == "stale"
    assert "+four" in error.data["diff"]
    assert "never merged" in error.message
    assert path.read_text() == "one\ntwo\nthree\nfour\n"


def test_write_keeps_encoding_bom_and_line_endings(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_bytes(b"\xff\xfe" + "a\r\nb\r\n".encode("utf-16-le"))
    read(core, path)
    result = core.write(WriteParams(str(path), "x\ny\nz\n"))
    assert path.read_bytes() == b"\xff\xfe" + "x\r\ny\r\nz\r\n".encode("utf-16-le")
    assert (result.encoding, result.line_ending, result.total_lines) == ("utf-16-le-bom", "crlf", 3)


def test_write_of_identical_content_does_not_touch_the_file(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.txt"
    path.write_text("same\n")
    os.utime(path, ns=(0, 1_000_000_000))
    read(core, path)
    result = core.write(WriteParams(str(path), "same\n"))
    assert result.changed is False
    assert path.stat().st_mtime_ns == 1_000_000_000


@pytest.mark.skipif(sys.platform != "linux", reason="leases are Linux's")
def test_a_file_another_program_is_writing_is_not_edited(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("one\n")
    read(core, path)
    with open(path, "a"):  # held open for writing, as a logger or a slow save would
        error = refused(edit, core, path, "one", "two")
    assert (error.kind, error.data["busy"]) == ("stale", True)
    assert "open for writing in another program" in error.message
    assert path.read_text() == "one\n"
    edit(core, path, "one", "two")  # once it is closed, the edit goes through
    assert path.read_text() == "two\n"


def test_a_write_of_a_name_no_file_can_have_changes_nothing(
    core: Readkeeper, workspace: Path
) -> None:
    # Over NAME_MAX: refused by its text (files/reach.py), as for every tool.
    error = refused(core.write, WriteParams("x" * 300 + ".txt", "content\n"))
    assert error.kind == "bad_params"
    assert "at most 255 bytes" in error.message
    assert list(workspace.iterdir()) == []  # no temp file left behind


def test_write_under_a_file_is_bad_params(core: Readkeeper, workspace: Path) -> None:
    (workspace / "file").write_text("x")
    error = refused(core.write, WriteParams("file/child.txt", "x"))
    assert error.kind == "bad_params"
    assert str(workspace / "file") in error.message


def test_stats_count_edits_and_writes(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("a\n")
    read(core, path)
    edit(core, path, "a", "b")
    core.write(WriteParams(str(path), "c\n"))
    refused(edit, core, path, "zzz", "y")
    stats = core.stats_for(StatsParams(""))["session"]
    assert (stats["edits"], stats["writes"], stats["errors"]) == (1, 1, {"no_match": 1})


# --- editor buffers --------------------------------------------------------------------------


def test_dirty_buffer_is_never_written_underneath(workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("disk\n")
    docs = {str(path): Buffer("disk\nunsaved typing\n", 7)}
    core = Readkeeper(roots=[str(workspace)], buffers=ReadOnlyEditor(docs))
    read(core, path)
    error = refused(edit, core, path, "disk", "DISK")
    assert (error.kind, error.data["buffer_version"]) == ("dirty_buffer", 7)
    assert "save or revert" in error.message
    assert refused(core.write, WriteParams(str(path), "x\n")).kind == "dirty_buffer"
    # Even with "apply", a front end that cannot change buffers refuses.
    core.configure({"edit_open_buffers": "apply"})
    assert refused(edit, core, path, "disk", "DISK").kind == "dirty_buffer"
    assert path.read_text() == "disk\n"


def test_a_clean_open_document_is_written_on_disk(workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("same\n")
    core = Readkeeper(
        roots=[str(workspace)], buffers=ReadOnlyEditor({str(path): Buffer("same\n", 1)})
    )
    read(core, path)
    assert edit(core, path, "same", "new").applied_to == "disk"
    assert path.read_text() == "new\n"


def test_apply_edits_the_dirty_buffer_not_the_disk(workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("one\r\ntwo\r\n")
    editor = FakeEditor()
    editor.docs[str(path)] = Buffer("one\r\ntwo\r\nthree (unsaved)\r\n", 3)
    core = Readkeeper(
        roots=[str(workspace)], client_settings={"edit_open_buffers": "apply"}, buffers=editor
    )
    first = read(core, path)
    assert first["file"]["unsaved"] is True
    result = edit(core, path, "two\nthree", "2\n3")
    assert result.applied_to == "buffer"
    assert result.read_state.source == "buffer"
    assert (result.read_state.size, result.read_state.mtime_ns) == (None, None)  # no file written
    assert editor.docs[str(path)] == Buffer("one\r\n2\r\n3 (unsaved)\r\n", 4)
    assert path.read_text() == "one\ntwo\n"  # disk untouched
    # Only the changed characters travel to the editor.
    assert editor.calls[0][2] == [TextChange(5, 5 + len("two\r\nthree"), "2\r\n3")]
    # The buffer now holds what the agent knows: a second edit needs no read.
    edit(core, path, "one", "1")
    assert editor.docs[str(path)].text == "1\r\n2\r\n3 (unsaved)\r\n"
    # Someone typing in between is caught like any other change.
    editor.docs[str(path)] = Buffer("1\r\n2\r\n3 (typed)\r\n", 9)
    error = refused(edit, core, path, "3 (unsaved)", "3")
    assert error.kind == "stale"


def test_a_buffer_read_of_a_legacy_encoding_then_saved_edits_without_a_merge(
    workspace: Path,
) -> None:
    # The agent read the editor's unsaved buffer of a Latin-1 file (recorded as the
    # text's UTF-8), then the user saved it: the file on disk is what the agent read,
    # in other bytes. The edit is a plain one, not a merge over a change.
    path = workspace / "a.txt"
    path.write_bytes("caf\xe9\n".encode("latin-1"))
    editor = FakeEditor()
    editor.docs[str(path)] = Buffer("caf\xe9\nna\xefve (unsaved)\n", 2)
    core = Readkeeper(roots=[str(workspace)], buffers=editor)
    assert read(core, path)["file"]["unsaved"] is True
    path.write_bytes("caf\xe9\nna\xefve (unsaved)\n".encode("latin-1"))
    del editor.docs[str(path)]
    result = edit(core, path, " (unsaved)", "")
    assert (result.merged, result.note) == (False, None)
    assert path.read_bytes() == "caf\xe9\nna\xefve\n".encode("latin-1")


def test_write_into_a_dirty_buffer_with_apply(workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("a\nb\n")
    editor = FakeEditor()
    editor.docs[str(path)] = Buffer("a\nb\nc\n", 1)
    core = Readkeeper(
        roots=[str(workspace)], client_settings={"edit_open_buffers": "apply"}, buffers=editor
    )
    read(core, path)
    result = core.write(WriteParams(str(path), "a\nB\nc\n"))
    assert (result.applied_to, result.changed) == ("buffer", True)
    assert editor.calls[0][2] == [TextChange(2, 3, "B")]
    assert editor.docs[str(path)].text == "a\nB\nc\n"
    assert result.read_state.next_read == "stub"  # it wrote all of it


def test_an_editor_that_refuses_the_edit_is_reported(workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("a\n")

    class Refusing(FakeEditor):
        def apply_edits(self, *args: Any) -> Unapplied | None:
            return Unapplied("refused", said="the user typed meanwhile")

    editor = Refusing()
    editor.docs[str(path)] = Buffer("a\nb\n", 2)
    core = Readkeeper(
        roots=[str(workspace)], client_settings={"edit_open_buffers": "apply"}, buffers=editor
    )
    read(core, path)
    error = refused(edit, core, path, "b", "B")
    assert error.kind == "dirty_buffer"
    assert "the user typed meanwhile" in error.message
    assert error.message.startswith(f"{path} has unsaved changes in the editor")
    assert (error.data["file_path"], error.data["buffer_version"]) == (str(path), 2)


# --- pieces ----------------------------------------------------------------------------------


def test_lsp_positions_count_utf16_units_and_every_line_break() -> None:
    text = "a🍰b\r\nc\rd\ne"
    assert lsp_position(text, 2) == (0, 3)  # the cake is two UTF-16 units
    assert lsp_position(text, 2, "utf-32") == (0, 2)
    assert lsp_position(text, 2, "utf-8") == (0, 5)
    assert lsp_position(text, text.index("c")) == (1, 0)
    assert lsp_position(text, text.index("d")) == (2, 0)
    assert lsp_position(text, len(text)) == (3, 1)


def test_common_ends_never_overlap() -> None:
    assert common_ends("abcabc", "abcXabc") == (3, 3)
    assert common_ends("aaa", "aaaa") == (3, 0)
    assert common_ends("", "x") == (0, 0)
    assert common_ends("same", "same") == (4, 0)


def test_diffs_are_bounded_with_a_note() -> None:
    before = "".join(f"line {i}\n" for i in range(5000))
    after = before.replace("line", "LINE")
    diff, truncated = bounded_diff(before, after, "f", max_tokens=200)
    assert truncated is True
    assert diff.endswith("Read the file to see all of it.")
    assert len(diff) < 2000
    only_endings, _ = bounded_diff("a\nb\n", "a\r\nb\r\n", "f")
    assert only_endings.startswith("Only line endings changed (lf -> crlf)")


def test_diffs_made_together_share_one_budget() -> None:
    before, after = "a\nb\nc\n", "a\nB\nc\n"
    # Spent by the diffs before it: this one is not tried, and says what to read.
    diff, truncated = bounded_diff(before, after, "f", budget=Budget(0))
    assert truncated is True
    assert "it was not diffed (the time for diffs of these changes went to" in diff
    assert 'read them: readkeeper/read {"file_path": "f", "offset": 1, "limit": 3}.' in diff
    assert "+B" not in diff
    assert "+B" in bounded_diff(before, after, "f", budget=Budget())[0]


def test_snippets_elide_the_middle_of_long_changes() -> None:
    text = "".join(f"{i}\n" for i in range(1, 201))
    snippet, first = numbered_snippet(text, text.index("10\n"), text.index("150\n"))
    assert first == 7
    assert "lines not shown" in snippet
    assert len(snippet.split("\n")) == 41


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_replacements_temporary_file_is_private_while_its_bytes_are_written(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The temporary file sits in the folder, under a name, while the new content is
    # written into it: only its owner may read it then. It takes the old file's mode
    # (0o644 here) only once its bytes are in.
    path = workspace / "notes.txt"
    path.write_text("old\n")
    path.chmod(0o644)
    read(core, path)
    modes: list[int] = []

    class Watching:
        """`os` for atomic.py, noting the mode of each file as bytes go into it."""

        def __getattr__(self, name: str) -> Any:
            return getattr(os, name)

        @staticmethod
        def write(fd: int, data: Any) -> int:
            modes.append(stat.S_IMODE(os.fstat(fd).st_mode))
            return os.write(fd, data)

    monkeypatch.setattr(atomic, "os", Watching())
    edit(core, path, "old", "new")
    monkeypatch.undo()
    assert modes
    assert set(modes) == {0o600}
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert path.read_text() == "new\n"


@pytest.mark.parametrize("change", ["create", "replace"])
def test_a_write_is_made_durable_its_bytes_then_its_name(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    # The new file's bytes are fsynced before the rename, and the folder after it; a
    # descriptor that cannot be fsynced (a folder opened O_PATH) would make the fsync
    # fail, silently: every fsync here must succeed.
    path = workspace / "a.txt"
    if change == "replace":
        path.write_text("old\n")
        read(core, path)
    synced: list[tuple[str, str | None]] = []

    class Watching:
        """`os` for atomic.py, noting each fsync: of a file or a folder, and its error."""

        def __getattr__(self, name: str) -> Any:
            return getattr(os, name)

        @staticmethod
        def fsync(fd: int) -> None:
            what = "folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
            try:
                os.fsync(fd)
            except OSError as exc:
                synced.append((what, exc.strerror))
                raise
            synced.append((what, None))

    monkeypatch.setattr(atomic, "os", Watching())
    core.write(WriteParams(str(path), "new\n"))
    monkeypatch.undo()
    assert synced == [("file", None), ("folder", None)]
    assert path.read_text() == "new\n"


@pytest.mark.skipif(sys.platform != "linux", reason="leases are Linux's")
@pytest.mark.parametrize("outcome", ["unavailable", "busy"])
def test_a_file_that_cannot_be_leased_is_held_unleased(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, outcome: str
) -> None:
    # Leases refused outright (not our file, no leases here), or refused as busy on a
    # device whose probe finds leases never work: the file is held without one.
    monkeypatch.setattr(leases, "_try_lease", lambda fd: outcome)
    monkeypatch.setattr(leases, "_probe_leases", lambda folder, path: False)
    monkeypatch.setattr(leases, "_lease_works", {})  # what earlier probes found, forgotten
    path = workspace / "a.txt"
    path.write_text("one\n")
    with atomic.hold(_held_location(workspace, path)) as held:
        assert held.leased is False
        assert atomic.replace(held, b"ONE\n", b"one\n") is not None
    assert path.read_text() == "ONE\n"


@pytest.mark.skipif(sys.platform != "linux", reason="an exchange rename (renameat2)")
def test_where_the_exchange_rename_is_refused_a_commit_renames_over(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A filesystem that refuses renameat2's exchange (EINVAL): the commit falls back to
    # an ordinary rename over the name, and lands.
    renameat2 = atomic._renameat2

    def no_exchange(*args: Any) -> int:
        if args[4] == atomic._RENAME_EXCHANGE:
            ctypes.set_errno(errno.EINVAL)
            return -1
        return int(renameat2(*args))

    monkeypatch.setattr(atomic, "_renameat2", no_exchange)
    path = workspace / "a.txt"
    path.write_text("one\n")
    read(core, path)
    edit(core, path, "one", "two")
    assert path.read_text() == "two\n"


def test_a_temp_file_whose_write_fails_is_removed(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = workspace / "a.txt"
    path.write_text("one\n")
    read(core, path)

    class Full:
        """`os` for atomic.py, on a disk that is full."""

        def __getattr__(self, name: str) -> Any:
            return getattr(os, name)

        @staticmethod
        def write(fd: int, data: Any) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic, "os", Full())
    with pytest.raises(ReadkeeperError):
        edit(core, path, "one", "two")
    monkeypatch.undo()
    assert path.read_text() == "one\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["a.txt"]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_of_another_user_keeps_its_owner(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("one\n")
    os.chown(path, 65534, 65534)
    read(core, path)
    edit(core, path, "one", "two")
    assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)
    assert path.read_text() == "two\n"


def test_a_file_rewritten_on_every_attempt_is_refused_not_clobbered(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = workspace / "busy.txt"
    path.write_text("old\n")
    read(core, path)

    def append(text: str, n: int) -> str:  # a change elsewhere: each attempt merges over it
        return f"{text}line {n} of another program\n"

    writes = rewrite_before_every_swap(monkeypatch, path, append)
    error = refused(edit, core, path, "old", "new")
    assert error.kind == "stale"
    assert error.message.startswith(f"{path} kept changing while readkeeper tried to commit")
    assert len(writes) == COMMIT_ATTEMPTS
    assert path.read_text() == writes[-1]  # the other program's last write stands


def test_edit_snippets_follow_the_line_number_style(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"line_numbers": "compact"})
    path = workspace / "a.py"
    path.write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    read(core, path)
    result = edit(core, path, "    return 2\n", "    return 3\n")
    assert result.snippet == "3\t\n4\t\n5\tdef g():\n6\t    return 3"
    error = refused(edit, core, path, "def g():\n    return 4", "x")
    assert error.data["closest"] == "5\tdef g():\n6\t    return 3"


def test_a_long_non_ascii_name_gets_a_temp_name_within_the_limit(workspace: Path) -> None:
    # 84 CJK characters are 252 bytes, a valid name; its temp name, cut at 180
    # characters, would have been 269 bytes (over NAME_MAX): cut at 180 bytes, it fits.
    path = workspace / ("字" * 84)
    assert atomic.create(_held_location(workspace, path), b"new\n") is not None
    assert path.read_bytes() == b"new\n"
    assert [p.name for p in workspace.iterdir()] == [path.name]


def test_an_edit_in_a_folder_it_may_not_open_is_refused_and_changes_nothing() -> None:
    # A folder one may enter and write in, but not list (mode 0311): the file reads, but
    # holding it for the change needs the folder opened. Root may open any folder, so
    # as root the edit runs in a child as another user.
    base = Path(tempfile.mkdtemp(prefix="rk-locked-"))
    try:
        base.chmod(0o755)
        folder = base / "ws" / "locked"
        folder.mkdir(parents=True)
        path = folder / "a.txt"
        path.write_text("one\n")
        if os.geteuid() == 0:
            for owned in (base / "ws", folder, path):
                os.chown(owned, NOBODY, NOBODY)
        core = Readkeeper(roots=[str(base / "ws")])
        core.tokens.warm_up()

        def client() -> bytes:
            read(core, path)
            folder.chmod(0o311)
            try:
                edit(core, path, "one", "two")
            except ReadkeeperError as exc:
                return f"{exc.kind}\n{exc.message}".encode()
            return b"edited"

        answer = (run_as_nobody(client) if os.geteuid() == 0 else client()).decode()
        folder.chmod(0o755)
        core.close()
        kind, message = answer.split("\n", 1)
        assert kind == "unsupported", answer
        assert message.startswith(f"Cannot write {path}: Permission denied. Nothing was changed.")
        assert path.read_text() == "one\n"
        assert [p.name for p in folder.iterdir()] == ["a.txt"]
    finally:
        shutil.rmtree(base)
