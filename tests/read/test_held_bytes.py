"""One budget for the bytes of files that calls in flight hold (files/held_bytes.py):
however many large reads run at once, at most the budget's worth of file bytes is held,
the rest wait their turn (or are refused `busy` past a few waiting), and everything is
given back after (attack round 12, attempt 7: eight 95 MB reads at once held 2 GB)."""

from __future__ import annotations

import asyncio
import io
import os
import threading
from pathlib import Path

import pytest
from peak_rss import mcp_server_pid, vm_peak_mb
from PIL import Image

from helpers import wait_until
from mcp_helpers import call, mcp_env, private_runtime_dir, stdio_client
from readkeeper.errors import ReadkeeperError
from readkeeper.files import held_bytes
from readkeeper.files.fileio import read_at_most

MB = 1 << 20
SIZE = 60 * MB  # a 16 x 16 PNG with 60 MB after it: read whole, decoded in a moment
READS = 6


async def test_many_large_reads_at_once_hold_at_most_the_budget_over_mcp(
    workspace: Path,
) -> None:
    picture = io.BytesIO()
    Image.new("RGB", (16, 16)).save(picture, "PNG")
    (workspace / "big0.png").write_bytes(picture.getvalue() + os.urandom(MB) * (SIZE // MB))
    for n in range(1, READS):
        os.link(workspace / "big0.png", workspace / f"big{n}.png")
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        pid = mcp_server_pid(workspace)
        answers = await asyncio.gather(
            *(
                client.call_tool("read", {"file_path": f"big{n}.png", "force": True})
                for n in range(READS)
            )
        )
        stats = (await call(client, "stats"))["file_bytes"]
        peak_mb = vm_peak_mb(pid)
    for answer in answers:
        said = " ".join(getattr(block, "text", "") for block in answer.content)
        if answer.is_error:  # only a refusal that says why and what to do
            assert "kind: too_large" in said, said
            assert "Call again once" in said, said
        else:
            assert any(block.type == "image" for block in answer.content), said
    at_once = stats["total_bytes"] // SIZE
    assert at_once < READS
    assert stats["peak_bytes"] <= stats["total_bytes"]
    assert 1 <= stats["peak_calls"] <= at_once
    assert (stats["held_bytes"], stats["calls_holding"], stats["waiting"]) == (0, 0, 0)
    # The file's bytes are read once (no second copy): 3 x 60 MB at most, beside the
    # server's own ~200 MB; unbounded, six reads at twice the file passed 700 MB.
    assert peak_mb < 200 + at_once * SIZE / MB * 1.5, peak_mb


def _load(path: Path, name: str, loaded: threading.Event, done: threading.Event) -> None:
    with held_bytes.call(name), path.open("rb") as file:
        read_at_most(file.fileno(), 10 * MB)
        loaded.set()
        done.wait(30)


def test_a_call_waits_for_room_and_past_a_few_waiting_one_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = held_bytes.Budget(total=4 * MB)
    monkeypatch.setattr(held_bytes, "_budget", budget)
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 3 * MB)
    small = tmp_path / "small.txt"
    small.write_bytes(b"x" * 1000)
    release = threading.Event()
    first = threading.Event()
    holder = threading.Thread(target=_load, args=(big, "big", first, release))
    holder.start()
    first.wait(30)
    assert budget.status()["held_bytes"] == 3 * MB
    waiting = [threading.Event() for _ in range(held_bytes.MAX_WAITING)]
    waiters = [
        threading.Thread(target=_load, args=(big, f"w{n}", loaded, release))
        for n, loaded in enumerate(waiting)
    ]
    for thread in waiters:
        thread.start()
    wait_until(lambda: budget.status()["waiting"] == held_bytes.MAX_WAITING, "waiters")
    assert not any(loaded.is_set() for loaded in waiting)
    with (
        pytest.raises(ReadkeeperError) as refused,
        held_bytes.call(str(big)),
        big.open("rb") as file,
    ):
        read_at_most(file.fileno(), 10 * MB)
    assert refused.value.kind == "too_large"
    assert refused.value.data["reason"] == "busy"
    # A small file never waits, and is not counted.
    with held_bytes.call(str(small)), small.open("rb") as file:
        assert len(read_at_most(file.fileno(), MB)) == 1000
    release.set()
    for thread in [holder, *waiters]:
        thread.join(30)
    assert all(loaded.is_set() for loaded in waiting)  # each had its turn
    status = budget.status()
    assert status["peak_bytes"] <= 4 * MB
    assert status["peak_calls"] == 1
    assert (status["held_bytes"], status["refused"]) == (0, 1)


def test_a_call_holding_bytes_never_waits_on_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = held_bytes.Budget(total=4 * MB)
    monkeypatch.setattr(held_bytes, "_budget", budget)
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 3 * MB)
    with held_bytes.call("both"):
        for _ in range(2):
            with big.open("rb") as file:
                assert len(read_at_most(file.fileno(), 10 * MB)) == 3 * MB
        assert budget.status()["calls_holding"] == 1
    assert budget.status()["held_bytes"] == 0
