"""Every whole-number setting at a hostile value, from every LSP source at once
(initializationOptions, trusted or not, then workspace/didChangeConfiguration): the real
server keeps reading, telling changes and answering attachments, its watcher says it
watches, and each value outside its range is named in a warning (attack15 f2: a poll
interval of 1e13 ms ended the watcher's worker and `stats` still said "watching")."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from raw_lsp import RawServer

from helpers import wait_until
from readkeeper.settings import SETTINGS

NUMBERS = [s.name for s in SETTINGS if s.minimum is not None]
# A debounce held at its most (10 s) still tells the change well within this.
NOTICE_DEADLINE_S = 60.0


class Server(RawServer):
    """A server whose requests ids need not be invented by each step."""

    next_id = 100

    def ask(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        reply = self.request(self.next_id, method, params)
        assert "result" in reply, (method, reply, self.stderr)
        result: dict[str, Any] = reply["result"]
        return result

    def watcher(self) -> dict[str, Any]:
        status: dict[str, Any] = self.ask("readkeeper/stats", {})["watcher"]
        return status


@pytest.mark.parametrize(
    ("value", "trusted"),
    [
        (0, True),
        (-1, False),
        (2**31, True),
        (2**63, False),
        (10**13, False),  # the attack, as sent
        (1e308, True),
        (math.nan, False),
        (math.inf, True),
        ("lots", True),
        ([1], False),
        (True, True),
    ],
    ids=repr,
)
def test_a_hostile_number_in_every_setting_leaves_the_server_working(
    workspace: Path, value: Any, trusted: bool
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("one\ntwo\nthree\n")
    hostile = dict.fromkeys(NUMBERS, value)
    server = Server()
    try:
        server.initialize(workspace, initializationOptions={**hostile, "trusted": trusted})
        server.notify("workspace/didChangeConfiguration", {"settings": {"readkeeper": hostile}})
        wait_until(lambda: server.watcher()["state"] == "watching", "the watcher to watch")
        read = server.ask("readkeeper/read", {"file_path": "notes.txt", "force": True})
        assert read["file"]["num_lines"] == 3
        notes.write_text("one\ntwo\nthree\nfour\n")
        wait_until(
            lambda: server.ask("readkeeper/changes", {})["changes"],
            "a change notice for notes.txt",
            NOTICE_DEADLINE_S,
        )
        assert "used_tokens" in server.ask("readkeeper/attachments", {})
        status = server.watcher()
        assert (status["state"], status["failure"]) == ("watching", None)
        assert "Traceback" not in server.stderr
        if value in (2**63, 10**13, 1e308, -1, 0):
            shown = "\n".join(server.shown_messages())
            assert "readkeeper.watch_poll_interval_ms" in shown
            assert "outside its range" in shown
    finally:
        server.close()


@pytest.mark.parametrize("trusted", [True, False])
def test_a_workspace_s_poll_interval_never_leaves_the_watcher_blind_for_long(
    workspace: Path, trusted: bool
) -> None:
    """An untrusted workspace's settings may make the watcher poll (`watch_force_polling`)
    and, a longer interval being tighter there (less work), ask for an hour between
    looks: a change would go untold for an hour. A poll interval is held at 10 s from
    every source, so the change is told well within the deadline."""
    notes = workspace / "notes.txt"
    notes.write_text("one\n")
    hour = {"watch_force_polling": True, "watch_poll_interval_ms": 3_600_000}
    server = Server()
    try:
        server.initialize(workspace, initializationOptions={**hour, "trusted": trusted})
        server.notify("workspace/didChangeConfiguration", {"settings": {"readkeeper": hour}})
        wait_until(lambda: server.watcher()["state"] == "polling", "the watcher to poll")
        server.ask("readkeeper/read", {"file_path": "notes.txt"})
        notes.write_text("one\ntwo\n")
        wait_until(
            lambda: server.ask("readkeeper/changes", {})["changes"],
            "a change notice for notes.txt",
            NOTICE_DEADLINE_S,
        )
        assert "outside its range 1 to 10,000" in server.stderr, server.stderr
    finally:
        server.close()
