"""Every front end says a setting it could not take the same way: `readkeeper mcp` on
stderr at its start (as `serve` and the CLI do), and `stats` carries the current
warnings on every front end. A number is ASCII digits only: "٣", a fullwidth digit or
"5_0" is not what a person setting a limit means, so it is refused with the same
warning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import warm_server
from mcp import Client, StdioServerParameters

from conftest import start_session
from mcp_helpers import call, mcp_env, private_runtime_dir, stdio_client
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.setting_values import whole_number
from readkeeper.settings import resolve_settings


@pytest.mark.parametrize("raw", ["٣", "\uff17", "5_0", "1e3", "", "+"])
def test_only_ascii_digits_make_a_number(raw: str) -> None:
    with pytest.raises(ValueError, match="whole number"):
        whole_number(raw)


@pytest.mark.parametrize(("raw", "value"), [("42", 42), (" 7 ", 7), ("-3", -3), ("+5", 5)])
def test_ascii_digits_are_taken(raw: str, value: int) -> None:
    assert whole_number(raw) == value


def test_a_unicode_digit_setting_is_refused_with_a_warning() -> None:
    settings, warnings = resolve_settings(None, env={"READKEEPER_MAX_TOKENS": "٣٠٠٠"})
    assert settings.max_tokens == resolve_settings(None, env={})[0].max_tokens
    assert any("READKEEPER_MAX_TOKENS" in w for w in warnings)


def test_stats_carries_the_current_settings_warnings(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("READKEEPER_DEFAULT_LIMIT", "0")
    core = Readkeeper(roots=[str(workspace)])
    try:
        said = calls.call(core, "stats", {})["settings_warnings"]
        assert any("READKEEPER_DEFAULT_LIMIT" in w for w in said)
        monkeypatch.delenv("READKEEPER_DEFAULT_LIMIT")
        core.configure(None)
        assert calls.call(core, "stats", {})["settings_warnings"] == []
    finally:
        core.close()


BAD = {
    "READKEEPER_DEFAULT_LIMIT": "0",
    "READKEEPER_WATCH_DEBOUNCE_MS": "99999999",
    "READKEEPER_TOKEN_ENCODING": "nope",
    "READKEEPER_LINE_NUMBERS": "sideways",
}


def test_mcp_says_settings_warnings_on_stderr_at_its_start(workspace: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "readkeeper", "mcp", "--standalone", "--root", str(workspace)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env=mcp_env(private_runtime_dir(), **BAD),
    )
    for name in BAD:
        assert name in done.stderr, name


async def test_mcp_stats_carries_the_settings_warnings(workspace: Path) -> None:
    env = mcp_env(private_runtime_dir(), **BAD)
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        said = (await call(client, "stats"))["settings_warnings"]
    for name in BAD:
        assert any(name in w for w in said), name


async def test_lsp_stats_carries_the_settings_warnings(workspace: Path) -> None:
    env = mcp_env(private_runtime_dir(), READKEEPER_DEFAULT_LIMIT="0")
    session = await start_session(workspace, settings={"lineNumbers": "sideways"}, env=env)
    try:
        said = (await session.client.request("readkeeper/stats", {}))["settings_warnings"]
    finally:
        await session.client.close()
    assert any("READKEEPER_DEFAULT_LIMIT" in w for w in said)
    assert any("line_numbers" in w for w in said)


def _logged(messages: list[types.LoggingMessageNotificationParams]) -> list[str]:
    return [str(m.data) for m in messages if m.level == "warning"]


# The client's own notice that logging/setLevel is deprecated at 2026-07-28.
QUIET = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")


@QUIET
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_mcp_sends_the_settings_warnings_to_a_client_that_reads_logs(
    workspace: Path, mode: str
) -> None:
    """A client that reads the server's log (`logging/setLevel` before 2026-07-28, the
    log level opted into on each request since) is sent each warning once, at
    `warning`, as `notifications/message`."""
    messages: list[types.LoggingMessageNotificationParams] = []

    async def logged(params: types.LoggingMessageNotificationParams) -> None:
        messages.append(params)

    env = mcp_env(private_runtime_dir(), **BAD)
    params = StdioServerParameters(
        command=sys.executable,
        args=warm_server.command("mcp", "--root", str(workspace), "--standalone")[1:],
        env=env,
    )
    level: Any = "info" if mode == "auto" else None
    async with Client(
        params, logging_callback=logged, log_level=level, mode=mode, read_timeout_seconds=60
    ) as client:
        if mode == "legacy":
            await client.set_logging_level("info")
        await call(client, "stats")
        await call(client, "stats")
        if mode == "legacy":
            await client.set_logging_level("debug")
            await call(client, "stats")
    said = _logged(messages)
    for name in BAD:
        assert sum(name in w for w in said) == 1, (name, said)
    assert len(said) == len(BAD), said


@QUIET
async def test_mcp_sends_no_settings_warnings_to_a_client_that_reads_no_logs(
    workspace: Path,
) -> None:
    messages: list[types.LoggingMessageNotificationParams] = []

    async def logged(params: types.LoggingMessageNotificationParams) -> None:
        messages.append(params)

    env = mcp_env(private_runtime_dir(), **BAD)
    params = StdioServerParameters(
        command=sys.executable,
        args=warm_server.command("mcp", "--root", str(workspace), "--standalone")[1:],
        env=env,
    )
    async with Client(params, logging_callback=logged, read_timeout_seconds=60) as client:
        await call(client, "stats")
    async with Client(
        params, logging_callback=logged, mode="legacy", read_timeout_seconds=60
    ) as client:
        await client.set_logging_level("error")  # warnings are below what it reads
        await call(client, "stats")
    assert messages == []
