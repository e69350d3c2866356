"""Change notices are held to `changes_total_max_tokens` by their exact count (issue 34),
not by bytes/4: text in Chinese is some 1.4 tokens to each 4 bytes, so a reply measured
by bytes ran a third over the cap. Checked on the `changes` reply and on the change
attachments, in-process with a real watcher, against tiktoken's own count."""

from __future__ import annotations

from pathlib import Path

from helpers import tiktoken_count
from readkeeper.protocol import AttachmentsParams, ChangesParams, FileChange
from watch_core_helpers import Watching
from watch_helpers import make

CAP = 600
OVERHEAD = 24  # the allowance for a notice's fields (watch/changes.py)
NAMES = [f"f{i}.txt" for i in range(8)]


def cost(change: FileChange) -> int:
    return OVERHEAD + tiktoken_count(change.diff) + tiktoken_count(change.note or "")


def lines(word: str) -> str:
    return "".join(f"{word}的内容在这里\uff0c第{i}行。\n" for i in range(10))


def changed_files(workspace: Path, settings: dict[str, object]) -> Watching:
    w = Watching(workspace, settings).start()
    for name in NAMES:
        make(workspace / name, lines("旧"))
        w.read(name)
    for name in NAMES:
        (workspace / name).write_text(lines("新"))
    for name in NAMES:
        w.wait_notice(name)
    return w


def test_the_changes_reply_is_held_to_its_cap_by_the_count(workspace: Path) -> None:
    w = changed_files(workspace, {"changes_total_max_tokens": CAP})
    try:
        told: list[FileChange] = []
        while True:
            reply = w.core.changes_for(ChangesParams())
            assert reply.changes
            if len(reply.changes) > 1:  # one notice alone is always told
                assert sum(map(cost, reply.changes)) <= CAP
            told += reply.changes
            if not reply.remaining:
                break
        assert sorted(c.file_path for c in told) == sorted(str(workspace / n) for n in NAMES)
    finally:
        w.close()


def test_change_attachments_take_notices_by_the_count(workspace: Path) -> None:
    w = changed_files(workspace, {"changes_total_max_tokens": CAP})
    try:
        result = w.core.attachments(AttachmentsParams(types=["changes"], budget_tokens=20_000))
        paths = {str(workspace / n) for n in NAMES}
        told = [a for a in result["attachments"] if a.get("source") in paths]
        rest: list[FileChange] = []
        while True:  # the rest wait for the next call
            reply = w.core.changes_for(ChangesParams())
            rest += reply.changes
            if not reply.remaining:
                break
        assert len(told) + len(rest) == len(NAMES)
        each = [cost(change) for change in rest]  # about the same: the names differ
        assert CAP // max(each) == len(told) == CAP // min(each)  # as many as fit, no more
    finally:
        w.close()


def test_a_notices_diff_is_cut_at_its_cap_by_the_count(workspace: Path) -> None:
    w = Watching(workspace, {"changes_max_tokens": 300}).start()
    try:
        path = make(workspace / "long.txt", lines("旧") * 8)
        w.read("long.txt")
        path.write_text(lines("新") * 8)
        [notice] = w.wait_notice("long.txt")
        assert notice.truncated
        *shown, cut = notice.diff.split("\n")
        assert cut.startswith("... diff cut at its 300-token cap")
        assert 250 < tiktoken_count("\n".join(shown)) <= 300
    finally:
        w.close()
