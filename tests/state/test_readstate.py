"""Read-state (readstate.py): what each session read, what forget drops, and what the
watcher asks of it. Plain data, no files."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from readkeeper.state import readstate
from readkeeper.state.readstate import ReadRecord, ReadStates


def record(path: str, **fields: Any) -> ReadRecord:
    values: dict[str, Any] = {
        "digest": "d",
        "scope": "file",
        "mtime_ns": 1,
        "size": 2,
        "offset": 1,
        "limit": None,
        "partial": False,
        "tokens": 3,
        "recorded_ns": 0,
        "obtained_ns": 0,
    }
    values.update(fields)
    return ReadRecord(path=path, **values)


def test_each_session_has_its_own_records() -> None:
    states = ReadStates()
    states.put("chat", record("/ws/a.py"))
    assert states.get("chat", "/ws/a.py") == record("/ws/a.py")
    assert states.get("other", "/ws/a.py") is None
    assert states.get("chat", "/ws/b.py") is None
    states.put("chat", record("/ws/a.py", digest="new", whole=True))  # a later read replaces it
    assert states.get("chat", "/ws/a.py") == record("/ws/a.py", digest="new", whole=True)
    assert (states.count("chat"), states.count("other"), states.count()) == (1, 0, 1)


def test_forget_drops_a_sessions_records_and_counts_them() -> None:
    states = ReadStates()
    for path in ("/ws/a", "/ws/b", "/ws/c"):
        states.put("chat", record(path))
    states.put("other", record("/ws/a"))
    assert states.forget("chat", ["/ws/a", "/ws/missing"]) == 1
    assert states.get("chat", "/ws/a") is None
    assert states.get("chat", "/ws/b") is not None
    assert states.get("other", "/ws/a") is not None  # another session keeps its own
    assert states.forget("chat") == 2
    assert states.count("chat") == 0
    assert states.count() == 1
    assert states.forget("never-seen") == 0
    assert states.forget("never-seen", ["/ws/a"]) == 0


def test_the_oldest_reads_are_forgotten_past_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readstate, "MAX_RECORDS_PER_SESSION", 3)
    states = ReadStates()
    for path in ("/a", "/b", "/c"):
        states.put("s", record(path))
    states.put("s", record("/a"))  # read again: now the newest
    states.put("s", record("/d"))  # one too many: /b, the oldest, goes
    assert [p for p in ("/a", "/b", "/c", "/d") if states.get("s", p)] == ["/a", "/c", "/d"]
    assert states.count("s") == 3


def test_the_watcher_finds_who_read_a_file_and_what_is_under_a_folder() -> None:
    states = ReadStates()
    states.put("one", record("/ws/src/a.py"))
    states.put("two", record("/ws/src/a.py", digest="x"))
    states.put("two", record("/ws/src-old/b.py"))
    states.put("two", record("/ws/srcfile"))
    assert sorted(s for s, _ in states.readers("/ws/src/a.py")) == ["one", "two"]
    assert states.readers("/ws/none") == []
    under = sorted((s, r.path) for s, r in states.readers_under("/ws/src"))
    assert under == [("one", "/ws/src/a.py"), ("two", "/ws/src/a.py")]
    assert sorted(r.path for _, r in states.readers_under("/ws/")) == [
        "/ws/src-old/b.py",
        "/ws/src/a.py",
        "/ws/src/a.py",
        "/ws/srcfile",
    ]


def test_files_report_the_newest_record_of_each_path() -> None:
    states = ReadStates()
    states.put("one", record("/ws/a", mtime_ns=10, size=1, recorded_ns=100))
    states.put("two", record("/ws/a", mtime_ns=20, size=2, recorded_ns=200))
    states.put("three", record("/ws/a", mtime_ns=15, size=3, recorded_ns=150))
    states.put("one", record("/ws/b", mtime_ns=5, size=5, recorded_ns=1))
    assert states.files() == {"/ws/a": (20, 2), "/ws/b": (5, 5)}


def test_a_view_is_the_same_only_with_the_same_range_and_options() -> None:
    seen = record("/ws/a", offset=10, limit=20, view="pages=1-2")
    assert seen.same_view(10, 20, "pages=1-2")
    assert not seen.same_view(11, 20, "pages=1-2")
    assert not seen.same_view(10, None, "pages=1-2")
    assert not seen.same_view(10, 20, "")


# --- the views a session holds of one file's same content ---------------------------------


def views_after(*records: ReadRecord) -> list[tuple[int, int | None, bool]]:
    """(offset, limit, ranged) of each view held after putting `records` in turn."""
    states = ReadStates()
    for each in records:
        states.put("chat", each)
    held = states.get("chat", "/ws/a.py")
    assert held is not None
    return [(v.offset, v.limit, v.ranged) for v in held.views()]


def test_at_most_four_views_of_one_content_are_held_the_whole_one_first() -> None:
    whole = record("/ws/a.py", limit=2000, whole=True)
    ranges = [record("/ws/a.py", offset=10 * n, limit=5, ranged=True) for n in range(1, 6)]
    assert views_after(whole, *ranges) == [
        (50, 5, True),  # the newest
        (1, 2000, False),  # the whole view outlasts the older ranges
        (40, 5, True),
        (30, 5, True),
    ]


def test_a_cut_whole_read_and_a_ranged_read_of_the_same_lines_are_two_views() -> None:
    cut = record("/ws/a.py", limit=2000, ranged=False)
    asked = record("/ws/a.py", limit=2000, ranged=True)
    assert views_after(cut, asked) == [(1, 2000, True), (1, 2000, False)]
    # The same view again replaces itself.
    assert views_after(cut, asked, record("/ws/a.py", limit=2000, ranged=True)) == [
        (1, 2000, True),
        (1, 2000, False),
    ]


def test_a_record_of_other_content_holds_none_of_the_views_it_came_with() -> None:
    stray = record("/ws/a.py", digest="old", offset=7, limit=3)
    carrying = record("/ws/a.py", digest="new", earlier=(stray,))
    assert views_after(carrying) == [(1, None, False)]
    assert views_after(record("/ws/a.py", digest="old"), carrying) == [(1, None, False)]


def test_a_renewed_record_is_what_dataclasses_replace_would_make() -> None:
    earlier = record("/w/a.py", offset=5, limit=10)
    before = dataclasses.replace(record("/w/a.py", whole=True), earlier=(earlier,))
    renewed = before.renewed(mtime_ns=7, size=8, buffer_version=3, recorded_ns=9)
    expected = dataclasses.replace(before, mtime_ns=7, size=8, buffer_version=3, recorded_ns=9)
    assert renewed == expected
    assert dataclasses.asdict(renewed) == dataclasses.asdict(expected)  # field by field
    assert before.mtime_ns != 7  # the record renewed is left as it was
    with pytest.raises(dataclasses.FrozenInstanceError):
        renewed.size = 1  # type: ignore[misc]
    with pytest.raises(TypeError, match="no field 'sise'"):
        before._but(sise=1)


def test_a_partial_view_of_other_content_keeps_what_was_held_before() -> None:
    # A search or a range shows some lines of a changed file: the session still holds
    # the rest as it read them, and `changes` goes from there (watch/tracks.py).
    states = ReadStates()
    states.put("chat", record("/ws/a.py", digest="old", whole=True, recorded_ns=1))
    states.put("chat", record("/ws/a.py", digest="new", offset=3, limit=1, recorded_ns=2))
    held = states.get("chat", "/ws/a.py")
    assert held is not None
    assert held.held_before is not None
    assert (held.digest, held.held_before.digest, held.follows_ns) == ("new", "old", 1)
    states.put("chat", record("/ws/a.py", digest="newer", offset=5, limit=1, recorded_ns=3))
    again = states.get("chat", "/ws/a.py")
    assert again is not None
    assert again.held_before is not None
    assert (again.held_before.digest, again.follows_ns) == ("old", 2)  # still the read's
    states.put("chat", record("/ws/a.py", digest="newer", whole=True, recorded_ns=4))
    whole = states.get("chat", "/ws/a.py")
    assert whole is not None
    assert whole.held_before is None
