"""The Watchman backend through the real server, against a Watchman service each test
starts for itself (never the machine's): change notices, ignore rules, `auto`'s choice,
the fallback when Watchman cannot be used or dies, and the re-check of read files when
the watch is new to Watchman.

What happens while nobody could notice it (a service killed, a watch removed) is made
to happen while the server is stopped (SIGSTOP), so only the re-check can report it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from watch_helpers import (
    Watched,
    external_write_once,
    make,
    os_thread_names,
    serving,
    shown_warnings,
    until,
    warned_once,
    watchman_missing,
)
from watchman_service import PrivateWatchman

WATCHMAN = {"watcher": "watchman"}


@pytest.fixture
def service() -> Iterator[PrivateWatchman]:
    """A Watchman service of the test's own (skipped where Watchman is missing)."""
    why = watchman_missing()
    if why is not None:
        pytest.skip(why)
    with PrivateWatchman() as started:
        yield started


@pytest_asyncio.fixture
async def server(workspace: Path, service: PrivateWatchman) -> AsyncIterator[Watched]:
    """A server watching with that service (`watcher` `watchman`)."""
    async with serving(workspace, WATCHMAN, env=service.env) as w:
        watcher = await w.ready()
        assert (watcher["backend"], watcher["state"]) == ("watchman", "watching"), watcher
        yield w


def subscribers(service: PrivateWatchman, root: Path) -> list[str]:
    """The names of the subscriptions to `root`'s watch."""
    answer = service.command("debug-get-subscriptions", str(root))
    return [s["info"] for s in answer.get("subscribers", [])]


async def backend_is(w: Watched, backend: str) -> dict[str, Any]:
    """Wait until the watcher watches with `backend`: its status."""

    async def now() -> dict[str, Any] | None:
        watcher = await w.watcher()
        using = (watcher.get("backend"), watcher["state"])  # no backend before the setup
        return watcher if using == (backend, "watching") else None

    found: dict[str, Any] = await until(now, f"the watcher to watch with {backend}")
    return found


async def changed_unseen(server: Watched, name: str, meanwhile: Callable[[], Any]) -> str:
    """Read `name`; then, while the server is stopped, do `meanwhile` and rewrite the
    file, which only a re-check can report: that notice's diff."""
    path = make(server.root / name, "before\n")
    await server.read(name)
    await server.sentinel()  # the creation of the file is looked at: no notice can come of it
    with server.paused():
        meanwhile()
        path.write_text("while nobody watched\n")
    [pushed] = await server.notice(name)
    return str(pushed["diff"])


async def still_notified(server: Watched, name: str) -> None:
    """A second write to `name` (read, reported once) is reported too: it is watched."""
    (server.root / name).write_text("after\n")
    await server.notice(name, count=2)


# --- notices --------------------------------------------------------------------------------


@pytest.mark.ci_required
async def test_an_external_write_is_one_notice(server: Watched, workspace: Path) -> None:
    await external_write_once(server, "src/app.py")
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
    async with serving(workspace, WATCHMAN, env=service.env) as w:
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


# --- auto -----------------------------------------------------------------------------------


@pytest.mark.ci_required
async def test_auto_uses_watchman_when_it_already_watches_the_workspace(
    workspace: Path, service: PrivateWatchman
) -> None:
    service.command("watch-project", str(workspace))
    make(workspace / "a.txt", "1\n")
    async with serving(workspace, env=service.env) as w:
        await backend_is(w, "watchman")
        assert "+2" in (await w.change("a.txt", "2\n"))["diff"]


@pytest.mark.ci_required
async def test_auto_uses_inotify_when_watchman_does_not_watch_a_small_workspace(
    workspace: Path, service: PrivateWatchman
) -> None:
    make(workspace / "a.txt", "1\n")
    async with serving(workspace, env=service.env) as w:
        watcher = await backend_is(w, "inotify")
        assert watcher["fallback_active"] is False
        await w.change("a.txt", "2\n")
        assert service.watches() == []  # auto started no watch


@pytest.mark.ci_required
async def test_watcher_inotify_leaves_watchman_alone(
    workspace: Path, service: PrivateWatchman
) -> None:
    service.command("watch-project", str(workspace))  # `auto` would use this watch
    async with serving(workspace, {"watcher": "inotify"}, env=service.env) as w:
        watcher = await backend_is(w, "inotify")
        assert watcher["fallback_reason"] is None
        assert subscribers(service, workspace) == []


@pytest.mark.ci_required
async def test_auto_hands_a_big_workspace_to_watchman(
    workspace: Path, service: PrivateWatchman
) -> None:
    for i in range(10_001):  # one more folder than the inotify walk may pass
        (workspace / f"d{i // 100}" / f"e{i}").mkdir(parents=True)
    make(workspace / "d0" / "e0" / "a.txt", "1\n")
    async with serving(workspace, env=service.env) as w:
        watcher = await backend_is(w, "watchman")
        assert watcher["fallback_active"] is False  # not a step down
        assert shown_warnings(w.client, "Watchman") == []
        assert service.watches() == [str(workspace)]
        await w.change("d0/e0/a.txt", "2\n")


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
    async with serving(workspace, WATCHMAN, env=env) as w:
        watcher = await backend_is(w, "inotify")
        assert watcher["fallback_active"] is True
        assert "Watchman" in watcher["fallback_reason"]
        await w.change("a.txt", "2\n")
        assert "inotify instead" in await warned_once(w, "Watchman")


@pytest.mark.ci_required
async def test_watchman_killed_mid_session_falls_back_and_rechecks(
    server: Watched, service: PrivateWatchman
) -> None:
    diff = await changed_unseen(server, "a.txt", service.kill)
    assert "+while nobody watched" in diff
    watcher = await backend_is(server, "inotify")
    assert watcher["fallback_active"] is True
    await still_notified(server, "a.txt")  # inotify watches now
    assert "inotify instead" in await warned_once(server, "Watchman")


@pytest.mark.ci_required
async def test_a_watch_new_to_watchman_rechecks_the_read_files(
    server: Watched, workspace: Path, service: PrivateWatchman
) -> None:
    # Someone removes the watch; readkeeper (watcher=watchman) watches the root again,
    # but the new watch's clock cannot say what changed before it: a re-check does.
    diff = await changed_unseen(
        server, "a.txt", lambda: service.command("watch-del", str(workspace))
    )
    assert "+while nobody watched" in diff
    watcher = await backend_is(server, "watchman")
    assert watcher["fresh_instances"] == 1, watcher
    assert watcher["fallback_active"] is False
    assert service.watches() == [str(workspace)]
    await still_notified(server, "a.txt")  # the new subscription reports changes
    assert shown_warnings(server.client, "Watchman") == []


@pytest.mark.ci_required
async def test_shutdown_ends_the_subscription_and_keeps_the_watch(
    workspace: Path, service: PrivateWatchman
) -> None:
    async with serving(workspace, WATCHMAN, env=service.env) as w:
        await backend_is(w, "watchman")
        assert "rk-watchman" in os_thread_names(w.pid)
        assert subscribers(service, workspace) == ["readkeeper"]
        await w.exit_after(
            (lambda: "rk-watchman" not in os_thread_names(w.pid), "the thread to end"),
            (lambda: not subscribers(service, workspace), "the subscription to end"),
        )
    assert service.watches() == [str(workspace)]  # others may use it: never removed
