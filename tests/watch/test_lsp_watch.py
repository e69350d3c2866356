"""The watcher through the real server: readkeeper/didChangeReadFiles, readkeeper/changes,
the inotify-limit fallback, progress, and shutdown.

Waiting is always a poll with a deadline. "Exactly one notice" is checked after a
sentinel: a later write to another read file, whose notice can only arrive once every
earlier event has been looked at.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

from readkeeper.client import ReadkeeperClient
from watch_helpers import (
    WatchClient,
    Watched,
    external_write_once,
    make,
    max_queued_events,
    needs_a_default_sized_queue,
    os_thread_names,
    save_like_a_formatter,
    serving,
    until,
    user_namespaces_work,
    warned_once,
)

# The fallback from inotify is to polling (with `auto`, it could be to Watchman).
INOTIFY_THEN_POLLING = {"watcher": "inotify", "watch_poll_interval_ms": 100}


class NamespacedClient(WatchClient):
    """Starts the server in a user namespace of its own whose inotify watch limit is
    `watch_limit` (or instance limit, `instance_limit`): the kernel's real ENOSPC (or
    EMFILE), without touching the machine's limits (a user namespace's limits apply to
    the processes inside it only)."""

    def __init__(self, watch_limit: int, instance_limit: int | None = None) -> None:
        super().__init__()
        self.limits = {"max_inotify_watches": watch_limit}
        if instance_limit is not None:
            self.limits["max_inotify_instances"] = instance_limit

    async def start_server(self, *extra_args: str, env: dict[str, str] | None = None) -> None:
        """Start the server inside the user namespace, its limits lowered."""
        serve = shlex.join([sys.executable, "-m", "readkeeper", "serve", *extra_args])
        limits = " && ".join(f"echo {n} > /proc/sys/user/{name}" for name, n in self.limits.items())
        script = f"{limits} && exec {serve}"
        await self.start_io("unshare", "-Ur", "sh", "-c", script, env={**os.environ, **(env or {})})


@pytest_asyncio.fixture
async def server(workspace: Path) -> AsyncIterator[Watched]:
    """A watching server with the default settings."""
    async with serving(workspace) as w:
        await w.ready()
        yield w


# --- one notice per change ------------------------------------------------------------------


async def test_external_write(server: Watched) -> None:
    pushed = await external_write_once(server, "app.py")
    assert pushed["truncated"] is False
    assert await server.changes() == [pushed]  # the agent's channel: the same, once
    assert await server.changes() == []
    stats = await server.request("readkeeper/stats", {"session": ""})
    assert stats["session"]["notices_sent"] >= 2  # app.py and the sentinel
    assert stats["watcher"]["events"] > 0
    assert stats["watcher"]["fallback_active"] is False


async def test_formatter_burst(workspace: Path) -> None:
    async with serving(workspace, {"watch_debounce_ms": 200}) as w:
        await w.ready()
        path = make(workspace / "fmt.py", "x=1\n")
        await w.read("fmt.py")
        save_like_a_formatter(path, "x = 1\n", "y = 2\n", "x = 1\ny = 2\n")
        [pushed] = await w.notice("fmt.py")
        diff = pushed["diff"].splitlines()
        assert ("-x=1" in diff, "+x = 1" in diff, "+y = 2" in diff) == (True, True, True)
        await w.sentinel()
        assert len(w.pushed("fmt.py")) == 1
        assert len(await w.changes()) == 1


async def test_rename(server: Watched, workspace: Path) -> None:
    make(workspace / "a.txt", "a\n")
    await server.read("a.txt")
    os.rename(workspace / "a.txt", workspace / "b.txt")
    [pushed] = await server.notice("a.txt")
    assert (pushed["kind"], pushed["new_path"]) == ("moved", str(workspace / "b.txt"))
    await server.sentinel()
    assert len(server.pushed("a.txt")) == 1
    assert [c["kind"] for c in await server.changes()] == ["moved"]


async def test_delete_and_create(server: Watched, workspace: Path) -> None:
    path = make(workspace / "d.txt", "first\n")
    await server.read("d.txt")
    path.unlink()
    [deleted] = await server.notice("d.txt")
    assert deleted["kind"] == "deleted"
    assert [c["kind"] for c in await server.changes()] == ["deleted"]
    path.write_text("second\n")
    created = (await server.notice("d.txt", count=2))[1]
    assert created["kind"] == "created"
    assert "-first" in created["diff"]
    assert "+second" in created["diff"]
    await server.sentinel()
    assert len(server.pushed("d.txt")) == 2
    assert [c["kind"] for c in await server.changes()] == ["created"]


async def test_own_edits_are_not_reported_back(server: Watched, workspace: Path) -> None:
    make(workspace / "e.py", "n = 1\n")
    await server.read("e.py", session="agent")
    await server.read("e.py", session="other")
    await server.request(
        "readkeeper/edit",
        {"file_path": "e.py", "old_string": "n = 1", "new_string": "n = 2", "session": "agent"},
    )
    [pushed] = await server.notice("e.py", session="other")  # it read the old content
    assert "+n = 2" in pushed["diff"]
    await server.sentinel(session="agent")
    assert server.pushed("e.py", session="agent") == []
    assert await server.changes("agent") == []
    await server.request(
        "readkeeper/write", {"file_path": "e.py", "content": "n = 3\n", "session": "agent"}
    )
    await server.notice("e.py", session="other", count=2)
    await server.sentinel(session="agent")
    assert server.pushed("e.py", session="agent") == []


async def test_a_session_that_never_read_the_file_gets_nothing(
    server: Watched, workspace: Path
) -> None:
    path = make(workspace / "s.txt", "1\n")
    await server.read("s.txt", session="reader")
    path.write_text("2\n")
    await server.notice("s.txt", session="reader")
    await server.sentinel(session="bystander")
    assert server.pushed("s.txt", session="bystander") == []
    assert await server.changes("bystander") == []


async def test_ignored_folders_produce_nothing(workspace: Path) -> None:
    make(workspace / ".gitignore", "out/\n")
    files = ["node_modules/m/index.js", ".venv/lib/site.py", "out/gen.txt", "src/ok.py"]
    for name in files:
        make(workspace / name, "1\n")
    async with serving(workspace) as w:
        await w.ready()
        for name in files:
            await w.read(name)
        for name in files:
            (workspace / name).write_text("2\n")
        await w.notice("src/ok.py")
        await w.sentinel()
        for name in files[:-1]:
            assert w.pushed(name) == [], name
        # No event came of them, but `changes` looks at every read file no watch covers
        # (watch/unwatched.py): "no changes" is never said of a file nobody watched.
        reported = sorted(c["file_path"] for c in await w.changes())
        assert reported == sorted(str(workspace / name) for name in files)


async def test_workspace_folders_added_later_are_watched(server: Watched, tmp_path: Path) -> None:
    other = tmp_path / "second"
    make(other / "z.txt", "z\n")
    uri = other.as_uri()
    server.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=uri, name="second")], removed=[]
            )
        )
    )

    async def second_watched() -> bool:
        watcher = (await server.request("readkeeper/stats"))["watcher"]
        return str(other) in watcher["watched_roots"]

    await until(second_watched, "the added folder to be watched")
    await server.read(str(other / "z.txt"))
    (other / "z.txt").write_text("zz\n")
    notice = await until(
        lambda: [
            c
            for n in server.client.notices  # type: ignore[attr-defined]
            for c in n["changes"]
            if c["file_path"] == str(other / "z.txt")
        ],
        "a notice from the added folder",
    )
    assert "+zz" in notice[0]["diff"]


# --- fallback, progress, shutdown -----------------------------------------------------------


@pytest.fixture
def user_namespaces() -> None:
    """Skip where `unshare -Ur` cannot lower an inotify limit."""
    if not user_namespaces_work():
        pytest.skip(
            "needs unprivileged user namespaces (unshare -Ur) to lower the inotify limit safely"
        )


def needs_userns(test: Callable[..., Any]) -> Callable[..., Any]:
    """Skips where user namespaces are blocked; in CI (READKEEPER_NO_SKIP=1) that skip is
    a failure."""
    marked: Callable[..., Any] = pytest.mark.ci_required(
        pytest.mark.usefixtures("user_namespaces")(test)
    )
    return marked


def fallback_warnings(client: ReadkeeperClient) -> list[str]:
    """The fallback warnings in the log (`warned_once` checks what the user is shown)."""
    return [m.message for m in client.log_messages if "inotify" in m.message]


@needs_userns
async def test_inotify_limit_at_setup_falls_back_to_polling(workspace: Path) -> None:
    for i in range(12):
        make(workspace / f"pkg{i}" / "mod.py", f"V = {i}\n")
    client = NamespacedClient(watch_limit=4)  # 13 folders need 13 watches
    async with serving(workspace, INOTIFY_THEN_POLLING, client) as w:
        watcher = await w.ready()
        assert watcher["state"] == "polling"
        assert watcher["fallback_active"] is True
        assert "inotify watches" in watcher["fallback_reason"]
        assert "+V = 'three'" in (await w.change("pkg3/mod.py", "V = 'three'\n"))["diff"]
        (workspace / "pkg3" / "mod.py").unlink()
        assert (await w.notice("pkg3/mod.py", count=2))[1]["kind"] == "deleted"
        [warning] = await until(lambda: fallback_warnings(client), "the fallback warning")
        assert "max_user_watches" in warning
        assert "watch_exclude" in warning  # what to do about it
        assert "max_user_watches" in await warned_once(w, "inotify")
        assert len(fallback_warnings(client)) == 1  # said once


@needs_userns
async def test_inotify_limit_reached_later_falls_back_once(workspace: Path) -> None:
    make(workspace / "src" / "a.py", "A = 1\n")
    client = NamespacedClient(watch_limit=2)  # exactly the root and src
    async with serving(workspace, INOTIFY_THEN_POLLING, client) as w:
        assert (await w.ready())["state"] == "watching"
        await w.read("src/a.py")
        for i in range(3):  # each new folder needs a watch the kernel now refuses
            (workspace / f"new{i}").mkdir()

        async def polling() -> bool:
            watcher = (await w.request("readkeeper/stats"))["watcher"]
            return bool(watcher["state"] == "polling")

        await until(polling, "the fallback after the limit was reached")
        (workspace / "src" / "a.py").write_text("A = 2\n")
        [pushed] = await w.notice("src/a.py")
        assert "+A = 2" in pushed["diff"]
        await until(lambda: fallback_warnings(client), "the fallback warning")
        await warned_once(w, "inotify")
        assert len(fallback_warnings(client)) == 1


@needs_userns
async def test_inotify_instance_limit_falls_back_to_polling(workspace: Path) -> None:
    make(workspace / "i.txt", "1\n")
    client = NamespacedClient(watch_limit=100, instance_limit=0)  # EMFILE: no inotify at all
    async with serving(workspace, INOTIFY_THEN_POLLING, client) as w:
        watcher = await w.ready()
        assert watcher["state"] == "polling"
        assert "max_user_instances = 0" in watcher["fallback_reason"]
        assert "+2" in (await w.change("i.txt", "2\n"))["diff"]
        assert len(await until(lambda: fallback_warnings(client), "the warning")) == 1


@needs_a_default_sized_queue
async def test_a_kernel_queue_overflow_loses_no_change(workspace: Path) -> None:
    # The server is stopped while more events than the kernel queues pile up; the read
    # file changes last, when its event can only be dropped. After the overflow the
    # watcher re-checks the files agents read.
    flood = [make(workspace / "flood" / f"f{i:03d}.txt", "0\n") for i in range(500)]
    victim = make(workspace / "victim.txt", "before\n")
    async with serving(workspace) as w:
        await w.ready()
        await w.read("victim.txt")
        with w.paused():
            for i in range(max_queued_events() // 2 + 1_000):  # about two events each
                fd = os.open(flood[i % len(flood)], os.O_WRONLY | os.O_TRUNC)
                os.write(fd, b"%d\n" % i)
                os.close(fd)
            victim.write_text("after\n")
        [pushed] = await w.notice("victim.txt", timeout=60)
        assert "+after" in pushed["diff"]
        assert (await w.request("readkeeper/stats"))["watcher"]["overflows"] >= 1


async def test_setup_progress_is_reported(server: Watched) -> None:
    client = server.client
    assert isinstance(client, WatchClient)
    await until(lambda: "end" in _kinds(client), "the end of the setup's progress")
    kinds = _kinds(client)
    assert kinds[0] == "begin"
    assert kinds[-1] == "end"


def _kinds(client: WatchClient) -> list[str]:
    return [v.get("kind") if isinstance(v, dict) else v.kind for v in client.progress]


async def test_shutdown_leaves_no_watcher_thread(workspace: Path) -> None:
    make(workspace / "a" / "b.txt", "b\n")
    async with serving(workspace) as w:
        await w.ready()
        await w.read("a/b.txt")
        pid = w.pid
        running = os_thread_names(pid)
        assert {"rk-watch-worker", "rk-watch-read"} <= set(running), running
        # The server has answered `shutdown` and not exited yet: its watcher threads are
        # gone (an OS thread ends a moment after its work is done, hence the wait).
        await w.exit_after(
            (
                lambda: not [n for n in os_thread_names(pid) if n.startswith("rk-")],
                "the watcher's threads to end",
            ),
            (lambda: os.path.exists(f"/proc/{pid}"), "still alive: only the watcher stopped"),
        )


async def test_a_hostile_gitignore_does_not_stall_the_watcher(workspace: Path) -> None:
    # A repository may ship a .gitignore that is a FIFO (opening it would block for good)
    # or a symlink to /dev/zero (reading it never ends).
    os.mkfifo(workspace / ".gitignore")
    make(workspace / "deep" / "er" / "file.txt", "one\n")
    (workspace / "deep" / ".gitignore").symlink_to("/dev/zero")
    async with serving(workspace) as w:
        await w.ready()
        assert "+two" in (await w.change("deep/er/file.txt", "two\n"))["diff"]
