"""The diagnostics store keeps what the editor pushes within caps: text fields cut, the
most severe diagnostics of a file kept, the least recently reported files dropped first,
and what was dropped counted for `readkeeper/stats`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from readkeeper.attachments import diagnostics
from readkeeper.attachments.diagnostics import DiagnosticsStore

# Files that need not exist (the store keeps what the editor reports, wherever it is),
# named alike on every machine so that the characters counted are too.
ROOT = Path("/readkeeper-test-root")


def item(path: Path, *severities: int, message: str = "m", **extra: Any) -> dict[str, Any]:
    where = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    return {
        "uri": path.as_uri(),
        "diagnostics": [
            {"range": where, "severity": s, "message": message, **extra} for s in severities
        ],
    }


def test_long_fields_are_cut_with_a_mark() -> None:
    store = DiagnosticsStore()
    store.update([item(ROOT / "a.py", 1, message="M" * 10_000, source="S" * 999, code="C" * 999)])
    (kept,) = store.get(str(ROOT / "a.py")).items  # type: ignore[union-attr]
    assert kept.message == "M" * diagnostics.MAX_MESSAGE_CHARS
    assert kept.source == "S" * diagnostics.MAX_FIELD_CHARS
    assert kept.code == "C" * diagnostics.MAX_FIELD_CHARS
    assert kept.render(False).startswith("  1:1 error (cut) [SSS")


@pytest.mark.parametrize(
    ("message", "source"),
    [
        ("unused … [cut]", "ruff"),  # a message ending as readkeeper's mark did
        ("(cut) unused", ""),  # a mark where no source stands between
        ("(new) (cut) unused", ""),
        ("[ruff] (cut) unused", ""),
    ],
)
def test_a_message_cannot_pose_as_the_cut_mark(message: str, source: str) -> None:
    """readkeeper's marks (`(new)`, `(cut)`) come before the language server's words,
    which follow a colon and end the line (SECURITY.md, attack round 23): a message of
    any words reads apart from a message readkeeper cut."""
    store = DiagnosticsStore()
    extra = {"source": source} if source else {}
    store.update([item(ROOT / "a.py", 1, message=message, **extra)])
    store.update([item(ROOT / "b.py", 1, message="unused" + "x" * 5_000, **extra)])
    (uncut,) = store.get(str(ROOT / "a.py")).items  # type: ignore[union-attr]
    (cut,) = store.get(str(ROOT / "b.py")).items  # type: ignore[union-attr]
    origin = f" [{source}]" if source else ""
    assert uncut.render(True) == f"  1:1 error (new){origin}: {message}"
    assert cut.render(True).startswith(f"  1:1 error (new) (cut){origin}: unusedxxx")
    head = uncut.render(True).partition(": ")[0]
    assert "(cut)" not in head


def test_a_file_keeps_its_most_severe_diagnostics() -> None:
    store = DiagnosticsStore()
    hints = [4] * diagnostics.MAX_PER_FILE
    store.update([item(ROOT / "a.py", *hints, 1)])
    kept = store.get(str(ROOT / "a.py")).items  # type: ignore[union-attr]
    assert len(kept) == diagnostics.MAX_PER_FILE
    assert kept[0].severity == 1
    assert store.take_dropped() == {"diagnostics": 1}
    assert store.take_dropped() == {}


def test_the_least_recently_reported_files_go_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diagnostics, "MAX_FILES", 3)
    store = DiagnosticsStore()
    paths = [ROOT / f"f{i}.py" for i in range(5)]
    store.update([item(p, 1) for p in paths[:3]])
    store.update([item(paths[0], 2)])  # reported again: now the most recent
    store.update([item(p, 1) for p in paths[3:]])
    assert sorted(Path(f.path).name for f in store.files()) == ["f0.py", "f3.py", "f4.py"]
    assert store.take_dropped() == {"diagnostics_files": 2}


def test_the_characters_held_are_capped_and_clearing_gives_them_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(diagnostics, "MAX_CHARS", 5_000)
    store = DiagnosticsStore()
    big = "x" * 1_500
    store.update([item(ROOT / f"f{i}.py", 1, message=big) for i in range(3)])
    assert len(store.files()) == 3
    store.update([item(ROOT / "f0.py")])  # an empty list clears the file
    store.update([item(ROOT / "f3.py", 1, message=big)])
    assert len(store.files()) == 3
    assert store.take_dropped() == {}
    store.update([item(ROOT / "f4.py", 1, message=big)])
    assert [Path(f.path).name for f in store.files()] == ["f2.py", "f3.py", "f4.py"]
