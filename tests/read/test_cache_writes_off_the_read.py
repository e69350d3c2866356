"""A read that makes an entry of the user cache (an outline, the count that decided it,
the counts of numbered lines) answers without waiting for the cache folder: the entry
is written on the cache's writer thread (`UserCache.put_later`), and is there once the
core is closed (issue 34: the write's syscalls were on the first read's path); it
waits while a call is served, until its answer is out (files/cache_writes.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from helpers import read
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.files import cache_writes, user_cache

SOURCE = "".join(
    f"class Written{i}:\n    def run(self, value):\n        return value * {i} + {i}\n\n\n"
    for i in range(300)
)


def test_a_read_does_not_wait_for_the_cache_folder(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (workspace / "m.py").write_text(SOURCE)
    (workspace / "big.txt").write_text("".join(f"line {i} of the log\n" for i in range(3000)))
    core = Readkeeper(roots=[str(workspace)])
    core.tokens.warm_up()
    folder = user_cache.shared()
    answered: list[dict[str, object]] = []
    try:
        with folder._lock:  # every write to the folder waits while this is held
            reader = threading.Thread(
                target=lambda: answered.extend(
                    [read(core, "m.py"), read(core, "big.txt", force=True)]
                ),
                daemon=True,
            )
            reader.start()
            reader.join(timeout=60)
            assert [r["type"] for r in answered] == ["outline", "text"]
    finally:
        core.close()  # waits for the writes queued
    kinds = {entry.name.split("-")[0] for entry in Path(folder.folder).iterdir()}
    assert {"outline", "whole", "counts"} <= kinds, kinds


@pytest.fixture
def patient(monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries wait for the calls served however long they take (a slow machine's)."""
    monkeypatch.setattr(cache_writes, "MAX_HOLD_SECONDS", 3600.0)


@pytest.mark.usefixtures("patient")
def test_an_entry_queued_while_a_call_is_served_waits_for_its_answer(tmp_path: Path) -> None:
    # The writer thread is not woken by an entry queued during a call (an outline's JSON
    # and the write took the interpreter's lock from the read): it writes the entry
    # once no call is served.
    folder = user_cache.UserCache(str(tmp_path / "cache"))
    cache_writes.flush()  # no other test's entry
    cache_writes.hold()
    try:
        folder.put_later("test", "during a call", b"held")
        assert cache_writes.pending() == 1
        assert folder.get("test", "during a call") is None
    finally:
        cache_writes.release()
    cache_writes.flush()
    assert folder.get("test", "during a call") == b"held"


def test_a_flush_writes_what_a_call_being_served_holds(tmp_path: Path) -> None:
    folder = user_cache.UserCache(str(tmp_path / "cache"))
    with cache_writes.holding():
        folder.put_later("test", "flushed", b"written")
        cache_writes.flush()  # a core closing: written now, the call served or not
        assert folder.get("test", "flushed") == b"written"


@pytest.mark.usefixtures("patient")
def test_a_read_holds_its_entries_until_it_is_answered(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The outline and the count that decided it are queued during the read's call and
    # written once it is answered (calls.run holds the writes while it serves).
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (workspace / "m.py").write_text(SOURCE.replace("Written", "Answered"))
    core = Readkeeper(roots=[str(workspace)])
    core.tokens.warm_up()
    cache_writes.flush()  # the token table's entries, written apart from any read
    folder = Path(user_cache.shared().folder)
    try:
        cache_writes.hold()  # as a front end holds them until its reply is written
        try:
            assert calls.call(core, "read", {"file_path": "m.py"})["type"] == "outline"
            assert cache_writes.pending() >= 2  # the outline, the deciding count
            assert not folder.exists() or not any(folder.glob("outline-*"))
        finally:
            cache_writes.release()
        cache_writes.flush()
        kinds = {entry.name.split("-")[0] for entry in folder.iterdir()}
        assert {"outline", "whole"} <= kinds, kinds
    finally:
        core.close()
