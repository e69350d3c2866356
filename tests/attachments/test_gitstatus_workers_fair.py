"""Who is blamed when git status runs out of time: a root is remembered as stalled only
when its own status ran in a worker past its own timeout. A root that waited for a
worker (behind other roots' stalled statuses), whose worker started late, died (SIGKILL
from outside) or was stopped (SIGSTOP), is never blamed (attack round 30: a healthy
root queued behind four stalled ones was refused for 5 minutes, "ask the user to look
at the repository"; a killed worker made healthy roots `internal`, a stopped one made
them `too_large` and remembered)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from test_gitstatus_stalls import SETTINGS, fifo_for_head_commit, repository

from readkeeper.attachments import gitstatus, gitstatus_stalls, gitstatus_workers
from readkeeper.core import Readkeeper
from readkeeper.files import lifeline
from readkeeper.protocol import AttachmentsParams

ASK_AGAIN = "Ask for the attachments again"


def roots_of(tmp_path: Path, kinds: str) -> list[str]:
    """A repository per letter of `kinds`: S stalls (its commit a FIFO), H is healthy."""
    made = []
    for n, kind in enumerate(kinds):
        root = (tmp_path / f"{kind.lower()}{n}").resolve()
        root.mkdir()
        repository(root)
        if kind == "S":
            fifo_for_head_commit(root)
        made.append(str(root))
    return made


def said(core: Readkeeper) -> dict[str, str]:
    """Each root's git status, or why it was dropped, by the root's last name."""
    result = core.attachments(AttachmentsParams(types=["git_status"]))
    got = {Path(a["source"]).name: a["content"] for a in result["attachments"]}
    got.update({Path(d["source"]).name: d["reason"] for d in result["dropped"]})
    return got


def remembered() -> set[str]:
    return {Path(root).name for root in gitstatus_stalls._MEMORY}


@pytest.fixture
def two_workers(monkeypatch: pytest.MonkeyPatch) -> Any:
    workers = gitstatus_workers.Workers(2)
    monkeypatch.setattr(gitstatus_workers, "WORKERS", workers)
    monkeypatch.setattr(gitstatus, "WORKERS", workers, raising=False)
    yield workers
    workers.stop()


def test_a_healthy_root_behind_stalled_ones_gets_its_status_and_is_not_blamed(
    tmp_path: Path, two_workers: Any
) -> None:
    """Four stalled roots, two workers, the healthy root last: it waited for a worker
    until its own timeout and was told to ask again, or remembered as stalled."""
    core = Readkeeper(roots=roots_of(tmp_path, "SSSSH"), client_settings=SETTINGS)
    try:
        first = said(core)
        assert "branch main, clean" in first["h4"], first
        for name in ("s0", "s1", "s2", "s3"):  # each ran its own 2 s: a look named the FIFO
            assert "named pipe" in first[name], first
            assert ASK_AGAIN not in first[name], first
        assert remembered() >= {"s0", "s1", "s2", "s3"}
        assert "h4" not in remembered()
        second = said(core)
        assert "branch main, clean" in second["h4"], second
        for name in ("s0", "s1", "s2", "s3"):
            assert "not run again" in second[name], second
    finally:
        core.close()
        for name in ("s0", "s1", "s2", "s3"):
            gitstatus_stalls.forget(str((tmp_path / name).resolve()))


def test_ten_roots_six_stalled_are_all_tried_in_the_first_call(tmp_path: Path) -> None:
    """The healthy roots behind four stalled ones were told to ask again, or (the
    attacker's SHSHSSHSSH, 1 run in 3) remembered as stalled. Spare workers start while
    every busy one looks stalled, so each root is tried in the first call."""
    kinds = "SSSSSSHHHH"
    core = Readkeeper(roots=roots_of(tmp_path, kinds), client_settings=SETTINGS)
    stalled = [f"s{n}" for n, kind in enumerate(kinds) if kind == "S"]
    try:
        first = said(core)
        for n, kind in enumerate(kinds):
            name = f"{kind.lower()}{n}"
            if kind == "H":
                assert "branch main, clean" in first[name], first
            else:
                assert "named pipe" in first[name], first
        assert remembered() >= set(stalled)
        assert not {"h6", "h7", "h8", "h9"} & remembered()
    finally:
        core.close()
        for name in stalled:
            gitstatus_stalls.forget(str((tmp_path / name).resolve()))


def test_concurrent_calls_each_get_the_healthy_roots_status(tmp_path: Path) -> None:
    """Ten concurrent calls over stalled and healthy roots: each ran every stalled root
    again, and 3-4 of them got no healthy root's status (attack round 30). A root's
    status in flight is shared by the calls that want it."""
    core = Readkeeper(roots=roots_of(tmp_path, "SSSSH"), client_settings=SETTINGS)
    got: list[dict[str, str]] = []
    try:
        calls = [threading.Thread(target=lambda: got.append(said(core))) for _ in range(6)]
        for call in calls:
            call.start()
        for call in calls:
            call.join()
    finally:
        core.close()
        for n in range(4):
            gitstatus_stalls.forget(str((tmp_path / f"s{n}").resolve()))
    assert len(got) == 6
    for each in got:
        assert "branch main, clean" in each["h4"], each
        for n in range(4):
            assert ASK_AGAIN not in each[f"s{n}"], each
    assert "h4" not in remembered()


def hold(monkeypatch: pytest.MonkeyPatch, do: Any) -> list[int]:
    """`do(process)` to the first worker as it is handed to a status (after it started
    and was checked alive by the code before the fix); the pids it was done to."""
    done: list[int] = []
    real = gitstatus_workers.Worker.ready

    def ready(self: gitstatus_workers.Worker, *args: Any) -> Any:
        process = real(self, *args)
        if not done:
            done.append(process.pid)
            do(process)
        return process

    monkeypatch.setattr(gitstatus_workers.Worker, "ready", ready)
    return done


def dead(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def late(_process: Any) -> None:
    time.sleep(2.5)  # past the 2 s git_timeout_ms, before the status was sent


def killed(process: Any) -> None:
    os.kill(process.pid, signal.SIGKILL)
    while not dead(process.pid):
        time.sleep(0.01)


def stopped(process: Any) -> None:
    os.kill(process.pid, signal.SIGSTOP)


@pytest.mark.parametrize("do", [late, killed, stopped])
def test_a_worker_late_killed_or_stopped_is_not_the_repositorys_fault(
    tmp_path: Path, two_workers: Any, monkeypatch: pytest.MonkeyPatch, do: Any
) -> None:
    [root] = roots_of(tmp_path, "H")
    done = hold(monkeypatch, do)
    core = Readkeeper(roots=[root], client_settings=SETTINGS)
    try:
        got = said(core)
    finally:
        core.close()
    assert done, "the worker was never handed to a status"
    assert "branch main, clean" in got["h0"], got
    assert "h0" not in remembered()
    if do is stopped:  # killed and replaced, not left over
        assert dead(done[0])


def test_a_worker_killed_while_it_starts_is_started_again(
    tmp_path: Path, two_workers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL of workers just started (after a timeout, one is started for the next
    root): "its reader (pygit2) did not start", `internal`, for a healthy root."""
    [root] = roots_of(tmp_path, "H")
    done: list[int] = []
    real = lifeline.spawn

    def spawn(start: Any) -> Any:
        process = real(start)
        if not done:
            done.append(process.pid)
            killed(process)
        return process

    monkeypatch.setattr(lifeline, "spawn", spawn)
    core = Readkeeper(roots=[root], client_settings=SETTINGS)
    try:
        got = said(core)
    finally:
        core.close()
    assert done
    assert "branch main, clean" in got["h0"], got


def test_a_worker_stopped_as_its_status_runs_is_not_the_repositorys_fault(
    tmp_path: Path, two_workers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 32: SIGSTOP of the worker after its status was sent (past the ping) made a
    healthy root remembered as stalled for 5 minutes."""
    [root] = roots_of(tmp_path, "H")
    started = hold(monkeypatch, lambda process: None)
    real = gitstatus.read_line
    done: list[int] = []

    def read_line(fd: int, deadline: float) -> bytes:
        if not done:
            done.append(started[0])
            os.kill(started[0], signal.SIGSTOP)
        return real(fd, deadline)

    monkeypatch.setattr(gitstatus, "read_line", read_line)
    core = Readkeeper(roots=[root], client_settings=SETTINGS)
    try:
        first = said(core)
        assert done, "the status was never sent"
        assert "h0" not in remembered(), first
        # Said as what happened: not "took longer than ... raise the setting" (round 33).
        assert "stopped from outside" in first["h0"], first
        assert "attachments_timeout_ms" not in first["h0"], first
        assert "branch main, clean" in said(core)["h0"]
    finally:
        core.close()
    assert dead(done[0])  # killed and replaced, not left stopped


def test_a_stopped_child_of_a_worker_counts_as_its_worker_stopped() -> None:
    """Round 34: SIGSTOP of the process a worker started for the status (its confined
    reader), not of the worker, made a healthy root remembered as stalled."""
    parent = subprocess.Popen(["sh", "-c", "sleep 30 & wait"])
    try:
        children: list[int] = []
        for _ in range(200):  # the shell starts its child
            with open(f"/proc/{parent.pid}/task/{parent.pid}/children") as listed:
                children = [int(pid) for pid in listed.read().split()]
            if children:
                break
            time.sleep(0.01)
        assert children
        assert not gitstatus_workers.stopped(parent.pid)
        os.kill(children[0], signal.SIGSTOP)
        for _ in range(200):
            if gitstatus_workers.stopped(parent.pid):
                break
            time.sleep(0.01)
        assert gitstatus_workers.stopped(parent.pid)
        os.kill(children[0], signal.SIGKILL)
    finally:
        parent.kill()
        parent.wait()
