"""The Watchman backend through the real server, against a Watchman service each test
starts for itself (never the machine's): change notices, ignore rules, `auto`'s choice,
the fallback when Watchman cannot be used or dies, and the re-check of read files when
the watch is new to Watchman.

What happens while nobody could notice it (a service killed, a watch removed) is made
to happen while the server is stopped (SIGSTOP), so only the re-check can report it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from watch_helpers import (
    PrivateWatchman,
    Watched,
    make,
    os_thread_names,
    shown_warnings,
    until,
    watched,
    watchman_missing,
)

WATCHMAN = {"watcher": "watchman"}


@pytest.fixture
def service() -> Iterator[PrivateWatchman]:
    why = watchman_missing()
    if why is not None:
        pytest.skip(why)
    started = PrivateWatchman().start()
    try:
        yield started
    finally:
        started.close()


@pytest_asyncio.fixture
async def server(workspace: Path, service: PrivateWatchman) -> AsyncIterator[Watched]:
    w = await watched(workspace, WATCHMAN, env=service.env)
    try:
        watcher = await w.ready()
        assert (watcher["backend"], watcher["state"]) == ("watchman", "watching"), watcher
        yield w
    finally:
        await w.client.close()


def subscribers(service: PrivateWatchman, root: Path) -> list[str]:
    answer = service.command("debug-get-subscriptions", str(root))
    return [s["info"] for s in answer.get("subscribers", [])]


async def backend_is(w: Watched, backend: str) -> dict[str, Any]:
    async def now() -> dict[str, Any] | None:
        watcher = await w.watcher()
        using = (watcher.get("backend"), watcher["state"])  # no backend before the setup
        return watcher if using == (backend, "watching") else None

    found: dict[str, Any] = await until(now, f"the watcher to watch with {backend}")
    return found


# --- notices --------------------------------------------------------------------------------


@pytest.mark.ci_required
async def test_an_external_write_is_one_notice(server: Watched, workspace: Path) -> None:
    path = make(workspace / "src" / "app.py", "x = 1\n")
    await server.read("src/app.py")
    path.write_text("x = 2\n")
    [pushed] = await server.notice("src/app.py")
    assert pushed["kind"] == "modified"
    assert "-x = 1" in pushed["diff"]
    assert "+x = 2" in pushed["diff"]
    await server.sentinel()
    assert len(server.pushed("src/app.py")) == 1
    watcher = await server.watcher()
    assert watcher["watched_roots"] == [str(workspace)]
    assert watcher["events"] > 0
    assert watcher["fallback_active"] is False


@pytest.mark.ci_required
async def test_a_delete_and_a_rename(server: Watched, workspace: Path) -> None:
    gone = make(workspace / "gone.txt", "bye\n")
    make(workspace / "a.txt", "moving\n")
    await server.read("gone.txt")
    await server.read("a.txt")
    gone.unlink()
    [deleted] = await server.notice("gone.txt")
    assert deleted["kind"] == "deleted"
    # Watchman reports a rename as a delete and a create; their content pairs them.
    (workspace / "a.txt").rename(workspace / "b.txt")
    [moved] = await server.notice("a.txt")
    assert (moved["kind"], moved["new_path"]) == ("moved", str(workspace / "b.txt"))


@pytest.mark.ci_required
async def test_ignored_paths_produce_nothing(workspace: Path, service: PrivateWatchman) -> None:
    make(workspace / ".gitignore", "out/\n")
    files = ["out/gen.txt", "node_modules/m/index.js", "src/late.txt", "src/ok.py"]
    for name in files:
        make(workspace / name, "1\n")
    w = await watched(workspace, WATCHMAN, env=service.env)
    try:
        await backend_is(w, "watchman")
        for name in [".gitignore", *files]:
            await w.read(name)
        for name in files[:2]:
            (workspace / name).write_text("2\n")

        async def skipped() -> bool:  # judged by the .gitignore as it was
            return bool((await w.watcher())["ignored_events"] >= 2)

        await until(skipped, "the ignored paths' events")
        # A .gitignore edit applies at once (its own notice says it was seen).
        (workspace / ".gitignore").write_text("out/\nsrc/late.txt\n")
        await w.notice(".gitignore")
        (workspace / "src" / "late.txt").write_text("2\n")
        (workspace / "src" / "ok.py").write_text("2\n")
        await w.notice("src/ok.py")
        await w.sentinel()
        for name in files[:3]:
            assert w.pushed(name) == [], name
        assert (await w.watcher())["ignored_events"] >= 3
    finally:
        await w.client.close()


# --- auto -----------------------------------------------------------------------------------


@pytest.mark.ci_required
async def test_auto_uses_watchman_when_it_already_watches_the_workspace(
    workspace: Path, service: PrivateWatchman
) -> None:
    service.command("watch-project", str(workspace))
    make(workspace / "a.txt", "1\n")
    w = await watched(workspace, env=service.env)
    try:
        await backend_is(w, "watchman")
        await w.read("a.txt")
        (workspace / "a.txt").write_text("2\n")
        [pushed] = await w.notice("a.txt")
        assert "+2" in pushed["diff"]
    finally:
        await w.client.close()


@pytest.mark.ci_required
async def test_auto_uses_inotify_when_watchman_does_not_watch_a_small_workspace(
    workspace: Path, service: PrivateWatchman
) -> None:
    make(workspace / "a.txt", "1\n")
    w = await watched(workspace, env=service.env)
    try:
        watcher = await backend_is(w, "inotify")
        assert watcher["fallback_active"] is False
        await w.read("a.txt")
        (workspace / "a.txt").write_text("2\n")
        await w.notice("a.txt")
        assert service.watches() == []  # auto started no watch
    finally:
        await w.client.close()


@pytest.mark.ci_required
async def test_watcher_inotify_leaves_watchman_alone(
    workspace: Path, service: PrivateWatchman
) -> None:
    service.command("watch-project", str(workspace))  # `auto` would use this watch
    w = await watched(workspace, {"watcher": "inotify"}, env=service.env)
    try:
        watcher = await backend_is(w, "inotify")
        assert watcher["fallback_reason"] is None
        assert subscribers(service, workspace) == []
    finally:
        await w.client.close()


@pytest.mark.ci_required
async def test_auto_hands_a_big_workspace_to_watchman(
    workspace: Path, service: PrivateWatchman
) -> None:
    for i in range(10_001):  # one more folder than the inotify walk may pass
        (workspace / f"d{i // 100}" / f"e{i}").mkdir(parents=True)
    make(workspace / "d0" / "e0" / "a.txt", "1\n")
    w = await watched(workspace, env=service.env)
    try:
        watcher = await backend_is(w, "watchman")
        assert watcher["fallback_active"] is False  # not a step down
        assert shown_warnings(w.client, "Watchman") == []
        assert service.watches() == [str(workspace)]
        await w.read("d0/e0/a.txt")
        (workspace / "d0" / "e0" / "a.txt").write_text("2\n")
        await w.notice("d0/e0/a.txt")
    finally:
        await w.client.close()


# --- fallback and re-checks -----------------------------------------------------------------


@pytest.mark.parametrize(
    "env",
    [
        pytest.param({"WATCHMAN_SOCK": "/nonexistent/watchman/sock"}, id="no-socket"),
        pytest.param({"PATH": "/nonexistent"}, id="not-installed"),
    ],
)
async def test_watchman_unavailable_falls_back_to_inotify(
    workspace: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WATCHMAN_SOCK", raising=False)
    make(workspace / "a.txt", "1\n")
    w = await watched(workspace, WATCHMAN, env=env)
    try:
        watcher = await backend_is(w, "inotify")
        assert watcher["fallback_active"] is True
        assert "Watchman" in watcher["fallback_reason"]
        await w.read("a.txt")
        (workspace / "a.txt").write_text("2\n")
        await w.notice("a.txt")
        [shown] = await until(lambda: shown_warnings(w.client, "Watchman"), "the warning shown")
        assert "inotify instead" in shown
        await w.sentinel()
        assert len(shown_warnings(w.client, "Watchman")) == 1
    finally:
        await w.client.close()


@pytest.mark.ci_required
async def test_watchman_killed_mid_session_falls_back_and_rechecks(
    server: Watched, workspace: Path, service: PrivateWatchman
) -> None:
    path = make(workspace / "a.txt", "before\n")
    await server.read("a.txt")
    await server.sentinel()  # the creation of a.txt is looked at: no notice can come of it
    server.pause()
    try:
        service.kill()
        path.write_text("while nobody watched\n")  # only a re-check can report this
    finally:
        server.resume()
    [pushed] = await server.notice("a.txt")
    assert "+while nobody watched" in pushed["diff"]
    watcher = await backend_is(server, "inotify")
    assert watcher["fallback_active"] is True
    path.write_text("after\n")  # inotify watches now
    await server.notice("a.txt", count=2)
    [shown] = await until(lambda: shown_warnings(server.client, "Watchman"), "the warning shown")
    assert "inotify instead" in shown
    await server.sentinel()
    assert len(shown_warnings(server.client, "Watchman")) == 1


@pytest.mark.ci_required
async def test_a_watch_new_to_watchman_rechecks_the_read_files(
    server: Watched, workspace: Path, service: PrivateWatchman
) -> None:
    # Someone removes the watch; readkeeper (watcher=watchman) watches the root again,
    # but the new watch's clock cannot say what changed before it: a re-check does.
    path = make(workspace / "a.txt", "before\n")
    await server.read("a.txt")
    await server.sentinel()  # the creation of a.txt is looked at: no notice can come of it
    server.pause()
    try:
        service.command("watch-del", str(workspace))
        path.write_text("while unwatched\n")
    finally:
        server.resume()
    [pushed] = await server.notice("a.txt")
    assert "+while unwatched" in pushed["diff"]
    watcher = await backend_is(server, "watchman")
    assert watcher["fresh_instances"] == 1, watcher
    assert watcher["fallback_active"] is False
    assert service.watches() == [str(workspace)]
    path.write_text("after\n")  # the new subscription reports changes
    await server.notice("a.txt", count=2)
    assert shown_warnings(server.client, "Watchman") == []


@pytest.mark.ci_required
async def test_shutdown_ends_the_subscription_and_keeps_the_watch(
    workspace: Path, service: PrivateWatchman
) -> None:
    w = await watched(workspace, WATCHMAN, env=service.env)
    closed = False
    try:
        await backend_is(w, "watchman")
        assert "rk-watchman" in os_thread_names(w.pid)
        assert subscribers(service, workspace) == ["readkeeper"]
        await w.client.shutdown_async(None)
        await until(lambda: "rk-watchman" not in os_thread_names(w.pid), "the thread to end")
        await until(lambda: not subscribers(service, workspace), "the subscription to end")
        w.client.exit(None)
        closed = True
        await w.client.stop()  # type: ignore[no-untyped-call]
    finally:
        if not closed:
            await w.client.close()
    assert service.watches() == [str(workspace)]  # others may use it: never removed
