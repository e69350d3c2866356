"""The shown lines a read of lines no snapshot keeps leaves (`ShownLines.saw_later`):
hashed only when an edit asks or the session's next such read comes, never when the
same lines are shown again, and counted as if hashed at once (the newer entry wins)."""

from __future__ import annotations

from collections.abc import Callable

from readkeeper.state.shown_lines import ShownLines


def counted(lines: dict[int, int], calls: list[int]) -> Callable[[], dict[int, int]]:
    def hashed() -> dict[int, int]:
        calls.append(1)
        return lines

    return hashed


def no_views(digest: str, first: int, last: int, max_chars: int) -> dict[int, int]:
    return {}


def test_lines_shown_again_are_hashed_once_and_only_when_asked() -> None:
    shown, calls = ShownLines(), []
    for _ in range(5):  # a log's tail, forced again and again
        shown.saw_later("s", "/log", ("tail", 2), counted({7: 70, 8: 80}, calls))
    assert calls == []
    assert shown.lines("s", "/log", no_views) == {7: 70, 8: 80}
    assert shown.lines("s", "/log", no_views) == {7: 70, 8: 80}
    assert calls == [1]


def test_another_read_hashes_the_waiting_lines_and_the_newer_entry_wins() -> None:
    shown, calls = ShownLines(), []
    shown.saw_later("s", "/log", "a", counted({1: 1, 2: 2}, calls))
    shown.saw("s", "/log", {2: 20})  # newer than the waiting read's line 2
    shown.saw_later("s", "/other", "b", counted({5: 5}, calls))
    assert calls == [1]  # the first read's lines, hashed when the next came
    assert shown.lines("s", "/log", no_views) == {1: 1, 2: 20}
    shown.saw_later("s", "/log", "c", counted({2: 200, 3: 300}, calls))
    assert shown.lines("s", "/log", no_views) == {1: 1, 2: 200, 3: 300}
    assert shown.lines("s", "/other", no_views) == {5: 5}
    assert shown.lines("t", "/log", no_views) == {}  # another session was shown none


def test_the_same_lines_shown_again_are_newer_than_what_came_between() -> None:
    shown = ShownLines()
    shown.saw_later("s", "/log", "a", lambda: {1: 1})
    shown.saw("s", "/log", {1: 10})
    shown.saw_later("s", "/log", "a", lambda: {1: 1})
    assert shown.lines("s", "/log", no_views) == {1: 1}


def test_forget_replace_and_the_bounds_drop_the_waiting_lines() -> None:
    shown, calls = ShownLines(max_lines=10, max_files=2), []
    shown.saw_later("s", "/a", "a", counted({1: 1}, calls))
    shown.forget("s", ["/a"])
    assert shown.lines("s", "/a", no_views) == {}
    shown.saw_later("s", "/a", "a", counted({1: 1}, calls))
    shown.replace("s", "/a", {4: 4})  # its own edit: the lines it was shown moved
    assert shown.lines("s", "/a", no_views) == {4: 4}
    shown.saw_later("s", "/b", "b", counted({n: n for n in range(1, 4)}, calls))
    shown.saw("s", "/c", {1: 1})
    shown.saw("s", "/d", {1: 1})  # a third and fourth file: the oldest go
    assert shown.lines("s", "/b", no_views) == {}
    shown.saw_later("s", "/e", "e", counted({n: n for n in range(1, 30)}, calls))
    assert len(shown.lines("s", "/e", no_views)) == 10  # one file over the cap alone
    assert calls == [1]  # only /e was ever asked for: nothing else was hashed
