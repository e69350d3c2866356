"""A read that makes an entry of the user cache (an outline, the count that decided it,
the counts of numbered lines) answers without waiting for the cache folder: the entry
is written on the cache's writer thread (`UserCache.put_later`), and is there once the
core is closed (issue 34: the write's syscalls were on the first read's path)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from helpers import read
from readkeeper.core import Readkeeper
from readkeeper.files import user_cache

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
