"""Stubs proven by the file's stamp (files/stamps.py): a re-read of a file whose device,
inode, size, mtime and ctime are what they were when the session read it, and which had
settled then, is answered without reading or hashing the file, and the answer is the
one a read that hashes it gives.

Each test makes its files settled by waiting (`settle`), never with a clock that lies;
a file with an mtime in the future never settles, which is how the tests keep the
hashing path.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from document_samples import encode, every_output_notebook, numbered_pdf, screenshot

from conftest import Session
from helpers import read
from readkeeper.core import Readkeeper
from readkeeper.files.stamps import COARSE_SETTLED_NS, SETTLED_NS, proof, settled, settles_after
from readkeeper.protocol import StatsParams, WriteParams, unstructure
from readkeeper.read import pipeline
from readkeeper.read.stub_rule import STUB_TOKENS
from readkeeper.state.buffers import Buffer
from readkeeper.state.snapshots import Snapshots

SETTINGS = {"max_size_bytes": 20_000, "outline_over_tokens": 1_000}
SOURCE = "".join(
    f"def task_{i}(value):\n    return value * {i} + len('{i}')\n\n" for i in range(150)
)


def sample_files() -> dict[str, bytes]:
    """One file of each kind of read (made once: a notebook's cell ids are random)."""
    return {
        "small.txt": "".join(f"line {i} of the small file\n" for i in range(1, 31)).encode(),
        "big.py": SOURCE.encode(),
        "huge.log": "".join(f"{i:06d} request served\n" for i in range(5_000)).encode(),
        "picture.png": encode(screenshot(400, 300), "PNG"),
        "doc.pdf": numbered_pdf(3, lines=5),
        "nb.ipynb": json.dumps(every_output_notebook()).encode(),
    }


# Every kind of read, each followed by the same read again (a stub, unless estimate or
# force keeps it from being one), and reads of other views between: the file, the
# params, and the answer's type.
STUB = "file_unchanged"
SCRIPT: list[tuple[str, dict[str, Any], str]] = [
    ("small.txt", {}, "text"),
    ("small.txt", {}, STUB),
    ("small.txt", {"offset": 3, "limit": 4}, "text"),
    ("small.txt", {"offset": 3, "limit": 4}, STUB),
    ("small.txt", {"offset": 1, "limit": 2000}, STUB),  # the defaults, said: the same view
    ("small.txt", {}, STUB),  # held whole, after a ranged read
    ("small.txt", {"force": True}, "text"),
    ("small.txt", {"estimate": True}, "estimate"),
    ("small.txt", {"session": "other"}, "text"),  # another session holds nothing yet
    ("big.py", {}, "outline"),  # an outline
    ("big.py", {}, STUB),
    ("big.py", {"offset": 10, "limit": 5}, "text"),
    ("big.py", {"offset": 10, "limit": 5}, STUB),
    ("big.py", {"symbol": "task_7"}, "text"),
    ("big.py", {"symbol": "task_7"}, STUB),
    ("big.py", {}, STUB),
    ("huge.log", {"offset": 4_000, "limit": 20}, "text"),  # too large to hold: streamed
    ("huge.log", {"offset": 4_000, "limit": 20}, STUB),
    ("huge.log", {"offset": 4_001, "limit": 20}, "text"),
    ("huge.log", {"offset": 4_000, "limit": 20, "estimate": True}, "estimate"),
    ("picture.png", {}, "image"),
    ("picture.png", {}, STUB),
    ("doc.pdf", {"pages": "2"}, "pdf"),
    ("doc.pdf", {"pages": "2"}, STUB),
    ("doc.pdf", {"pages": "1-3"}, "pdf"),
    ("nb.ipynb", {}, "notebook"),
    ("nb.ipynb", {}, STUB),
    ("small.txt", {"offset": 3, "limit": 4}, STUB),  # still held, after all the rest
]


def settle(*paths: Path) -> None:
    """Wait until each file has been unchanged long enough for its stamp to prove its
    content (`stamps.settled`)."""
    for path in paths:
        st = os.stat(path)
        left = max(st.st_mtime_ns, st.st_ctime_ns) + settles_after(st) - time.time_ns()
        if left > 0:
            time.sleep(left / 1e9 + 0.005)
        assert settled(os.stat(path), time.time_ns())


def never_settled(path: Path) -> None:
    """Give `path` an mtime an hour ahead: its stamp proves nothing while it is ahead."""
    ahead = time.time_ns() + 3_600 * 10**9
    os.utime(path, ns=(ahead, ahead))


class Loads:
    """Counts the reads that load a file's bytes (`pipeline._load`, and `stream_range`
    for a file too large to hold): the real functions, counted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        for name in ("_load", "stream_range"):
            monkeypatch.setattr(pipeline, name, self._counted(getattr(pipeline, name)))

    def _counted(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return function(*args, **kwargs)

        return counted


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Loads:
    return Loads(monkeypatch)


def run_script(core: Readkeeper, root: Path, loads: Loads) -> Iterator[tuple[Any, bool]]:
    """Each read of `SCRIPT`: its answer (the root's path taken out) and whether it
    loaded the file."""
    for name, params, _ in SCRIPT:
        before = loads.count
        answer = json.dumps(read(core, root / name, **params)).replace(str(root), "ROOT")
        yield json.loads(answer), loads.count > before


def test_a_proven_stub_answers_what_hashing_the_file_answers(tmp_path: Path, loads: Loads) -> None:
    proven, hashed = tmp_path / "proven", tmp_path / "hashed"
    files = sample_files()
    for root in (proven, hashed):
        root.mkdir()
        for name, data in files.items():
            (root / name).write_bytes(data)
    for path in hashed.iterdir():
        never_settled(path)
    settle(*proven.iterdir())
    cores = {
        root: Readkeeper(roots=[str(root)], client_settings=SETTINGS) for root in (proven, hashed)
    }
    for core in cores.values():
        core.tokens.warm_up()

    by_proof = list(run_script(cores[proven], proven, loads))
    by_hash = list(run_script(cores[hashed], hashed, loads))

    assert [answer for answer, _ in by_proof] == [answer for answer, _ in by_hash]
    assert [answer["type"] for answer, _ in by_proof] == [kind for *_, kind in SCRIPT]
    # Hashing loads the file for every read; the proof answers each stub without it.
    assert all(loaded for _, loaded in by_hash)
    for (_, loaded), (name, params, kind) in zip(by_proof, SCRIPT, strict=True):
        # A symbol's lines are found in the file's text: its stub is hashed.
        assert loaded != (kind == STUB and "symbol" not in params), (name, params)
    for session in ("", "other"):
        stats = [
            json.dumps(unstructure(core.stats_for(StatsParams(session=session)))).replace(
                str(root), "ROOT"
            )
            for root, core in cores.items()
        ]
        assert stats[0] == stats[1]


def test_a_file_read_too_soon_after_a_change_is_hashed_again(
    core: Readkeeper, workspace: Path, loads: Loads
) -> None:
    path = workspace / "a.txt"
    path.write_text("first\n")
    never_settled(path)
    assert read(core, path)["type"] == "text"
    assert read(core, path)["type"] == "file_unchanged"
    assert loads.count == 2
    # Settled since: the stub that hashes it keeps the stamp, and the next needs no load.
    os.utime(path, ns=(1_700_000_000_123_456_789,) * 2)
    settle(path)
    assert read(core, path)["type"] == "file_unchanged"
    assert read(core, path)["type"] == "file_unchanged"
    assert loads.count == 3


def test_a_rewrite_that_puts_size_and_mtime_back_is_seen(core: Readkeeper, workspace: Path) -> None:
    # What `cp -p`, `rsync -t` or `tar x` of another version can leave: the same size
    # and mtime, other bytes. The ctime the kernel stamped tells them apart.
    path = workspace / "config.ini"
    path.write_text("mode = safe\n")
    settle(path)
    assert read(core, path)["type"] == "text"
    st = os.stat(path)
    path.write_text("mode = fast\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (os.stat(path).st_size, os.stat(path).st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    settle(path)
    again = read(core, path)
    assert again["type"] == "diff" or "mode = fast" in again["file"]["content"], again


def test_a_file_renamed_over_with_the_same_size_and_times_is_seen(
    core: Readkeeper, workspace: Path
) -> None:
    path, twin = workspace / "data.csv", workspace / "twin.csv"
    path.write_text("a,1\n")
    twin.write_text("b,2\n")
    st = os.stat(path)
    os.utime(twin, ns=(st.st_atime_ns, st.st_mtime_ns))
    settle(path, twin)
    assert read(core, path)["type"] == "text"
    os.rename(twin, path)  # another inode, under the same name
    settle(path)
    again = read(core, path)
    assert again["type"] == "diff" or "b,2" in again["file"]["content"], again


def test_a_proven_stub_keeps_what_the_file_held_for_a_later_diff(workspace: Path) -> None:
    # The snapshots are an LRU: a stub without a read must keep the text it stands for
    # as recently used as a read that puts it does, or a diff after a change is lost.
    core = Readkeeper(roots=[str(workspace)])
    core.snapshots = Snapshots(max_entries=3)  # a, b and c; the changed a drops one
    paths = {name: workspace / f"{name}.txt" for name in ("a", "b", "c")}
    for name, path in paths.items():
        path.write_text("".join(f"{name} line {i}\n" for i in range(300)))
    settle(*paths.values())
    assert read(core, paths["a"])["type"] == "text"
    assert read(core, paths["b"])["type"] == "text"
    assert read(core, paths["a"])["type"] == "file_unchanged"  # proven: a is the newest
    assert read(core, paths["c"])["type"] == "text"
    paths["a"].write_text(paths["a"].read_text().replace("a line 150", "a line 150, changed"))
    changed = read(core, paths["a"])  # its new text is kept first: b is the one dropped
    assert changed["type"] == "file_changed", changed
    assert "+a line 150, changed" in changed["file"]["diff"]


def test_what_the_agent_wrote_is_stubbed_without_a_load_once_a_re_read_proved_it(
    core: Readkeeper, workspace: Path, loads: Loads
) -> None:
    # The agent holds what it wrote: a whole re-read stubs (held whole). The write left
    # no stamp (the file had just changed), so the first re-read hashes the file; the
    # stamp it keeps then answers the next one.
    path = workspace / "notes.txt"
    core.write(WriteParams(str(path), "".join(f"note {i}\n" for i in range(40))))
    settle(path)
    assert read(core, path)["type"] == "file_unchanged"
    assert read(core, path)["type"] == "file_unchanged"
    assert loads.count == 1


def test_a_notebook_the_agent_wrote_stubs_as_its_read_does(
    core: Readkeeper, workspace: Path, loads: Loads
) -> None:
    # A write holds a notebook whole, but a notebook read is a view of its own: a stub
    # of it stands for that read (what it saved), never for the write.
    path = workspace / "nb.ipynb"
    core.write(WriteParams(str(path), json.dumps(every_output_notebook())))
    settle(path)
    first = read(core, path)
    assert first["type"] == "notebook"
    assert read(core, path)["type"] == "file_unchanged"
    assert loads.count == 1
    saved = core.stats_for(StatsParams(session=""))["session"]["tokens_saved_by_stubs"]
    assert saved == first["file"]["tokens"] - STUB_TOKENS > 0


class Editor:
    """An editor whose open documents the test sets."""

    def __init__(self) -> None:
        self.open: dict[str, Buffer] = {}

    def get(self, real_path: str) -> Buffer | None:
        return self.open.get(real_path)


def test_an_editor_buffer_opened_since_the_read_is_what_a_re_read_shows(
    workspace: Path, loads: Loads
) -> None:
    editor = Editor()
    core = Readkeeper(roots=[str(workspace)], buffers=editor)
    path = workspace / "main.py"
    path.write_text("print('saved')\n")
    settle(path)
    assert read(core, path)["type"] == "text"
    editor.open[str(path)] = Buffer("print('unsaved')\n", 7)
    again = read(core, path)
    assert again["type"] != "file_unchanged"
    assert "unsaved" in json.dumps(again)
    assert loads.count == 2


async def test_the_server_sees_a_rewrite_that_puts_size_and_mtime_back(
    lsp: Session, workspace: Path
) -> None:
    path = workspace / "notes.md"
    path.write_text("# plan A\n" * 50)
    settle(path)
    assert (await lsp.read(path))["type"] == "text"
    assert (await lsp.read(path))["type"] == "file_unchanged"
    st = os.stat(path)
    path.write_text("# plan B\n" * 50)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    settle(path)
    again = await lsp.read(path)
    assert again["type"] in ("text", "diff"), again
    assert "plan B" in json.dumps(again)
    assert (await lsp.read(path))["type"] == "file_unchanged"


# --- the stamp itself ------------------------------------------------------------------


def _stat(real: os.stat_result, mtime_ns: int, ctime_ns: int) -> os.stat_result:
    fields = list(real)
    fields[8], fields[9] = mtime_ns // 10**9, ctime_ns // 10**9  # st_mtime, st_ctime
    return os.stat_result(fields, {"st_mtime_ns": mtime_ns, "st_ctime_ns": ctime_ns})


def test_a_stamp_proves_nothing_until_the_file_has_settled(tmp_path: Path) -> None:
    real = os.stat(tmp_path)
    changed = 1_700_000_000 * 10**9 + 5
    st = _stat(real, changed - 7, changed)  # the ctime is the later change
    assert proof(st, changed + SETTLED_NS - 1) is None
    assert proof(st, changed + SETTLED_NS) == (
        real.st_dev,
        real.st_ino,
        real.st_size,
        changed - 7,
        changed,
    )
    later_mtime = _stat(real, changed + 9, changed)  # set ahead of the ctime
    assert proof(later_mtime, changed + SETTLED_NS) is None
    assert proof(later_mtime, changed + 9 + SETTLED_NS) is not None


def test_a_filesystem_of_whole_seconds_waits_longer(tmp_path: Path) -> None:
    real = os.stat(tmp_path)
    assert settles_after(real) == SETTLED_NS  # this filesystem keeps nanoseconds
    whole = _stat(real, 1_700_000_000 * 10**9, 1_700_000_002 * 10**9)
    assert settles_after(whole) == COARSE_SETTLED_NS
    assert proof(whole, 1_700_000_002 * 10**9 + SETTLED_NS) is None
    assert proof(whole, 1_700_000_002 * 10**9 + COARSE_SETTLED_NS) is not None
    assert (
        settles_after(_stat(real, 1_700_000_000 * 10**9, 1_700_000_002 * 10**9 + 5)) == SETTLED_NS
    )
    assert (
        settles_after(_stat(real, 1_700_000_000 * 10**9 + 5, 1_700_000_002 * 10**9)) == SETTLED_NS
    )
